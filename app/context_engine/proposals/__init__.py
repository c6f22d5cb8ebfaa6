"""Proposals: writes that needed a person when none could be asked, kept for review (S15.2)."""
