"""The dialogs that work through the backend: each has the host, a name for tests and
style sheets, and a title; a dialog that saves values keeps what it opened with, so OK
without a change saves nothing."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QDialog, QWidget

from app.backend_host import BackendHost


class HostDialog(QDialog):
    def __init__(self, host: BackendHost, name: str, title: str,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.setWindowTitle(title)
        self.host = host


class SavingDialog(HostDialog):
    saved = False  # something was changed and saved (OK without a change saves nothing)

    def __init__(self, host: BackendHost, original: dict[str, Any], name: str, title: str,
                 parent: QWidget | None = None) -> None:
        super().__init__(host, name, title, parent)
        self.original = dict(original)
