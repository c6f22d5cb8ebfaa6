"""Dialogs: confirm-write, fact editor, conflict. All open non-blocking with open()."""
