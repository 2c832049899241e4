"""The dialogs that work through the backend: each has the host, a name for tests and
style sheets, and a title; a dialog that saves values keeps what it opened with, so OK
without a change saves nothing."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QWidget

from app.backend_host import BackendHost
from core.i18n import tr
from core.protocol.packets import PacketType


class HostDialog(QDialog):
    def __init__(self, host: BackendHost, name: str, title: str,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.setWindowTitle(title)
        self.host = host


class SavingDialog(HostDialog):
    """OK sends `changes()` as `packet`, and closes once the backend kept them; a refusal
    is said by `refused()` and the dialog stays open with what the person typed."""

    saved = False  # something was changed and saved (OK without a change saves nothing)
    packet: PacketType
    buttons: QDialogButtonBox

    def __init__(self, host: BackendHost, original: dict[str, Any], name: str, title: str,
                 parent: QWidget | None = None) -> None:
        super().__init__(host, name, title, parent)
        self.original = dict(original)

    def changes(self) -> dict[str, Any]:
        raise NotImplementedError

    def refused(self, words: str) -> None:
        raise NotImplementedError

    def kept(self) -> None:
        """After the backend kept the changes, before the dialog closes."""

    def save(self) -> None:
        changes = self.changes()
        if not changes:
            self.accept()
            return
        self.buttons.setEnabled(False)
        self.host.send(self.packet, changes, self._saved)

    def _saved(self, answer: dict[str, Any]) -> None:
        self.buttons.setEnabled(True)
        if not answer["success"]:
            self.refused(tr("Not saved: {error}", error=answer["error"]))
            return
        self.saved = True
        self.kept()
        self.accept()
