"""One line of text asked for (a new title, a new name), in a box wide enough for its
title and for what is typed: Qt's QInputDialog sized itself to its label, cut "Rename
conversation" to "Renam… ation", and put its own minimum back when shown."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QLineEdit, QVBoxLayout, QWidget

from app.looks.sizes import chars, natural_size

WIDE = 48  # characters the box holds without scrolling


class TextDialog(QDialog):
    def __init__(self, parent: QWidget | None, title: str, label: str, text: str) -> None:
        super().__init__(parent)
        self.setObjectName("textDialog")
        self.setWindowTitle(title)
        self.label = QLabel(label)
        self.field = QLineEdit(text)
        self.field.setAccessibleName(label.rstrip(":：").replace("&", ""))
        self.label.setBuddy(self.field)
        self.field.selectAll()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.label)
        layout.addWidget(self.field)
        layout.addWidget(buttons)
        metrics = self.fontMetrics()
        self.setMinimumWidth(max(chars(metrics, WIDE),
                                 metrics.horizontalAdvance(title) + 8 * metrics.height()))
        natural_size(self)


def ask_text(parent: QWidget, title: str, label: str, text: str = "") -> tuple[str, bool]:
    """What the person typed and whether they pressed OK."""
    dialog = TextDialog(parent, title, label, text)
    ok = bool(dialog.exec())
    return dialog.field.text(), ok
