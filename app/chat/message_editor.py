"""Editing one of your messages where it stands in the conversation: its text in a box on
the message itself, with Cancel and Send (Esc cancels, Enter sends, Shift+Enter breaks the
line), and a line saying what sending does. Nothing changes until Send."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QKeyEvent, QPalette
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.i18n import tr

MIN_LINES, MAX_LINES = 3, 8


class _EditText(QPlainTextEdit):
    send = Signal()
    cancel = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and \
                not event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            self.send.emit()
            return
        if key == Qt.Key.Key_Escape:
            self.cancel.emit()
            return
        super().keyPressEvent(event)


class MessageEditor(QFrame):
    sent = Signal(str)
    cancelled = Signal()

    def __init__(self, text: str, later: int, parent: QWidget | None = None) -> None:
        """`later`: how many exchanges come after this message (sending replaces them)."""
        super().__init__(parent)
        self.setObjectName("messageEditor")
        self.setAutoFillBackground(True)
        self.setBackgroundRole(QPalette.ColorRole.Base)
        self.text = _EditText(text)
        self.text.setObjectName("messageEditText")
        self.text.setAccessibleName(tr("Edit your message"))
        self.text.setTabChangesFocus(True)
        self.text.send.connect(self._send)
        self.text.cancel.connect(self.cancelled)
        self.note = QLabel(tr("Sending makes a new version of this exchange. The one shown "
                              "now stays one click away (‹ ›); what its reply wrote to the "
                              "memory is taken back until you go back to it.") if not later
                           else tr("Sending makes a new version from here. This exchange and "
                                   "the {count} after it stay one click away (‹ ›); what "
                                   "their replies wrote to the memory is taken back until you "
                                   "go back to them.", count=later))
        self.note.setWordWrap(True)
        self.note.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.cancel = QPushButton(tr("Cancel"))
        self.cancel.setObjectName("editCancel")
        self.cancel.setToolTip("Esc")  # a key's name
        self.cancel.clicked.connect(self.cancelled)
        self.send = QPushButton(tr("Send"))
        self.send.setObjectName("editSend")
        self.send.setToolTip("Enter")
        self.send.setDefault(True)
        self.send.clicked.connect(self._send)
        self.text.textChanged.connect(
            lambda: self.send.setEnabled(bool(self.text.toPlainText().strip())))
        # the note has the row's whole width: beside the buttons, with the tool trace open,
        # it was a 130 px column cut off after two lines
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.cancel)
        buttons.addWidget(self.send)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.note)
        layout.addLayout(buttons)
        self.text.moveCursor(self.text.textCursor().MoveOperation.End)

    def height_for(self, width: int) -> int:
        """The height it asks of its row: its text's lines (3 to 8), the note, the buttons."""
        line = self.text.fontMetrics().lineSpacing()
        columns = max(1, width // max(1, self.text.fontMetrics().averageCharWidth()))
        lines = sum(1 + len(part) // columns for part in self.text.toPlainText().split("\n"))
        lines = min(max(lines, MIN_LINES), MAX_LINES)
        text = lines * line + 2 * self.text.frameWidth() + 2 * round(
            self.text.document().documentMargin())
        self.note.setFixedWidth(max(1, width))
        note = self.note.heightForWidth(width) if self.note.hasHeightForWidth() else line
        self.note.setMinimumHeight(note)  # whole, whatever the font: the text box gives way
        return text + note + self.send.sizeHint().height() + 2 * self.layout().spacing()

    def sizeHint(self) -> QSize:
        return QSize(super().sizeHint().width(), self.height_for(self.width() or 400))

    def _send(self) -> None:
        text = self.text.toPlainText().strip()
        if text:
            self.sent.emit(text)
