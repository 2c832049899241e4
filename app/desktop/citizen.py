"""The window as a citizen of the desktop: summoned by a second `trulymem` (show, toggle,
ask), a tray icon where the desktop has a tray, closing to the tray when the person chose
it, and a notification when a long job ends while the person looks elsewhere."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from app.desktop.global_shortcut import GlobalShortcutDialog, in_background
from app.desktop.notifications import Notifier
from app.desktop.shortcut_portal import ShortcutSession
from core.i18n import tr
from resources import resource_path

if TYPE_CHECKING:
    from app.main_window import MainWindow

CLOSE_TO_TRAY = "desktop/close_to_tray"  # in the window's own settings: per installation
PORTAL_SHORTCUT = "desktop/portal_shortcut"  # the desktop's portal keeps a key for us


class Desktop(QObject):
    balloon = Signal(str, str)  # a notification the tray shows (sent from any thread)
    shortcut_pressed = Signal()  # the desktop's global shortcut (from the portal's thread)

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.home = Path(window.settings.fileName()).parent
        self.quitting = False
        self.tray: QSystemTrayIcon | None = None
        self.memory_label = ""  # which memory this is, where two could be told apart
        self.portal: ShortcutSession | None = None
        self.shortcut_pressed.connect(self.toggle)
        self.notifier = Notifier(resource_path("trulymem.svg"), self._tray_can_say)
        self.balloon.connect(self._show_balloon)
        window.installEventFilter(self)

    # -- actions ------------------------------------------------------------------------

    def bind_actions(self) -> None:
        """The close-to-tray choice, in the View menu and the palette (and the tray)."""
        registry = self.window.registry
        self.close_to_tray = registry.bind("view.close_to_tray", self._close_to_tray_chosen,
                                           checkable=True)
        self.close_to_tray.blockSignals(True)
        self.close_to_tray.setChecked(
            self.window.settings.value(CLOSE_TO_TRAY, False, type=bool))
        self.close_to_tray.blockSignals(False)
        registry.bind("app.global_shortcut", self.open_shortcut_dialog)
        self._make_tray()
        if self.window.settings.value(PORTAL_SHORTCUT, False, type=bool):
            session = ShortcutSession(tr("Show or hide TrulyMEM"), self.shortcut_pressed.emit)
            in_background(session.bind, lambda result: self._portal_bound(session, result),
                          self)

    def open_shortcut_dialog(self) -> None:
        self.shortcut_dialog().exec()

    def shortcut_dialog(self) -> GlobalShortcutDialog:
        dialog = GlobalShortcutDialog(self.home, self.window)
        dialog.bound.connect(lambda session: self._portal_bound(session, ""))
        return dialog

    def _portal_bound(self, session: ShortcutSession, result: object) -> None:
        """The portal's session, bound (at start, again, without asking): its presses
        toggle the window. One that failed at start is left: the key is still set in the
        desktop, and the dialog binds it again."""
        if isinstance(result, Exception):
            return
        if self.portal is not None and self.portal is not session:
            self.portal.close()
        session.pressed = self.shortcut_pressed.emit
        self.portal = session
        self.window.settings.setValue(PORTAL_SHORTCUT, True)

    def _close_to_tray_chosen(self) -> None:
        chosen = self.close_to_tray.isChecked()
        self.window.settings.setValue(CLOSE_TO_TRAY, chosen)
        if chosen and self.tray is None:
            self.window.notify(tr("There is no tray on this desktop: closing the window "
                                  "will still quit."), 8000)

    def _make_tray(self) -> None:
        if not QSystemTrayIcon.isSystemTrayAvailable():
            return
        self.tray = QSystemTrayIcon(QIcon(str(resource_path("trulymem.svg"))), self)
        self.tray.setObjectName("trayIcon")
        self.tray.setToolTip("TrulyMEM")
        menu = QMenu(self.window)
        self.show_hide = menu.addAction(tr("Show TrulyMEM"), self.toggle)
        actions = self.window.registry.actions
        menu.addAction(actions["chat.new"].text(), self._new_chat)
        menu.addSeparator()
        menu.addAction(self.close_to_tray)
        menu.addSeparator()
        menu.addAction(tr("Quit TrulyMEM"), self.quit)
        menu.aboutToShow.connect(self._name_show_hide)
        self.tray.setContextMenu(menu)
        self.tray.activated.connect(self._tray_clicked)
        self.tray.show()

    def _name_show_hide(self) -> None:
        label = self.memory_label
        if label:
            self.show_hide.setText(tr("Hide TrulyMEM ({memory})", memory=label)
                                   if self._in_front() else
                                   tr("Show TrulyMEM ({memory})", memory=label))
        else:
            self.show_hide.setText(tr("Hide TrulyMEM") if self._in_front() else
                                   tr("Show TrulyMEM"))

    def name_memory(self, label: str) -> None:
        """Two memories open (two --home folders) are told apart by name: the title bar,
        the tray's tooltip and its menu say which."""
        self.memory_label = label
        self.window.setWindowTitle(f"TrulyMEM — {label}" if label else "TrulyMEM")
        if self.tray is not None:
            self.tray.setToolTip(f"TrulyMEM — {label}" if label else "TrulyMEM")
            self._name_show_hide()

    def _tray_clicked(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (QSystemTrayIcon.ActivationReason.Trigger,
                      QSystemTrayIcon.ActivationReason.DoubleClick):
            self.toggle()

    def _new_chat(self) -> None:
        self.bring_to_front()
        self.window.registry.actions["chat.new"].trigger()

    # -- showing and hiding ---------------------------------------------------------------

    def _in_front(self) -> bool:
        window = self.window
        return window.isVisible() and not window.isMinimized() and window.isActiveWindow()

    def bring_to_front(self) -> None:
        window = self.window
        if window.isMinimized():
            window.setWindowState(window.windowState() & ~Qt.WindowState.WindowMinimized)
        window.show()
        window.raise_()
        window.activateWindow()

    def toggle(self) -> None:
        """Hide the window the person is looking at; otherwise bring it to the front. (A
        window behind others is brought forward, not hidden: that is what the key is for.)"""
        if self._in_front():
            self.window.hide()
        else:
            self.bring_to_front()

    def wished(self, message: dict[str, Any]) -> None:
        """What a second `trulymem` asked for."""
        action = message.get("action")
        if action == "toggle":
            self.toggle()
            return
        self.bring_to_front()
        if action == "ask":
            self.put_in_input(message.get("text") or "")

    def put_in_input(self, text: str) -> None:
        """`trulymem --ask TEXT`: the text in the message box, for the person to send (a
        key pressed by accident must not send anything); a draft there is kept, above it."""
        window = self.window
        window.tabs.setCurrentWidget(window.pane)
        box = window.pane.input
        if text:
            draft = box.toPlainText().rstrip()
            box.setPlainText(f"{draft}\n\n{text}" if draft else text)
            cursor = box.textCursor()
            cursor.movePosition(cursor.MoveOperation.End)
            box.setTextCursor(cursor)
        box.setFocus()

    def quit(self) -> None:
        """Quit for real, whatever closing the window would do."""
        self.quitting = True
        self.window.close()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.window and event.type() == QEvent.Type.Close and \
                not self.quitting and self.tray is not None and self.close_to_tray.isChecked():
            event.ignore()
            self.window.hide()
            self._say_once_where_it_went()
            return True
        if watched is self.window and event.type() == QEvent.Type.Close:
            self._leave()
        return False

    def _say_once_where_it_went(self) -> None:
        key = "desktop/told_about_tray"
        if not self.window.settings.value(key, False, type=bool):
            self.window.settings.setValue(key, True)
            self.notifier.notify(tr("TrulyMEM is still running"), tr(
                "It keeps running in the tray. Quit it from the tray's menu or with {keys}.",
                keys=self.window.registry.shortcut_text("app.quit")))

    def _leave(self) -> None:
        if self.tray is not None:
            self.tray.hide()
        if self.portal is not None:
            self.portal.close()
        self.notifier.close()

    # -- notifications --------------------------------------------------------------------

    def news(self, summary: str, body: str) -> None:
        """Tell the person `summary` when they are not looking at the window."""
        if not self._in_front():
            self.notifier.notify(summary, body)

    def _tray_can_say(self, summary: str, body: str) -> bool:
        """Called on the notifier's thread: the balloon is shown on the GUI thread."""
        if self.tray is None or not QSystemTrayIcon.supportsMessages():
            return False
        self.balloon.emit(summary, body)
        return True

    def _show_balloon(self, summary: str, body: str) -> None:
        if self.tray is not None:
            self.tray.showMessage(summary, body, QSystemTrayIcon.MessageIcon.Information)

    def reply_ended(self) -> None:
        reply = self.window.chat.last_reply()
        if reply is not None and reply.content and not reply.error:
            self.news(tr("TrulyMEM replied"), reply.content)

    def connect_jobs(self) -> None:
        """The long jobs whose end is news: a reply, an import's memory, a restore."""
        window = self.window
        window.turns.ended.connect(self.reply_ended)
        window.history_import.finished.connect(
            lambda text: self.news(tr("Importing conversations ended"), text))
        window.memory.restored.connect(
            lambda: self.news(tr("Backup restored"), tr("The memory is back as the backup "
                                                        "held it.")))

