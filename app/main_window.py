"""The main window: wires the chat pane, the trace dock, the dialogs and the status bar to
the backend host. It only displays; every decision about memory is made in `core`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QPoint, QSettings, Qt, Signal
from PySide6.QtGui import QCloseEvent, QGuiApplication
from PySide6.QtWidgets import (
    QFileDialog,
    QMainWindow,
    QMenu,
    QMessageBox,
    QTabWidget,
    QWidget,
)

from app.actions import ActionRegistry
from app.backend_host import BackendHost
from app.chat.memory_line import memory_line
from app.chat.model import ChatMessage, ChatModel
from app.chat.pane import ChatPane
from app.chat.stream_buffer import StreamBuffer
from app.conversations import Conversations
from app.dialogs.backups import BackupsDialog
from app.dialogs.import_progress import ImportProgress
from app.dialogs.limits import LimitsDialog
from app.dialogs.palette import CommandPalette
from app.dialogs.settings import SettingsDialog
from app.dialogs.shortcuts import ShortcutList
from app.graph.browser import GraphBrowser
from app.status_parts import StatusPart, first_upper, separator
from app.toast import Toast
from app.trace.dock import TraceDock
from app.trace.model import TraceModel
from core.errors import ErrorCode
from core.i18n import tr
from core.paths import make_private_file
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
        self.chat = ChatModel(self)
        self.pane = ChatPane(self.chat)
        self.browser = GraphBrowser(host)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("mainTabs")
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.pane, tr("Chat"))
        self.tabs.addTab(self.browser, tr("Memory"))
        self.tabs.currentChanged.connect(self._tab_changed)
        self.setCentralWidget(self.tabs)
        self.trace = TraceModel(self)
        self.trace_dock = TraceDock(self.trace, self)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.trace_dock)
        self.trace_dock.hide()
        self.conversations = Conversations(self)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.conversations.sidebar)

        self.config: dict[str, Any] = {}
        self.limits: dict[str, int] = {}
        self.status_data: dict[str, Any] = {}
        self.turn_running = False
        self.failed_text: str | None = None
        self.editing_turn: str | None = None  # Edit last message: sending replaces it
        self.model_menu: QMenu | None = None
        self.stream = StreamBuffer(self._streamed, self)
        self.import_progress: ImportProgress | None = None
        self.session_tokens = 0
        self._sidebar_wanted = False  # hidden for the Memory tab, shown again with the chat
        self._dock_sized = False
        self.last_tokens = 0

        self._make_status_bar()
        self.toast = Toast(self)
        self._told_text_calls = False
        self.registry = ActionRegistry(self)
        self._bind_actions()
        self.registry.build_menus(self.menuBar())
        self.notice_action = self.open_settings
        self._connect_signals()
        host.progress.connect(self.on_progress)
        host.ready.connect(self.on_ready)
        self._restore_window_state()
        self.pane.input.setFocus()
        self._set_state(tr("Starting…"))

    # -- building -------------------------------------------------------------------------

    def _connect_signals(self) -> None:
        self.pane.send_requested.connect(self.send)
        self.pane.input.stop_requested.connect(self.stop)
        self.pane.stop_button.clicked.connect(self.stop)
        self.pane.view.retry_requested.connect(self.retry)
        self.pane.view.memory_note_clicked.connect(self.show_turn_memory)
        self.pane.view.regenerate_requested.connect(self.regenerate)
        self.pane.view.edit_requested.connect(self.edit_last)
        self.pane.view.delete_turn_requested.connect(self.delete_turn)
        self.pane.view.code_copied.connect(lambda code: self.notify(
            tr("Code copied ({n} lines)", n=code.count(chr(10)) + 1), 3000))
        self.pane.notice.button.clicked.connect(self._notice_clicked)
        self.pane.approvals.decided.connect(self.decide_approval)
        self.pane.view.undo_turn_requested.connect(self.undo_turn)
        self.trace_dock.undo_turn_requested.connect(self.undo_turn)
        self.browser.empty_trash_requested.connect(self.empty_trash)
        self.trace_dock.visibilityChanged.connect(self._trace_visibility)
        self.conversations.sidebar.visibilityChanged.connect(
            lambda shown: self.sidebar_action.setChecked(
                shown or not self.conversations.sidebar.isHidden()))
        self.browser.status_message.connect(lambda text: self.notify(text, 8000))
        self.browser.message_requested.connect(self.show_message)
        self.browser.review_count_changed.connect(self._show_review_count)

    def notify(self, text: str, msecs: int = 5000) -> None:
        """A confirmation the person sees for a few seconds at any window width."""
        self.toast.show_text(text, msecs)

    def _make_status_bar(self) -> None:
        bar = self.statusBar()
        self.state_label = StatusPart()
        self.state_label.setObjectName("turnState")
        self.endpoint_label = StatusPart()
        self.endpoint_label.setObjectName("endpoint")
        self.endpoint_label.setCursor(Qt.CursorShape.PointingHandCursor)
        self.endpoint_label.clicked.connect(self.switch_model)
        self.tokens_label = StatusPart(tr("Tokens: none yet"))
        self.tokens_label.setObjectName("tokens")
        self.memory_label = StatusPart()
        self.memory_label.setObjectName("memoryCounts")
        self.review_label = StatusPart()
        self.review_label.setObjectName("reviewCount")
        self.review_label.setCursor(Qt.CursorShape.PointingHandCursor)
        self.review_label.clicked.connect(self.open_review)
        # Shown only while the background indexer catches up (or if it stopped).
        self.meaning_label = StatusPart()
        self.meaning_label.setObjectName("meaningIndex")
        self.meaning_separator = separator()
        bar.addWidget(self.state_label, 2)
        for label in (self.endpoint_label, self.tokens_label, self.memory_label,
                      self.review_label):
            bar.addPermanentWidget(separator())
            bar.addPermanentWidget(label, 1)
        bar.addPermanentWidget(self.meaning_separator)
        bar.addPermanentWidget(self.meaning_label, 1)
        self.show_meaning({"state": "ready"})

    def _bind_actions(self) -> None:
        bind = self.registry.bind
        bind("app.settings", self.open_settings)
        bind("app.limits", self.open_limits)
        bind("app.quit", self.close)
        bind("chat.send", self.pane.send_typed)
        bind("chat.stop", self.stop)
        bind("chat.retry", self.retry)
        bind("chat.regenerate", self.regenerate)
        bind("chat.edit_last", self.edit_last)
        bind("chat.copy_reply", self.copy_last_reply)
        bind("chat.focus_input", self.pane.input.setFocus)
        bind("chat.clear", self.clear_conversation)
        bind("view.palette", self.open_palette)
        self.trace_action = bind("view.trace", self._toggle_trace, checkable=True)
        self.sidebar_action = bind("view.sidebar", self._toggle_sidebar, checkable=True)
        bind("chat.new", self.conversations.new)
        bind("chat.switch_model", self.switch_model)
        bind("chat.export", self.conversations.export)
        bind("view.graph", self.open_graph)
        bind("memory.refresh", self.refresh_memory)
        bind("memory.undo", self.browser.undo)
        bind("memory.redo", self.browser.redo)
        bind("memory.review", self.open_review)
        for name, handler in self.browser.command_handlers().items():
            bind(name, handler, scope=self.browser.shortcut_scope(name))
        self.browser.place_actions(self.registry.actions)
        bind("memory.undo_turn", self.undo_turn)
        bind("memory.empty_trash", self.empty_trash)
        bind("memory.restore_backup", self.open_backups)
        bind("memory.search", self.search_memory)
        bind("memory.export_json", lambda: self.choose_export("json"))
        bind("memory.export_graphml", lambda: self.choose_export("graphml"))
        bind("memory.import", self.choose_import)
        bind("help.shortcuts", self.open_shortcuts)
        bind("help.about", self.about)
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

    # -- start ----------------------------------------------------------------------------

    def on_ready(self, status: dict[str, Any]) -> None:
        """The backend opened its store and config: show what it found."""
        self._show_status(status)
        self.host.send(PacketType.GET_HISTORY, None, self._history_loaded)
        self.conversations.refresh()
        self.host.send(PacketType.GET_CONFIG, None, self._config_loaded)
        self.host.send(PacketType.GET_TOOL_LIMITS, None, self._limits_loaded)
        self.host.send(PacketType.LIST_APPROVALS, None, self._approvals_loaded)
        self.refresh_memory_counts()
        self._set_state(tr("Ready"))

    def show_meaning(self, status: dict[str, Any]) -> None:
        """The indexer's progress: a status part while it catches up, gone once ready."""
        state = status.get("state")
        text, tip = "", ""
        if state == "indexing" and status.get("waiting"):
            text = tr("Indexing: {count} left", count=f"{status['waiting']:,}")
            tip = tr("Memories are being indexed for recall by meaning, on this computer "
                     "({count} done). Recall works meanwhile; what is not indexed yet is found "
                     "by its words.", count=f"{status.get('indexed', 0):,}")
        elif state == "failed":
            text, tip = tr("Recall by words only"), status.get("problem") or ""
        self.meaning_label.setText(text)
        self.meaning_label.setToolTip(tip)
        self.meaning_label.setVisible(bool(text))
        self.meaning_separator.setVisible(bool(text))

    def _show_status(self, status: dict[str, Any]) -> None:
        self.status_data = status or {}
        self.show_meaning(self.status_data.get("meaning") or {})
        config = self.status_data.get("config") or {}
        self.endpoint_label.setText(f"{_host_of(config.get('base_url', ''))} · "
                                    f"{config.get('model', '')}")
        self.endpoint_label.setToolTip(config.get("base_url", ""))
        problems = [p for p in (self.status_data.get("store_error"),
                                self.status_data.get("store_warning"),
                                self.status_data.get("config_warning"),
                                self.status_data.get("backup_warning")) if p]
        self.notice_action = self.open_settings
        if self.status_data.get("store_error") or self.status_data.get("store_warning"):
            self.notice_action = self.open_backups
            listed = "; ".join(problems)
            self.pane.notice.show_message(
                tr("The memory store could not be opened: {problems}.", problems=listed)
                if self.status_data.get("store_error")
                else tr("The memory store has a problem: {problems}.", problems=listed),
                tr("Restore from backup…"))
            self.pane.notice.setToolTip(self.status_data.get("store_detail") or "")
        elif not self.status_data.get("client_initialized"):
            self.pane.notice.show_message(
                tr("No API key yet. Add the key of DeepSeek, OpenAI or another OpenAI-compatible "
                   "service, or the address of a local server (llama.cpp, Ollama, LM Studio). "
                   "Your memory can be browsed without one.")
                + (f"\n{problems[0]}" if problems else ""), tr("Open settings…"))
        elif problems:
            self.pane.notice.show_message(problems[0], tr("Open settings…"))
        else:
            self.pane.notice.hide()

    def _notice_clicked(self) -> None:
        """The notice's one button does what its message asks for (settings or restore)."""
        self.notice_action()

    def _history_loaded(self, answer: dict[str, Any]) -> None:
        if not answer["success"]:
            self._set_state(tr("History not loaded: {error}", error=answer["error"]))
            self.usable.emit()
            return
        self.show_history(answer["history"])
        self.pane.set_remembered(answer.get("remembered"))
        self.usable.emit()

    def show_history(self, history: list[dict[str, Any]]) -> None:
        """Show a conversation's messages (at start, or another conversation chosen)."""
        self._clear_retry()
        self.editing_turn = None
        self.chat.reset(history)
        self.trace.load_history(history)
        self.pane.input.sent = [m["content"] for m in history if m["role"] == "user"][-50:]
        self.pane.view.scrollToBottom()

    def reload_history(self) -> None:
        self.host.send(PacketType.GET_HISTORY, None, self._history_loaded)

    def _toggle_sidebar(self) -> None:
        self.conversations.sidebar.setVisible(self.sidebar_action.isChecked())

    def _config_loaded(self, answer: dict[str, Any]) -> None:
        if answer["success"]:
            self.config = answer["data"]
            self.registry.apply_overrides(self.config.get("shortcuts") or {})
            if self.registry.problems:
                self.notify(
                            tr("Shortcuts ignored: {problems}",
                            problems="; ".join(self.registry.problems)), 10000)

    def _limits_loaded(self, answer: dict[str, Any]) -> None:
        if answer["success"]:
            self.limits = answer["data"]

    # -- a turn ---------------------------------------------------------------------------

    def send(self, text: str, replaces_turn: str | None = None) -> None:
        """Send `text`; with `replaces_turn`, in place of that (newest) turn, whose memory
        changes the backend takes back first."""
        if self.turn_running:
            self.notify(tr("A reply is still running: press Esc to stop it, "
                           "or wait, then send."), 5000)
            return
        if replaces_turn is None and self.editing_turn is not None:
            replaces_turn = self.editing_turn
            self.chat.remove_rows(self.chat.rows_of(replaces_turn))
        self.editing_turn = None
        self.pane.input.accept_sent(text)
        self._clear_retry()
        self.pane.view.follow_latest()  # what is sent, and its reply, are always seen
        self.chat.append(ChatMessage("user", text))
        self.chat.append(ChatMessage("assistant", "", streaming=True))
        self.trace.begin_turn(text)
        self.turn_running = True
        self.pane.set_running(True)
        self.browser.hold(True)
        self._set_state(tr("Waiting for the model…"))
        body = {"user_input": text}
        if replaces_turn:
            body["replaces_turn"] = replaces_turn
        self.host.send(PacketType.PROCESS_MESSAGE, body,
                       lambda answer: self._turn_ended(text, answer))

    def on_progress(self, event: str, data: dict[str, Any]) -> None:
        if event in ("text", "reasoning"):
            self.stream.add(event, data["delta"])
            return
        self.stream.flush()  # what streamed before a tool call shows before it
        if event == "tool_started":
            self.trace.call_started(data["name"], data.get("arguments"))
            self._set_state(tr("Using {tool}…", tool=data["name"]))
        elif event == "tool_finished":
            self.trace.call_finished(data)
        elif event == "tool_rejected":
            self.trace.call_rejected(data["name"], data["reason"])
        elif event == "usage":
            self.trace.set_usage(data)
        elif event == "approval_requested":
            self.pane.approvals.add(data)
        elif event == "calls_in_text" and not self._told_text_calls:
            # Once a session: with some local models every call comes as text.
            self._told_text_calls = True
            self.notify(
                tr("The model wrote its tool call as text instead of as a call; TrulyMEM ran "
                   "it ({tools}).", tools=", ".join(data["names"])), 10000)
        elif event == "import" and self.import_progress is not None:
            self.import_progress.show_progress(data)
        elif event == "memory_changed":
            self.memory_changed(data)
        elif event == "meaning":
            self.show_meaning(data)

    def _streamed(self, kind: str, text: str) -> None:
        row = self.chat.streaming_row()
        if row is None:
            return
        self.chat.extend_text(row, text, reasoning=kind == "reasoning")
        self._set_state(tr("Thinking…") if kind == "reasoning" else tr("Replying…"))

    def _turn_ended(self, text: str, answer: dict[str, Any]) -> None:
        self.stream.flush()
        self.turn_running = False
        self.pane.set_running(False)
        self.trace.end_turn(answer)
        row = self.chat.streaming_row()
        if row is not None:
            message = self.chat.messages[row]
            content = answer.get("content") or message.content  # keep what streamed in
            stopped = answer["code"] == ErrorCode.CANCELLED  # the person's choice, no fault
            self.chat.change(row, streaming=False, content=content or "",
                             error=None if answer["success"] or stopped else answer["error"],
                             partial=not answer["success"],
                             memory_note=memory_line(answer.get("tool_calls"),
                                                     answer.get("rejected_tools")))
        if answer.get("turn_id"):
            for message in self.chat.messages[-2:]:
                message.turn_id = answer["turn_id"]
        if answer.get("touched"):
            self.browser.highlight(answer["touched"])
        self.browser.hold(False)
        for request in answer.get("approvals") or []:
            self.pane.approvals.add(request)
        usage = answer.get("usage") or {}
        self.last_tokens = int(usage.get("total_tokens") or 0)
        self.session_tokens += self.last_tokens
        self.tokens_label.setText(tr("Tokens: last {last} · session {session}",
                                     last=f"{self.last_tokens:,}",
                                     session=f"{self.session_tokens:,}"))
        if answer["success"]:
            self._set_state(tr("Ready"))
        elif answer["code"] == ErrorCode.CANCELLED:
            self._set_state(tr("Stopped"))
        else:
            if answer["code"] == ErrorCode.NO_KEY and row is not None:
                keys = self.registry.shortcut_text("app.settings")
                self.chat.change(row, error=tr("{error}: add one in Settings ({keys})",
                                               error=answer["error"], keys=keys))
            self.failed_text = text
            if answer["code"] == ErrorCode.MODEL_NOT_FOUND:
                self.switch_model()  # the message said so; here are the ones that exist
            self.registry.actions["chat.retry"].setEnabled(True)
            self.pane.view.set_retry_row(row)
            self._set_state(tr("The last message failed: Retry (Ctrl+R) sends it again"))
        self.conversations.refresh()  # its title and place in the list may have changed

    def regenerate(self) -> None:
        """Ask again for the newest reply, in place of it; what it wrote to the memory is
        taken back first."""
        turn = self.chat.newest_turn()
        if self.turn_running or turn is None:
            return
        rows = self.chat.rows_of(turn)
        asked = next((self.chat.messages[r].content for r in rows
                      if self.chat.messages[r].role == "user"), None)
        if asked is None:
            return
        self._clear_retry()
        self.chat.remove_rows(rows)
        self.send(asked, replaces_turn=turn)
        self.notify(tr("Regenerating: what the old reply wrote to the "
                       "memory was taken back."), 8000)

    def edit_last(self) -> None:
        """Put the newest message back in the box; sending it replaces that exchange."""
        turn = self.chat.newest_turn()
        if self.turn_running or turn is None:
            return
        asked = next((self.chat.messages[r].content for r in self.chat.rows_of(turn)
                      if self.chat.messages[r].role == "user"), None)
        if asked is None:
            return
        self.editing_turn = turn
        self.pane.input.setPlainText(asked)
        self.pane.input.setFocus()
        self.pane.input.moveCursor(self.pane.input.textCursor().MoveOperation.End)
        self._set_state(tr("Editing your last message: sending it replaces that exchange and "
                           "takes back what its reply wrote to the memory"))

    def delete_turn(self, turn_id: str) -> None:
        if self.turn_running:
            return

        def done(answer: dict[str, Any]) -> None:
            if answer["success"]:
                self.chat.remove_rows(self.chat.rows_of(turn_id))
                self.notify(tr("Exchange deleted from the conversation; the "
                               "memory keeps what it learned (Ctrl+Alt+Z "
                               "takes that back)."), 8000)
            else:
                self.notify(tr("Not deleted: {error}", error=answer["error"]),
                            8000)

        self.host.send(PacketType.DELETE_TURN, {"turn_id": turn_id}, done)

    def show_turn_memory(self, turn_id: str) -> None:
        """The memory line under a reply was clicked: that turn's calls in the trace dock,
        and what it recalled or changed highlighted in the Memory tab."""
        if not self.trace_dock.isVisible():
            self.trace_action.trigger()
        self.trace_dock.select_turn(turn_id)
        self.host.send(PacketType.TURN_TOUCHED, {"turn_id": turn_id}, self._turn_touched)

    def _turn_touched(self, answer: dict[str, Any]) -> None:
        if answer["success"]:
            self.browser.highlight(answer["data"])

    def stop(self) -> None:
        if self.turn_running:
            self.host.cancel()
            self._set_state(tr("Stopping…"))

    def retry(self) -> None:
        """Send the failed message again in place of the failed turn: one user message,
        no stale error, and nothing the failed attempt wrote to the memory."""
        if not self.failed_text or self.turn_running:
            return
        text, row = self.failed_text, self.pane.view.delegate.retry_message
        turn = row.turn_id if row is not None else None
        first = next((i for i, m in enumerate(self.chat.messages)
                      if turn and m.turn_id == turn), None)
        if first is not None:
            self.chat.remove_from(first)
        self.send(text, replaces_turn=turn)

    def _clear_retry(self) -> None:
        self.failed_text = None
        self.registry.actions["chat.retry"].setEnabled(False)
        self.pane.view.set_retry_row(None)

    def _set_state(self, text: str) -> None:
        self.state_label.setText(text)

    # -- the person in charge of what is removed -----------------------------------------

    def _approvals_loaded(self, answer: dict[str, Any]) -> None:
        if answer["success"]:
            self.pane.approvals.set_pending(answer["approvals"])

    def decide_approval(self, approval_id: int, allow: bool) -> None:
        self.host.send(PacketType.DECIDE_APPROVAL, {"approval_id": approval_id, "allow": allow},
                       lambda answer: self._approval_decided(approval_id, answer))

    def _approval_decided(self, approval_id: int, answer: dict[str, Any]) -> None:
        self.pane.approvals.remove(approval_id)
        if not answer["success"]:
            QMessageBox.warning(self, tr("Not changed"), answer["error"])
            return
        decided = answer["approval"]
        if decided["state"] == "allowed":
            self.notify(tr("Allowed: {outcome}", outcome=decided["outcome"]),
                        10000)
        elif decided["state"] == "denied":
            self.notify(tr("Denied: nothing was removed."), 8000)
        else:
            QMessageBox.information(self, tr("Nothing removed"), decided["outcome"])

    def undo_turn(self, turn_id: str | None = None) -> None:
        """Take back every memory change of a turn: the one asked for, else the selected
        message's or trace row's, else the newest turn that has changes left."""
        turn_id = turn_id or self.pane.view.selected_turn() or (
            self.trace_dock.selected_turn() if self.trace_dock.isVisible() else None)
        self.host.send(PacketType.UNDO_TURN, {"turn_id": turn_id} if turn_id else {},
                       self._turn_undone)

    def _turn_undone(self, answer: dict[str, Any]) -> None:
        if not answer["success"]:
            QMessageBox.information(self, tr("Undo this turn"), answer["error"])
            return
        count = len(answer["undone"])
        self.notify(
                    tr("Took back {changes} of that turn.",
                    changes=_count(count, tr("1 memory change"), tr("{n} memory changes"))), 10000)
        if answer.get("expired_approvals"):
            self.host.send(PacketType.LIST_APPROVALS, None, self._approvals_loaded)

    def open_backups(self) -> None:
        self.host.send(PacketType.LIST_BACKUPS, None, self._show_backups)

    def _show_backups(self, answer: dict[str, Any]) -> None:
        if not answer["success"]:
            QMessageBox.warning(self, tr("Restore from backup"), answer["error"])
            return
        dialog = BackupsDialog(self.host, answer["data"], self)
        dialog.restored.connect(self._backup_restored)
        dialog.exec()

    def _backup_restored(self, answer: dict[str, Any]) -> None:
        QMessageBox.information(
            self, tr("Restored"),
            tr("Restored the backup {backup} ({facts} facts). The memory you had is kept as "
               "{kept}.", backup=answer["restored"], facts=f"{answer['facts'] or 0:,}",
               kept=answer["kept_aside"]))
        self.host.send(PacketType.GET_STATUS, None,
                       lambda status: self._show_status(status["data"]))
        self.host.send(PacketType.GET_HISTORY, None, self._history_loaded)
        self.host.send(PacketType.LIST_APPROVALS, None, self._approvals_loaded)
        self.refresh_memory()

    def empty_trash(self) -> None:
        self.host.send(PacketType.TRASH_STATUS, None, self._confirm_empty_trash)

    def _confirm_empty_trash(self, answer: dict[str, Any]) -> None:
        if not answer["success"]:
            QMessageBox.warning(self, tr("Empty trash"), answer["error"])
            return
        facts, nodes = answer["edges"], answer["nodes"]
        if not facts and not nodes:
            self.notify(tr("The trash is empty."), 5000)
            return
        facts_text = _count(facts, tr("1 deleted fact"), tr("{n} deleted facts"))
        nodes_text = _count(nodes, tr("1 deleted node"), tr("{n} deleted nodes"))
        what = (tr("{facts} and {nodes}", facts=facts_text, nodes=nodes_text)
                if facts and nodes else facts_text if facts else nodes_text)
        sure = QMessageBox.question(
            self, tr("Empty trash"),
            tr("Empty the trash ({what})? They can no longer be restored from the trash; "
               "Undo (Ctrl+Z) right after still brings them back. The assistant can never "
               "empty the trash.", what=what),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel)
        if sure == QMessageBox.StandardButton.Yes:
            self.host.send(PacketType.EMPTY_TRASH, {}, self._trash_emptied)

    def _trash_emptied(self, answer: dict[str, Any]) -> None:
        if not answer["success"]:
            QMessageBox.warning(self, tr("Empty trash"), answer["error"])
            return
        self.notify(first_upper(answer["summary"]) + ".", 8000)

    # -- memory counts --------------------------------------------------------------------

    def refresh_memory_counts(self) -> None:
        """Ask for the counts (at start and after a restore: times no change announced)."""
        self.host.send(PacketType.MEMORY_STATE, None, self._memory_counted)

    def _memory_counted(self, answer: dict[str, Any]) -> None:
        if not answer["success"]:
            self.memory_label.setText(tr("Memory: unavailable"))
            self.memory_label.setToolTip(answer["error"])
            return
        self._show_counts(answer)
        self.browser.review.changed_elsewhere(answer["review_count"])

    def _show_counts(self, state: dict[str, Any]) -> None:
        counts = state["counts"]
        self.memory_label.setText(tr("Memory: {counts}", counts=state["counts_line"]))
        self.memory_label.setToolTip(tr(
            "{counts} (active memories), plus {others} and {history} kept as history. An "
            "export holds all of them.", counts=state["counts_line"],
            others=_count(counts["other_facts"], tr("1 persona or task fact"),
                          tr("{n} persona or task facts")),
            history=_count(counts["history"], tr("1 replaced, archived or deleted fact"),
                           tr("{n} replaced, archived or deleted facts"))))

    def memory_changed(self, event: dict[str, Any]) -> None:
        """The one announcement of a committed change: counts, review count, and the
        Memory tab's lists, picture and details all update from it."""
        self._show_counts(event)
        self.browser.changed(event)
        actor = event.get("actor") or ""
        if actor.startswith("mcp:"):  # another app's change: in the trace, and tinted
            self.trace.outside_change(actor[4:], event.get("tool", ""),
                                      event.get("summary", ""), event.get("arguments"))
            self.browser.highlight({"nodes": event.get("nodes", []),
                                    "changed_nodes": event.get("nodes", []),
                                    "changed_edges": event.get("edges", []), "edges": []})

    def _show_review_count(self, count: int) -> None:
        self.review_label.setText(tr("Review: {count}", count=f"{count:,}") if count
                                  else tr("Review: done"))
        self.review_label.setToolTip(
            tr("{changes} the assistant or other apps made to the memory wait for your "
               "review: click, or press {keys}",
               changes=_count(count, tr("1 change"), tr("{n} changes")),
               keys=self.registry.shortcut_text("memory.review"))
            if count else tr("You have reviewed everything the assistant remembered."))

    def open_review(self) -> None:
        self.tabs.setCurrentWidget(self.browser)
        self.browser.show_review()

    # -- actions --------------------------------------------------------------------------

    def open_settings(self) -> None:
        self.host.send(PacketType.GET_CONFIG, None, self._show_settings)

    def _show_settings(self, answer: dict[str, Any]) -> None:
        if not answer["success"]:
            QMessageBox.warning(self, tr("Settings"), answer["error"])
            return
        dialog = SettingsDialog(self.host, answer["data"], self)
        if dialog.exec():
            if not self.turn_running:  # a failure before the change is old news now
                self._set_state(tr("Settings saved"))
            self.host.send(PacketType.GET_STATUS, None,
                           lambda status: self._show_status(status["data"]))
            self.host.send(PacketType.GET_CONFIG, None, self._config_loaded)

    def switch_model(self) -> None:
        """The quick model switcher: the endpoint's models in a menu over the status bar."""
        self.host.send(PacketType.LIST_MODELS, {}, self._show_model_menu)

    def _show_model_menu(self, answer: dict[str, Any]) -> None:
        if not answer["success"]:
            self.notify(tr("Models not listed: {error}",
                           error=answer["error"]), 8000)
            return
        self.model_menu = menu = QMenu(self)
        current = answer["data"]["current"]
        for name in answer["data"]["models"]:
            action = menu.addAction(name)
            action.setCheckable(True)
            action.setChecked(name == current)
            action.triggered.connect(lambda _checked=False, chosen=name: self.use_model(chosen))
        if menu.isEmpty():
            menu.addAction(tr("The endpoint lists no models")).setEnabled(False)
        corner = self.endpoint_label.mapToGlobal(self.endpoint_label.rect().topLeft())
        menu.popup(corner - QPoint(0, menu.sizeHint().height()))

    def use_model(self, name: str) -> None:
        def done(answer: dict[str, Any]) -> None:
            if not answer["success"]:
                self.notify(tr("Model not changed: {error}",
                               error=answer["error"]), 8000)
                return
            self.notify(tr("The next message goes to {model}", model=name),
                        6000)
            self.host.send(PacketType.GET_STATUS, None,
                           lambda status: self._show_status(status["data"]))
            self.host.send(PacketType.GET_CONFIG, None, self._config_loaded)

        self.host.send(PacketType.SET_CONFIG, {"model": name}, done)

    def open_limits(self) -> None:
        self.host.send(PacketType.GET_TOOL_LIMITS, None, self._show_limits)

    def _show_limits(self, answer: dict[str, Any]) -> None:
        if not answer["success"]:
            QMessageBox.warning(self, tr("Tool limits"), answer["error"])
            return
        dialog = LimitsDialog(self.host, answer["data"], self)
        if dialog.exec():
            self.host.send(PacketType.GET_TOOL_LIMITS, None, self._limits_loaded)

    def open_palette(self) -> None:
        palette = CommandPalette(self.registry, self)
        if palette.exec() and palette.chosen is not None:
            palette.chosen.trigger()

    def open_shortcuts(self) -> None:
        ShortcutList(self.registry, self).exec()

    def _toggle_trace(self) -> None:
        shown = self.trace_action.isChecked()
        first_time = shown and not self.trace_dock.isVisible() and not self._dock_sized
        self.trace_dock.setVisible(shown)
        if first_time:  # a useful width the first time; later the person's own
            self.resizeDocks([self.trace_dock], [int(self.width() * 0.42)],
                             Qt.Orientation.Horizontal)
            self._dock_sized = True

    def _trace_visibility(self, visible: bool) -> None:
        if not self.trace_dock.isFloating() or visible:
            self.trace_action.setChecked(visible)

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

    def refresh_memory(self) -> None:
        """F5, and after a restore: read everything on show again."""
        self.refresh_memory_counts()
        self.browser.refresh()

    def show_message(self, turn_id: str, looked_elsewhere: bool = False) -> None:
        """Go to the person's message of that turn in the chat (where a fact came from),
        opening the conversation that holds it when it is not the one shown."""
        while True:
            row = next((i for i, m in enumerate(self.chat.messages)
                        if m.turn_id == turn_id and m.role == "user"), None)
            if row is not None or not self.chat.load_older(1000):
                break
        if row is None and not looked_elsewhere:
            self.conversations.open(None, lambda: self.show_message(turn_id, True),
                                    turn_id=turn_id)
            return
        if row is None:
            self.notify(tr("That message is no longer in the conversation "
                           "(it was cleared)."), 8000)
            return
        self.tabs.setCurrentWidget(self.pane)
        index = self.chat.index(row)
        self.pane.view.setCurrentIndex(index)
        self.pane.view.scrollTo(index, self.pane.view.ScrollHint.PositionAtCenter)
        self.pane.view.setFocus()

    # -- export and import ----------------------------------------------------------------

    def choose_export(self, kind: str) -> None:
        suffix = tr("JSON (*.json)") if kind == "json" else tr("GraphML (*.graphml)")
        path, _ = QFileDialog.getSaveFileName(self, tr("Export memory"),
                                              str(Path.home() / f"trulymem-memory.{kind}"),
                                              suffix)
        if path:
            self.export_memory(path, kind)

    def export_memory(self, path: str, kind: str) -> None:
        self.host.send(PacketType.EXPORT_MEMORY, {"path": path, "format": kind},
                       lambda answer: self._report(
                           tr("Export"), answer,
                           tr("{summary}, to {path}",
                              summary=first_upper(answer.get("summary") or ""), path=path)))

    def choose_import(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, tr("Import memory"), str(Path.home()),
                                              tr("JSON (*.json)"))
        if path:
            self.import_memory(path)

    def import_memory(self, path: str) -> None:
        """Runs on the backend thread with a progress dialog; a chat message sent
        meanwhile waits for the import to end."""
        progress = ImportProgress(Path(path).name, self)
        progress.canceled.connect(self.host.cancel)
        self.import_progress = progress
        self._set_state(tr("Importing {file}…", file=Path(path).name))

        def done(answer: dict[str, Any]) -> None:
            self.import_progress = None
            progress.close()
            progress.deleteLater()
            if not self.turn_running:
                self._set_state(tr("Ready"))
            if answer["code"] == ErrorCode.CANCELLED:
                self.notify(tr("Import cancelled; the memory is unchanged."),
                            10000)
                return
            self._report(tr("Import"), answer,
                         tr("{summary}. Undo (Ctrl+Z) takes the whole import back.",
                            summary=first_upper(answer.get("summary") or "")))

        self.host.send(PacketType.IMPORT_MEMORY, {"path": path}, done)

    def _report(self, title: str, answer: dict[str, Any], success: str) -> None:
        if answer["success"]:
            self.notify(success, 10000)
        else:
            QMessageBox.warning(self, title, tr("{title} failed: {error}", title=title,
                                                error=answer["error"]))

    def copy_last_reply(self) -> None:
        reply = self.chat.last_reply()
        if reply is not None:
            QGuiApplication.clipboard().setText(reply.content)
            self.notify(tr("Last reply copied"), 3000)

    def clear_conversation(self) -> None:
        if self.turn_running:
            return
        answer = QMessageBox.question(
            self, tr("Clear conversation"),
            tr("Clear the conversation shown here? What the assistant keeps in its memory "
               "graph stays."))
        if answer == QMessageBox.StandardButton.Yes:
            self.host.send(PacketType.SAVE_HISTORY, {"messages": []},
                           lambda _answer: self.host.send(PacketType.GET_HISTORY, None,
                                                          self._history_loaded))

    def about(self) -> None:
        QMessageBox.about(self, tr("About TrulyMEM"),
                          tr("TrulyMEM: an AI companion whose memory is a graph it keeps for "
                             "itself, on your machine."))

    # -- closing --------------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:
        """Stop the turn, close the store and wait for the backend thread, then close."""
        if self._sidebar_wanted:  # saved as the person left it, not as the tab hid it
            self.conversations.sidebar.show()
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("state", self.saveState(STATE_VERSION))
        self.browser.save_state(self.settings)
        self.settings.sync()
        make_private_file(Path(self.settings.fileName()))
        self.host.shutdown()
        event.accept()


def _host_of(url: str) -> str:
    return url.split("://", 1)[-1].split("/", 1)[0] or url


def _count(n: int, one: str, many: str) -> str:
    """`one` ("1 change") or `many` ("{n} changes") filled in: both already translated."""
    return one if n == 1 else many.format(n=f"{n:,}")
