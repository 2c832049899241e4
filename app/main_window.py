"""The main window: assembles the chat, the Memory tab, the docks, the menus and the status
bar, and remembers how the person left them. The flows live with their parts: the turn
life cycle in `app.chat.turns`, what the person does to the memory in
`app.controllers.memory_actions`, settings and the model switcher in
`app.controllers.settings_actions`, conversations in `app.controllers.conversations`;
each view follows the backend's events itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QSettings, Qt, Signal
from PySide6.QtGui import QCloseEvent, QGuiApplication
from PySide6.QtWidgets import QMainWindow, QMessageBox, QTabWidget, QVBoxLayout, QWidget

from app import __version__
from app.actions import ActionRegistry
from app.backend_host import BackendHost
from app.chat.model import ChatModel
from app.chat.pane import ChatPane
from app.chat.turns import TurnController
from app.controllers.conversations import Conversations
from app.controllers.go_to_message import go_to_message
from app.controllers.history_import import HistoryImport
from app.controllers.memory_actions import MemoryActions
from app.controllers.notice import NoticeController
from app.controllers.settings_actions import SettingsActions
from app.desktop.citizen import Desktop
from app.dialogs.palette import CommandPalette
from app.dialogs.shortcuts import ShortcutList
from app.graph.browser import GraphBrowser
from app.looks.toast import Toast
from app.looks.zoom import TextZoom
from app.status.model_shutdown import ModelNotice
from app.status.status_bar import StatusBar
from app.trace.dock import TraceDock
from app.trace.model import TraceModel
from core.i18n import tr
from core.paths import make_private_file, memory_label
from core.protocol.packets import PacketType

STATE_VERSION = 1


class MainWindow(QMainWindow):
    usable = Signal()  # the store is open and the history is shown

    def __init__(self, host: BackendHost, home: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("mainWindow")
        self.setWindowTitle("TrulyMEM")
        self.host = host
        self.settings = QSettings(str(home / "window.ini"), QSettings.Format.IniFormat)
        self.config: dict[str, Any] = {}
        self.limits: dict[str, int] = {}
        self.status_data: dict[str, Any] = {}
        self._sidebar_wanted = False  # hidden for the Memory tab, shown again with the chat
        self._dock_sized = False
        self._assemble()
        self.registry = ActionRegistry(self)
        self.turns = TurnController(host, self.chat, self.pane, self.trace, self.registry,
                                    parent=self)
        self.memory = MemoryActions(host, self, self.pane.approvals, self._selected_turn)
        self.setup = SettingsActions(host, self, self.status.endpoint_label)
        self.model_notice = ModelNotice(host, self.settings, self.statusBar(), self.setup,
                                        self.turns.ended)  # a model going away
        self.conversations = Conversations(host, self, lambda: self.turns.running)
        self.history_import = HistoryImport(host, self, self.status.state_label)
        self.desktop = Desktop(self)
        self.zoom = TextZoom(self.settings, (self.pane, self.browser), self)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.conversations.sidebar)
        self._bind_actions()
        self.desktop.bind_actions()
        self.registry.build_menus(self.menuBar())
        self.notices = NoticeController(self.pane.notice, self.turns, self.setup.open_settings,
                                        self.memory.open_backups, self.setup.open_local)
        self._connect_signals()
        host.ready.connect(self.on_ready)
        self._restore_window_state()
        self.pane.input.setFocus()
        self.status.set_state(tr("Starting…"))

    # -- building -------------------------------------------------------------------------

    def _assemble(self) -> None:
        self.chat = ChatModel(self)
        self.pane = ChatPane(self.chat)
        self.browser = GraphBrowser(self.host)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("mainTabs")
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.pane, tr("Chat"))
        self.tabs.addTab(self.browser, tr("Memory"))
        self.tabs.currentChanged.connect(self._tab_changed)
        self.toast = Toast()
        central = QWidget()
        column = QVBoxLayout(central)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addWidget(self.tabs, 1)
        column.addWidget(self.toast.strip)
        self.setCentralWidget(central)
        self.trace = TraceModel(self)
        self.host.events.memory_changed.connect(self.trace.memory_changed)
        self.trace_dock = TraceDock(self.trace, self)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.trace_dock)
        self.trace_dock.hide()
        self.status = StatusBar(self.statusBar(), self.host)

    def _connect_signals(self) -> None:
        turns, status = self.turns, self.status
        for source in (turns, self.memory, self.setup, self.conversations, self.history_import,
                       self.zoom):
            source.said.connect(self.notify)
        turns.state_changed.connect(status.set_state)
        turns.tokens_counted.connect(status.show_tokens)
        turns.ended.connect(self.conversations.refresh)
        self.desktop.connect_jobs()
        turns.model_missing.connect(self.setup.switch_model)
        turns.running_changed.connect(self.browser.hold)
        turns.touched.connect(self.browser.highlight)
        self.memory.state_changed.connect(
            lambda text: None if self.turns.running else status.set_state(text))
        self.memory.restored.connect(self._read_everything_again)
        self.host.events.sync.connect(  # joined a sync set: every id moved into its range
            lambda state: state.get("renumbered") and self._read_everything_again())
        self.setup.changed.connect(self._settings_saved)
        self.setup.limits_changed.connect(self._load_limits)
        self.conversations.shown.connect(self._show_conversation)
        self.conversations.started_new.connect(self.pane.input.setFocus)
        self.conversations.message_wanted.connect(self.show_message)
        self.conversations.current_deleted.connect(self.reload_history)
        status.endpoint_label.clicked.connect(self.setup.switch_model)
        status.review_label.clicked.connect(self.open_review)
        status.sync_label.clicked.connect(self.setup.open_sync)
        self.pane.view.memory_note_clicked.connect(self.show_turn_memory)
        self.pane.view.code_copied.connect(lambda code: self.notify(
            tr("Code copied ({n} lines)", n=code.count(chr(10)) + 1), 3000))
        self.pane.view.undo_turn_requested.connect(self.memory.undo_turn)
        self.trace_dock.undo_turn_requested.connect(self.memory.undo_turn)
        self.browser.empty_trash_requested.connect(self.memory.empty_trash)
        # the person's choice, not what is on screen: a window hidden (--toggle, the tray)
        # hides its docks too, and they come back with it
        self.trace_dock.visibilityChanged.connect(lambda _visible: self.trace_action.setChecked(
            not self.trace_dock.isHidden()))
        self.conversations.sidebar.visibilityChanged.connect(
            lambda shown: self.sidebar_action.setChecked(
                shown or not self.conversations.sidebar.isHidden()))
        self.browser.status_message.connect(lambda text: self.notify(text, 8000))
        self.browser.message_requested.connect(self.show_message)
        self.browser.review_count_changed.connect(
            lambda count: status.show_review_count(
                count, self.registry.shortcut_text("memory.review")))

    def notify(self, text: str, msecs: int = 5000) -> None:
        """A confirmation the person sees for a few seconds at any window width."""
        self.toast.show_text(text, msecs)

    def _bind_actions(self) -> None:
        bind, turns, memory = self.registry.bind, self.turns, self.memory
        for name, handler in {
            "app.settings": self.setup.open_settings, "app.limits": self.setup.open_limits,
            "app.sync": self.setup.open_sync, "app.sync_now": self.setup.sync_now,
            "app.quit": self.desktop.quit, "chat.send": self.pane.send_typed,
            "chat.stop": turns.stop,
            "chat.retry": turns.retry, "chat.regenerate": turns.regenerate,
            "chat.edit_last": turns.edit_last, "chat.copy_reply": self.copy_last_reply,
            "chat.focus_input": self.pane.input.setFocus, "chat.clear": self.clear_conversation,
            "view.palette": self.open_palette, "chat.new": self.conversations.new,
            "chat.switch_model": self.setup.switch_model,
            "chat.export": self.conversations.export, "view.graph": self.open_graph,
            "memory.refresh": self.refresh_memory, "memory.undo": self.browser.undo,
            "memory.redo": self.browser.redo, "memory.review": self.open_review,
        }.items():
            bind(name, handler)
        self.trace_action = bind("view.trace", self._toggle_trace, checkable=True)
        self.sidebar_action = bind("view.sidebar", lambda: self.conversations.sidebar
                                   .setVisible(self.sidebar_action.isChecked()),
                                   checkable=True)
        for name, handler in self.browser.command_handlers().items():
            bind(name, handler, scope=self.browser.shortcut_scope(name))
        self.browser.place_actions(self.registry.actions)
        for name, handler in {
            "memory.undo_turn": memory.undo_turn, "memory.empty_trash": memory.empty_trash,
            "memory.restore_backup": memory.open_backups, "memory.search": self.search_memory,
            "memory.export_json": lambda: memory.choose_export("json"),
            "memory.export_graphml": lambda: memory.choose_export("graphml"),
            "memory.import": memory.choose_import, "help.shortcuts": self.open_shortcuts,
            **self.history_import.handlers(), **self.zoom.handlers(), "help.about": self.about,
        }.items():
            bind(name, handler)
        self.registry.actions["chat.retry"].setEnabled(False)

    def _restore_window_state(self) -> None:
        geometry = self.settings.value("geometry")
        if isinstance(geometry, QByteArray) and self.restoreGeometry(geometry):
            state = self.settings.value("state")
            if isinstance(state, QByteArray):
                self._dock_sized = self.restoreState(state, STATE_VERSION)
        else:  # the first start: most of the screen, centred (remembered from then on)
            screen = self.screen().availableGeometry()
            width = min(1400, round(screen.width() * 0.8))
            height = min(950, round(screen.height() * 0.85))
            self.setGeometry(screen.x() + (screen.width() - width) // 2,
                             screen.y() + (screen.height() - height) // 2, width, height)
        self.trace_action.setChecked(self.trace_dock.isVisible())
        self.sidebar_action.setChecked(not self.conversations.sidebar.isHidden())
        self.browser.restore_state(self.settings)

    # -- what the backend holds -------------------------------------------------------------

    def on_ready(self, status: dict[str, Any]) -> None:
        """The backend opened its store and config: show what it found."""
        self._show_status(status)
        self.reload_history()
        self.conversations.refresh()
        self.host.send(PacketType.GET_CONFIG, None, self._config_loaded)
        self._load_limits()
        self.memory.load_approvals()
        self.refresh_memory_counts()
        self.status.set_state(tr("Ready"))

    def _show_status(self, status: dict[str, Any]) -> None:
        """The endpoint in the status bar; a problem or an offer in the notice."""
        self.status_data = status or {}
        self.status.show_meaning(self.status_data.get("meaning") or {})
        self.status.show_endpoint(self.status_data.get("config") or {},
                                  ready=bool(self.status_data.get("client_initialized")))
        self.notices.show_status(self.status_data)

    def _read_status(self) -> None:
        self.host.send(PacketType.GET_STATUS, None,
                       lambda answer: self._show_status(answer["data"]))

    def reload_history(self) -> None:
        self.host.send(PacketType.GET_HISTORY, None, self._history_loaded)

    def _history_loaded(self, answer: dict[str, Any]) -> None:
        if answer["success"]:
            self._show_conversation(answer["data"])
        else:
            self.status.set_state(tr("History not loaded: {error}", error=answer["error"]))
        self.usable.emit()

    def _show_conversation(self, data: dict[str, Any]) -> None:
        self.turns.show_history(data.get("history") or [])
        self.pane.set_remembered(data.get("remembered"))
        self.notices.offer_unsent()

    def _config_loaded(self, answer: dict[str, Any]) -> None:
        if answer["success"]:
            self.config = answer["data"]
            self.desktop.name_memory(memory_label(self.config.get("home"),
                                                  self.config.get("memory_name") or ""))
            self.registry.apply_overrides(self.config.get("shortcuts") or {})
            if self.registry.problems:
                self.notify(tr("Shortcuts ignored: {problems}",
                               problems="; ".join(self.registry.problems)), 10000)

    def _load_limits(self) -> None:
        self.host.send(PacketType.GET_TOOL_LIMITS, None, lambda answer: setattr(
            self, "limits", answer["data"]) if answer["success"] else None)

    def _settings_saved(self) -> None:
        self._read_status()
        self.host.send(PacketType.GET_CONFIG, None, self._config_loaded)

    def _read_everything_again(self) -> None:
        """After a restore: the status, the chat, the approvals and the Memory tab."""
        self._read_status()
        self.conversations.refresh()
        self.reload_history()
        self.memory.load_approvals()
        self.refresh_memory()

    def refresh_memory_counts(self) -> None:
        """Ask for the counts (at start and after a restore: times no change announced)."""
        self.host.send(PacketType.MEMORY_STATE, None, self._memory_counted)

    def _memory_counted(self, answer: dict[str, Any]) -> None:
        if not answer["success"]:
            self.status.counts_unavailable(answer["error"])
            return
        self.status.show_counts(answer["data"])
        self.browser.review.changed_elsewhere(answer["data"]["review_count"])

    def refresh_memory(self) -> None:
        """F5, and after a restore: read everything on show again."""
        self.refresh_memory_counts()
        self.browser.refresh()

    # -- moving around --------------------------------------------------------------------

    def _selected_turn(self) -> str | None:
        return self.pane.view.selected_turn() or (
            self.trace_dock.selected_turn() if self.trace_dock.isVisible() else None)

    def show_turn_memory(self, turn_id: str) -> None:
        """The memory line under a reply was clicked: that turn's calls in the trace dock,
        and what it recalled or changed highlighted in the Memory tab."""
        if not self.trace_dock.isVisible():
            self.trace_action.trigger()
        self.trace_dock.select_turn(turn_id)
        self.host.send(PacketType.TURN_TOUCHED, {"turn_id": turn_id},
                       lambda answer: self.browser.highlight(answer["data"])
                       if answer["success"] else None)

    def show_message(self, turn_id: str, looked_elsewhere: bool = False) -> None:
        go_to_message(self, turn_id, looked_elsewhere)

    def open_review(self) -> None:
        self.tabs.setCurrentWidget(self.browser)
        self.browser.show_review()

    def open_graph(self) -> None:
        """Ctrl+G: to the memory browser, and from it back to the chat."""
        if self.tabs.currentWidget() is self.browser:
            self.tabs.setCurrentWidget(self.pane)
            self.pane.input.setFocus()
        else:
            self.tabs.setCurrentWidget(self.browser)
            self.browser.list.setFocus()

    def search_memory(self) -> None:
        self.tabs.setCurrentWidget(self.browser)
        self.browser.search.setFocus()
        self.browser.search.selectAll()

    def _tab_changed(self, _index: int) -> None:
        """The conversations sidebar belongs to the chat: the Memory tab gets its room
        (a small window needs it), and the sidebar comes back with the chat."""
        sidebar = self.conversations.sidebar
        if self.tabs.currentWidget() is self.browser:
            self._sidebar_wanted = not sidebar.isHidden() and not sidebar.isFloating()
            if self._sidebar_wanted:
                sidebar.hide()
            self.browser.ensure_loaded()
        elif self._sidebar_wanted:
            self._sidebar_wanted = False
            sidebar.show()

    def _toggle_trace(self) -> None:
        shown = self.trace_action.isChecked()
        first_time = shown and not self.trace_dock.isVisible() and not self._dock_sized
        self.trace_dock.setVisible(shown)
        if first_time:  # a useful width the first time; later the person's own
            self.resizeDocks([self.trace_dock], [int(self.width() * 0.42)],
                             Qt.Orientation.Horizontal)
            self._dock_sized = True

    # -- small commands -------------------------------------------------------------------

    def open_palette(self) -> None:
        palette = CommandPalette(self.registry, self)
        if palette.exec() and palette.chosen is not None:
            palette.chosen.trigger()

    def open_shortcuts(self) -> None:
        ShortcutList(self.registry, self).exec()

    def copy_last_reply(self) -> None:
        reply = self.chat.last_reply()
        if reply is not None:
            QGuiApplication.clipboard().setText(reply.content)
            self.notify(tr("Last reply copied"), 3000)

    def clear_conversation(self) -> None:
        if self.turns.running:
            return
        answer = QMessageBox.question(
            self, tr("Clear conversation"),
            tr("Clear the conversation shown here? What the assistant keeps in its memory "
               "graph stays."))
        if answer == QMessageBox.StandardButton.Yes:
            self.host.send(PacketType.SAVE_HISTORY, {"messages": []},
                           lambda _answer: self.reload_history())

    def about(self) -> None:
        QMessageBox.about(self, tr("About TrulyMEM"),
                          tr("TrulyMEM {version}: an AI companion whose memory is a graph it "
                             "keeps for itself, on your machine.", version=__version__))

    def closeEvent(self, event: QCloseEvent) -> None:
        """Stop the turn, close the store and wait for the backend thread, then close."""
        if self._sidebar_wanted:  # saved as the person left it, not as the tab hid it
            self.conversations.sidebar.show()
        self.setup.close_menu()
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("state", self.saveState(STATE_VERSION))
        self.browser.save_state(self.settings)
        self.settings.sync()
        make_private_file(Path(self.settings.fileName()))
        self.host.shutdown()
        event.accept()
