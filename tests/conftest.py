"""Test-wide settings: Qt offscreen before any Qt import."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
