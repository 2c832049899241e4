"""One line of text asked for (a new title, a new name), in a box wide enough for its
title and for what is typed: Qt's own sizes it to the label and cut "Rename conversation"
to "Renam… ation"."""

from __future__ import annotations

from PySide6.QtWidgets import QInputDialog, QWidget

from app.sizes import chars

WIDE = 48  # characters the box holds without scrolling


def ask_text(parent: QWidget, title: str, label: str, text: str = "") -> tuple[str, bool]:
    """What the person typed and whether they pressed OK."""
    dialog = QInputDialog(parent)
    dialog.setWindowTitle(title)
    dialog.setLabelText(label)
    dialog.setTextValue(text)
    metrics = dialog.fontMetrics()
    dialog.setMinimumWidth(max(chars(metrics, WIDE), metrics.horizontalAdvance(title)
                               + 8 * metrics.height()))
    ok = bool(dialog.exec())
    return dialog.textValue(), ok
