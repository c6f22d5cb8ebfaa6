"""Context Center: the PySide6 desktop app over the context engine."""
