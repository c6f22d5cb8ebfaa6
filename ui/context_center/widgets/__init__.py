"""Widgets: the main window (layout and menus) and one file per tab."""
