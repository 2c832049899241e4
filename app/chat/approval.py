"""The approval card: a call of the assistant's that would remove more memories than one
turn may, waiting in the chat for the person's Allow or Deny.

Nothing has been removed while the card is shown; only Allow runs the call, and only if
it would still remove exactly the memories listed.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase, QPalette
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

LIST_LINES = 4  # the list's height in lines; it scrolls for the rest


class ApprovalCard(QFrame):
    decided = Signal(int, bool)  # approval id, allow

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("approvalCard")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setBackgroundRole(QPalette.ColorRole.AlternateBase)
        self.setAutoFillBackground(True)
        self.pending: list[dict[str, Any]] = []
        self.title = QLabel()
        self.title.setObjectName("approvalTitle")
        self.title.setWordWrap(True)
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.TextFormat.PlainText)
        self.note.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.rows = QPlainTextEdit()
        self.rows.setObjectName("approvalRows")
        self.rows.setAccessibleName("Memories the assistant wants to remove")
        self.rows.setReadOnly(True)
        self.rows.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.rows.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        line = self.rows.fontMetrics().lineSpacing()
        self.rows.setFixedHeight(LIST_LINES * line + 2 * self.rows.frameWidth() + line // 2)
        self.allow = QPushButton("&Allow")
        self.allow.setObjectName("approvalAllow")
        self.allow.setAccessibleName("Allow the removal")
        self.deny = QPushButton("&Deny")
        self.deny.setObjectName("approvalDeny")
        self.deny.setAccessibleName("Deny the removal")
        self.deny.setDefault(True)
        self.position = QLabel()
        self.allow.clicked.connect(lambda: self._decide(True))
        self.deny.clicked.connect(lambda: self._decide(False))

        buttons = QHBoxLayout()
        buttons.addWidget(self.position, 1)
        buttons.addWidget(self.deny)
        buttons.addWidget(self.allow)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.note)
        layout.addWidget(self.rows)
        layout.addLayout(buttons)
        self.hide()

    def set_pending(self, requests: list[dict[str, Any]]) -> None:
        self.pending = list(requests)
        self._show_first()

    def add(self, request: dict[str, Any]) -> None:
        if all(r["id"] != request["id"] for r in self.pending):
            self.pending.append(request)
        self._show_first()

    def remove(self, approval_id: int) -> None:
        self.pending = [r for r in self.pending if r["id"] != approval_id]
        self._show_first()

    def current(self) -> dict[str, Any] | None:
        return self.pending[0] if self.pending else None

    def _show_first(self) -> None:
        request = self.current()
        if request is None:
            self.hide()
            return
        self.title.setText(f"The assistant wants to {request['summary']}.")
        self.note.setText(
            "That is more than one turn may remove on its own, so nothing has been removed "
            f"yet. Allow runs its {request['tool']} call once; Deny drops it.")
        shown = request["preview"]
        more = request["count"] - len(shown)
        self.rows.setPlainText("\n".join(shown) + (f"\n… and {more:,} more" if more > 0 else ""))
        self.position.setText(f"1 of {len(self.pending)} requests" if len(self.pending) > 1
                              else "")
        self.allow.setEnabled(True)
        self.deny.setEnabled(True)
        self.setAccessibleDescription(self.title.text())
        self.show()

    def _decide(self, allow: bool) -> None:
        request = self.current()
        if request is None:
            return
        self.allow.setEnabled(False)
        self.deny.setEnabled(False)
        self.decided.emit(request["id"], allow)
