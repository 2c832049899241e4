"""The central chat pane: a notice strip for what needs attention, the conversation, and the
message box with its Send and Stop buttons."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.chat.approval import ApprovalCard
from app.chat.input_box import InputBox
from app.chat.model import ChatModel
from app.chat.view import ChatView
from core import i18n
from core.i18n import N_, tr


class Notice(QFrame):
    """A strip above the conversation for things the person must act on (no key yet, a
    config file set aside), with one button that fixes it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("notice")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setBackgroundRole(QPalette.ColorRole.AlternateBase)
        self.setAutoFillBackground(True)
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setTextFormat(Qt.TextFormat.PlainText)
        self.button = QPushButton()
        self.other = QPushButton()  # a second choice, where there is one
        layout = QHBoxLayout(self)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.button, 0, Qt.AlignmentFlag.AlignVCenter)
        layout.addWidget(self.other, 0, Qt.AlignmentFlag.AlignVCenter)
        self.hide()

    def show_message(self, text: str, button: str | None = None,
                     other: str | None = None) -> None:
        self.text.setText(text)
        self.button.setVisible(bool(button))
        self.button.setText(button or "")
        self.other.setVisible(bool(other))
        self.other.setText(other or "")
        self.setAccessibleDescription(text)
        self.show()


FIRST_HINT = N_("Say hello. What you tell the assistant that matters, it keeps in its memory "
                "graph; open the tool trace (Ctrl+T) to watch.")


class ChatPane(QWidget):
    send_requested = Signal(str)

    def __init__(self, model: ChatModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.notice = Notice()
        self.approvals = ApprovalCard()
        self.view = ChatView(model)
        self.empty = QLabel(i18n.tr(FIRST_HINT))
        self.empty.setObjectName("emptyHint")
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.input = InputBox()
        self.send_button = QPushButton(tr("Send"))
        self.send_button.setAccessibleName(tr("Send message"))
        self.stop_button = QPushButton(tr("Stop"))
        self.stop_button.setAccessibleName(tr("Stop the reply"))
        self.stop_button.hide()
        self.send_button.clicked.connect(self.send_typed)
        self.input.submitted.connect(self.send_requested)

        buttons = QVBoxLayout()
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.stop_button)
        buttons.addStretch()
        bottom = QHBoxLayout()
        bottom.addWidget(self.input, 1)
        bottom.addLayout(buttons)
        layout = QVBoxLayout(self)
        spacing = self.fontMetrics().height() // 2
        layout.setContentsMargins(spacing, spacing, spacing, spacing)
        layout.addWidget(self.notice)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.empty, 1)
        layout.addWidget(self.approvals)
        layout.addLayout(bottom)
        model.modelReset.connect(self._show_empty_hint)
        model.rowsInserted.connect(self._show_empty_hint)
        self._show_empty_hint()

    def send_typed(self) -> None:
        """Send what is in the message box (the Send button, Ctrl+Return)."""
        text = self.input.toPlainText().strip()
        if text:
            self.send_requested.emit(text)

    def set_remembered(self, remembered: dict | None) -> None:
        """The empty state of a new chat says what the assistant already remembers: every
        conversation shares the memory."""
        facts = (remembered or {}).get("facts") or []
        persona = (remembered or {}).get("persona") or ""
        if not facts and not persona:
            self.empty.setText(i18n.tr(FIRST_HINT))
            return
        lines = [tr("A new chat. The assistant remembers you in every conversation:"), ""]
        lines += [f"• {fact}" for fact in facts]
        if persona:
            lines += ["", tr("Its persona: {persona}", persona=persona)]
        self.empty.setText("\n".join(lines))

    def _show_empty_hint(self) -> None:
        empty = self.view.model().rowCount() == 0
        self.empty.setVisible(empty)
        self.view.setVisible(not empty)

    def set_running(self, running: bool) -> None:
        self.send_button.setVisible(not running)
        self.stop_button.setVisible(running)
