"""Notes under settings and fields: readable in both themes."""

from __future__ import annotations

from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QLabel


def quiet(label: QLabel) -> None:
    """A note under a setting, in the palette's placeholder grey: a disabled label's grey
    is too faint to read in the dark theme."""
    label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
