"""Settings, the tool limits and the quick model switcher: each opens with what the
backend holds now and says `changed` once something was saved."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, QPoint, Signal, SignalInstance
from PySide6.QtWidgets import QMenu, QWidget

from app.backend_host import BackendHost, shown_or_warned
from app.dialogs.limits import LimitsDialog
from app.dialogs.local_start import LocalStartDialog
from app.dialogs.settings import LOCAL_PRESET, SettingsDialog
from app.looks.toast import CONFIRM_MSECS
from app.status.status_parts import synced_words
from core.i18n import tr
from core.protocol.packets import PacketType


class SettingsActions(QObject):
    said = Signal(str, int)  # a confirmation to show for that many ms
    changed = Signal()  # settings were saved: read the status and the config again
    limits_changed = Signal()

    def __init__(self, host: BackendHost, window: QWidget, anchor: QWidget) -> None:
        """`anchor` is the status part the model menu opens over."""
        super().__init__(window)
        self.host, self.window, self.anchor = host, window, anchor
        self.model_menu: QMenu | None = None

    def open_settings(self) -> None:
        self._open(None)

    def open_local(self) -> None:
        """"Chat on this computer": a model fetched, started and chatted with, no key."""
        dialog = LocalStartDialog(self.host, self.window)
        if dialog.exec() and dialog.saved:
            self.said.emit(tr("Chatting on this computer with {model}",
                              model=dialog.chosen), CONFIRM_MSECS)
        if dialog.config_saved:  # even when its model did not start: the notice says why
            self.changed.emit()

    def open_sync(self) -> None:
        """Settings on its Sync page (the status bar's sync part, File › Sync…)."""
        self._open("sync")

    def sync_now(self) -> None:
        self.host.send(PacketType.SYNC_NOW, {}, self._synced)

    def _synced(self, answer: dict[str, Any]) -> None:
        if not answer["success"]:
            self.said.emit(tr("Sync failed: {error}", error=answer["error"]), CONFIRM_MSECS)
            return
        self.said.emit(synced_words(answer["data"]), CONFIRM_MSECS)

    def _open(self, page: str | None) -> None:
        """Settings, on `page` ("sync") when given."""
        self.host.send(PacketType.GET_CONFIG, None, shown_or_warned(
            self.window, tr("Settings"), lambda config: self._saved(
                self._settings(config, page), tr("Settings saved"), self.changed)))

    def _settings(self, config: dict[str, Any], page: str | None) -> SettingsDialog:
        dialog = SettingsDialog(self.host, config, self.window)
        if page == "sync":
            dialog.tabs.setCurrentIndex(dialog.tabs.count() - 1)
        elif page == "local":
            dialog.choose_preset(LOCAL_PRESET)
        return dialog


    def open_limits(self) -> None:
        self.host.send(PacketType.GET_TOOL_LIMITS, None, shown_or_warned(
            self.window, tr("Tool limits"), lambda limits: self._saved(
                LimitsDialog(self.host, limits, self.window), tr("Tool limits saved"),
                self.limits_changed)))

    def _saved(self, dialog: SettingsDialog | LimitsDialog, words: str,
               changed: SignalInstance) -> None:
        """Every save confirms the same way: a toast that goes after a few seconds (the
        window's `notify`), never a status-bar line that stays."""
        if dialog.exec() and dialog.saved:
            self.said.emit(words, CONFIRM_MSECS)
            changed.emit()

    def switch_model(self) -> None:
        """The quick model switcher: the endpoint's models in a menu over the status bar."""
        self.host.send(PacketType.LIST_MODELS, {}, self._show_model_menu)

    def _show_model_menu(self, answer: dict[str, Any]) -> None:
        if not answer["success"]:
            self.said.emit(tr("Models not listed: {error}", error=answer["error"]), 8000)
            return
        self.model_menu = menu = QMenu(self.window)
        current = answer["data"]["current"]
        for name in answer["data"]["models"]:
            action = menu.addAction(name)
            action.setCheckable(True)
            action.setChecked(name == current)
            action.triggered.connect(lambda _checked=False, chosen=name: self.use_model(chosen))
        if menu.isEmpty():
            menu.addAction(tr("The endpoint lists no models")).setEnabled(False)
        corner = self.anchor.mapToGlobal(self.anchor.rect().topLeft())
        menu.popup(corner - QPoint(0, menu.sizeHint().height()))

    def close_menu(self) -> None:
        """The window closes: its menu must not stay on screen."""
        if self.model_menu is not None:
            self.model_menu.close()

    def use_model(self, name: str) -> None:
        def done(answer: dict[str, Any]) -> None:
            if not answer["success"]:
                self.said.emit(tr("Model not changed: {error}", error=answer["error"]), 8000)
                return
            self.said.emit(tr("The next message goes to {model}", model=name), 6000)
            self.changed.emit()

        self.host.send(PacketType.SET_CONFIG, {"model": name}, done)
