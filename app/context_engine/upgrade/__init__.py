"""Upgrades of old Reasonix data (S5.3 Memory v5 transcripts, S5.4 retired config key)."""
