"""The message box: Enter sends, Shift+Enter breaks the line, Up in an empty box brings back
the last message, Esc asks to stop the running reply. It grows with its text up to a limit."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QPlainTextEdit, QSizePolicy, QWidget

from core.i18n import tr

MAX_LINES = 8


class InputBox(QPlainTextEdit):
    submitted = Signal(str)
    stop_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messageInput")
        self.setAccessibleName(tr("Message"))
        self._placeholders = (tr("Message TrulyMEM (Enter sends, Shift+Enter: new line)"),
                              tr("Message TrulyMEM"))
        self.setPlaceholderText(self._placeholders[0])
        self.setTabChangesFocus(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.sent: list[str] = []
        self.textChanged.connect(self.updateGeometry)

    def sizeHint(self) -> QSize:
        """As tall as its text, measured on the laid-out lines: Chinese falls back to a
        taller font than the Latin line spacing, and two lines of it must still fit."""
        line = self.fontMetrics().lineSpacing()
        text = 0.0
        block = self.document().firstBlock()
        while block.isValid() and text < MAX_LINES * line:
            text += self.blockBoundingRect(block).height()
            block = block.next()
        text = min(max(text, line), MAX_LINES * line * 1.25)
        margins = self.contentsMargins()
        height = text + 2 * self.document().documentMargin() + margins.top() \
            + margins.bottom() + 2
        return QSize(super().sizeHint().width(), round(height))

    def minimumSizeHint(self) -> QSize:
        return self.sizeHint()

    def resizeEvent(self, event) -> None:
        """The keys' hint where it fits on one line, the short one where it would wrap."""
        super().resizeEvent(event)
        room = self.viewport().width() - 2 * self.document().documentMargin()
        full, short = self._placeholders
        self.setPlaceholderText(full if self.fontMetrics().horizontalAdvance(full) <= room
                                else short)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key, modifiers = event.key(), event.modifiers()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if modifiers & Qt.KeyboardModifier.ShiftModifier:
                self.insertPlainText("\n")
            else:
                self._submit()
            return
        if key == Qt.Key.Key_Escape:
            self.stop_requested.emit()
            return
        if key == Qt.Key.Key_Up and not self.toPlainText() and self.sent:
            self.setPlainText(self.sent[-1])
            self.moveCursor(self.textCursor().MoveOperation.End)
            return
        super().keyPressEvent(event)

    def _submit(self) -> None:
        text = self.toPlainText().strip()
        if text:
            self.submitted.emit(text)

    def accept_sent(self, text: str) -> None:
        """Called once the message really went out: clear the box, remember it for Up."""
        self.sent.append(text)
        self.clear()
