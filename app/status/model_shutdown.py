"""A model that is going away, as the endpoint announces it (`core.endpoint.shutdown`).

Settings shows the date under the model field ("Shuts down on 14 Jan 2027") whenever the
endpoint gave one for the model typed or picked there. The status bar says it once, per
model and date, when the day is at most four weeks away (or has passed), and a click on it
opens the model menu. What was said is kept in the window's settings, so it is not said
again at every start. The window asks after the first reply of a session (the endpoint
answered, so the listing will not hold up the first message) and after settings change.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import date
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QSettings, Qt, Signal, SignalInstance
from PySide6.QtWidgets import QLabel, QLineEdit, QStatusBar

from app.backend_host import BackendHost
from app.looks.notes import quiet
from app.status.status_parts import StatusPart
from core.endpoint.shutdown import days_left, notice_due
from core.i18n import N_, tr
from core.protocol.packets import PacketType

if TYPE_CHECKING:  # the settings dialog imports this module
    from app.controllers.settings_actions import SettingsActions

MONTHS = (N_("Jan"), N_("Feb"), N_("Mar"), N_("Apr"), N_("May"), N_("Jun"), N_("Jul"),
          N_("Aug"), N_("Sep"), N_("Oct"), N_("Nov"), N_("Dec"))
SAID_KEY = "model_shutdowns_said"  # ["model|YYYY-MM-DD", …] in the window's settings


def spoken_day(shutdown: str) -> str:
    """"2027-01-14" as "14 Jan 2027" (in Chinese 2027年1月14日)."""
    day = date.fromisoformat(shutdown)
    return tr("{day} {month} {year}", day=day.day, month=tr(MONTHS[day.month - 1]),
              year=day.year)


def shutdown_words(shutdown: str, today: date) -> str:
    if days_left(shutdown, today) < 0:
        return tr("Shut down on {day}", day=spoken_day(shutdown))
    return tr("Shuts down on {day}", day=spoken_day(shutdown))


class ShutdownNote(QLabel):
    """Under the Settings model field: the shutdown date of the model named there, if the
    endpoint's list gave one; nothing otherwise."""

    def __init__(self, model: QLineEdit, today: Callable[[], date] = date.today) -> None:
        super().__init__()
        self.setObjectName("modelShutdown")
        self.setWordWrap(True)
        quiet(self)
        self.model, self.today, self.shutdowns = model, today, {}
        model.textChanged.connect(self.show_for)
        self.hide()

    def set_dates(self, shutdowns: dict[str, str]) -> None:
        self.shutdowns = dict(shutdowns or {})
        self.show_for(self.model.text())

    def show_for(self, name: str) -> None:
        shutdown = self.shutdowns.get(name.strip())
        if shutdown is None:
            self.clear()
            self.hide()
            return
        self.setText(tr("{when}: choose another model from the list",
                        when=shutdown_words(shutdown, self.today())))
        self.setToolTip(tr("The endpoint announces that it will no longer answer to this "
                           "model from {day}.", day=spoken_day(shutdown)))
        self.show()


class ModelNotice(QObject):
    """The status bar's one-time word that the chosen model is going away."""

    checked = Signal()  # the endpoint's answer was read (whether or not it said anything)

    def __init__(self, host: BackendHost, settings: QSettings, bar: QStatusBar,
                 setup: SettingsActions, replied: SignalInstance, *,
                 today: Callable[[], date] = date.today) -> None:
        super().__init__(bar)
        self.host, self.settings, self.setup, self.today = host, settings, setup, today
        self.part = StatusPart()
        self.part.setObjectName("modelShutdown")
        self.part.setCursor(Qt.CursorShape.PointingHandCursor)
        self.part.clicked.connect(self._clicked)
        self.part.hide()
        bar.addWidget(self.part)
        replied.connect(self.check, Qt.ConnectionType.SingleShotConnection)
        setup.changed.connect(self.check)

    def check(self) -> None:
        self.host.send(PacketType.LIST_MODELS, {}, self._listed)

    def _listed(self, answer: dict[str, Any]) -> None:
        self._show(answer)
        self.checked.emit()

    def _show(self, answer: dict[str, Any]) -> None:
        if not answer["success"]:  # no key, no network: the turn says what is wrong
            return
        model = answer["data"].get("current") or ""
        shutdown = (answer["data"].get("shutdowns") or {}).get(model)
        if not notice_due(shutdown, self.today()):
            self.part.hide()  # another model now, or one that stays
            return
        said = self._said()
        if f"{model}|{shutdown}" in said:
            return
        self.settings.setValue(SAID_KEY, json.dumps(sorted({*said, f"{model}|{shutdown}"})))
        gone = days_left(shutdown, self.today()) < 0
        self.part.setText(tr("{model} was shut down on {day}: switch model…", model=model,
                             day=spoken_day(shutdown)) if gone else
                          tr("{model} shuts down on {day}: switch model…", model=model,
                             day=spoken_day(shutdown)))
        self.part.setMinimumWidth(self.part.natural_width())  # said once: all of it
        self.part.setToolTip(tr("The endpoint announces that {model} stops answering on "
                                "{day}. Click to choose another model.", model=model,
                                day=spoken_day(shutdown)))
        self.part.show()

    def _said(self) -> set[str]:
        try:
            said = json.loads(str(self.settings.value(SAID_KEY, "[]")))
        except ValueError:
            return set()
        return {s for s in said if isinstance(s, str)} if isinstance(said, list) else set()

    def _clicked(self) -> None:
        self.part.hide()
        self.setup.switch_model()
