""""Chat on this computer": what the app downloads, how big and how long, and one button
that fetches the recommended model, starts it and chats with it, no account or key.
Closing the dialog stops a download it started (what came is kept for next time)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from app.backend_host import BackendHost
from app.dialogs.host_dialog import HostDialog
from app.dialogs.local_models import LocalModels
from app.dialogs.settings import Scrolling
from app.looks.sizes import chars, fit_on_screen
from core.endpoint import profiles
from core.i18n import tr
from core.models import local
from core.protocol.packets import PacketType

TIMEOUTS = dict(zip(("first_token_timeout", "request_timeout", "turn_timeout"),
                    profiles.LOCAL_TIMEOUTS, strict=True))


class LocalStartDialog(HostDialog):
    saved = False  # a model on this computer was chosen and its server started
    config_saved = False  # the settings name it now (whether or not it started)

    def __init__(self, host: BackendHost, parent: QWidget | None = None) -> None:
        super().__init__(host, "localStartDialog", tr("Chat on this computer"), parent)
        self.chosen: str | None = None
        intro = QLabel(tr(
            "TrulyMEM downloads a model once and runs it itself: no account, no key, and "
            "nothing you say leaves this computer. A small model knows less than a cloud "
            "service; Settings switches at any time."))
        intro.setWordWrap(True)
        self.models = LocalModels(host, starting=True)
        self.models.use.connect(self.use)
        self.models.listed.connect(lambda: QTimer.singleShot(0, self._fit))
        self.note = QLabel()
        self.note.setObjectName("localStartNote")
        self.note.setWordWrap(True)
        self.models.said.connect(self.note.setText)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.buttons.rejected.connect(self.reject)
        self.buttons.button(QDialogButtonBox.StandardButton.Close).setToolTip(tr(
            "Closing stops a download begun here; what came is kept for next time."))
        page = QWidget()
        inside = QVBoxLayout(page)
        inside.setContentsMargins(0, 0, 0, 0)
        inside.addWidget(intro)
        inside.addWidget(self.models)
        inside.addWidget(self.note)
        inside.addStretch(1)
        self.page = Scrolling(page)  # a short screen scrolls the rows, not the buttons
        layout = QVBoxLayout(self)
        layout.addWidget(self.page, 1)
        layout.addWidget(self.buttons)
        self.setMinimumWidth(chars(self, 72))

    def showEvent(self, event) -> None:
        super().showEvent(event)
        fit_on_screen(self)

    def _fit(self) -> None:
        if self.isVisible():
            self.page.updateGeometry()  # the rows came: the page asks for their height
            self.layout().activate()
            self.adjustSize()
            parent = self.parentWidget()
            if parent is not None:  # grown: centred again over the window
                self.move(parent.geometry().center() - self.rect().center())
            fit_on_screen(self)

    def use(self, model_id: str) -> None:
        """Chat with `model_id` from now on: saved, and its server started by the backend
        (a few seconds while the model loads)."""
        self.chosen = model_id
        self.note.setText(tr("Starting the model…"))
        self.buttons.setEnabled(False)
        self.host.send(PacketType.SET_CONFIG, {"base_url": local.LOCAL, "model": model_id,
                                               **TIMEOUTS}, self._set)

    def _set(self, answer: dict[str, Any]) -> None:
        self.buttons.setEnabled(True)
        if not answer["success"]:
            self.note.setText(tr("Not started: {error}", error=answer["error"]))
            return
        self.config_saved = True
        self.host.send(PacketType.GET_STATUS, None, self._started)

    def _started(self, answer: dict[str, Any]) -> None:
        problem = answer.get("local_problem") if answer["success"] else answer["error"]
        if problem:
            self.note.setText(tr("The model does not run: {problem}", problem=problem))
            return
        self.saved = True
        self.accept()

    def reject(self) -> None:
        for model_id in self.models.fetched_here:
            if self.models.rows[model_id].row["fetching"]:
                self.host.send(PacketType.MODEL_CANCEL, {"model": model_id})
        super().reject()
