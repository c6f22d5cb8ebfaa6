"""Thin Qt item models over immutable snapshots; sorting and filtering happen elsewhere."""
