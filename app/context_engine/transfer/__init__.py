"""Bring memories in from other agents and move whole stores as bundles (SPEC S15.3)."""
