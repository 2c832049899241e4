"""A column of parts, one under another, flush with the page it sits on."""

from __future__ import annotations

from PySide6.QtWidgets import QLayout, QVBoxLayout, QWidget

Part = QWidget | QLayout | tuple[QWidget, int]


def column(*parts: Part) -> QWidget:
    """A widget holding `parts` in order: widgets, layouts, or (widget, stretch)."""
    holder = QWidget()
    layout = QVBoxLayout(holder)
    layout.setContentsMargins(0, 0, 0, 0)
    for part in parts:
        if isinstance(part, tuple):
            layout.addWidget(*part)
        elif isinstance(part, QLayout):
            layout.addLayout(part)
        else:
            layout.addWidget(part)
    return holder
