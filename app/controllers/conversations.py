"""The window's side of conversations: the sidebar, and switching, creating, renaming,
deleting, restoring, searching and exporting through the backend. The chat pane shows
whichever conversation is current; the memory is the same in all of them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFileDialog, QWidget

from app.backend_host import BackendHost
from app.chat.sidebar import ConversationSidebar, shown_title
from app.looks.toast import CONFIRM_MSECS
from core.i18n import tr
from core.paths import file_name
from core.protocol.packets import PacketType


class Conversations(QObject):
    said = Signal(str, int)  # a confirmation to show for that many ms
    shown = Signal(object)  # a conversation to show: its "history" and "remembered"
    started_new = Signal()  # a new conversation is shown: the person will type
    message_wanted = Signal(str)  # go to the person's message of that turn
    current_deleted = Signal()  # the shown conversation was deleted: show the one left

    def __init__(self, host: BackendHost, window: QWidget, busy: Callable[[], bool]) -> None:
        """`busy()` is true while a reply runs (switching must wait for it)."""
        super().__init__(window)
        self.window, self.host, self.busy = window, host, busy
        self._lists_asked = 0  # only the newest list's answer is shown (see refresh)
        self.sidebar = ConversationSidebar(window)
        self.current: int | None = None
        self.listed: list[dict[str, Any]] = []  # as last listed (titles for file names)
        sidebar = self.sidebar
        sidebar.open_requested.connect(self.open)
        sidebar.new_requested.connect(self.new)
        sidebar.rename_requested.connect(self.rename)
        sidebar.delete_requested.connect(self.delete)
        sidebar.restore_requested.connect(self.restore)
        sidebar.export_requested.connect(self.export)
        sidebar.copy_requested.connect(self.copy)
        sidebar.search_requested.connect(self.search)
        sidebar.deleted_requested.connect(self.refresh)
        sidebar.result_chosen.connect(self.go_to_result)

    def _say(self, text: str) -> None:
        self.said.emit(text, 8000)

    def _busy(self) -> bool:
        if self.busy():
            self._say(tr("A reply is running: stop it (Esc) or wait before switching."))
            return True
        return False

    def refresh(self, deleted: bool = False) -> None:
        """Ask for the list again. Lists are read on their own lane while the worker is
        busy, so an older answer can arrive after a newer one, naming the conversation
        that was current before a switch: only the newest answer counts."""
        self._lists_asked += 1
        asked = self._lists_asked
        self.host.send(PacketType.LIST_CONVERSATIONS, {"deleted": deleted},
                       lambda answer: self._listed(answer, deleted, asked))

    def _listed(self, answer: dict[str, Any], deleted: bool, asked: int) -> None:
        if answer["success"] and asked == self._lists_asked:
            self.current = answer["data"]["current"]
            self.listed = answer["data"]["conversations"]
            self.sidebar.set_conversations(answer["data"]["conversations"], self.current,
                                           deleted)

    def _show(self, data: dict[str, Any]) -> None:
        """Put a conversation's messages in the pane."""
        self.shown.emit(data)
        self.refresh()

    def new(self) -> None:
        if self._busy():
            return

        def done(answer: dict[str, Any]) -> None:
            if answer["success"]:
                self._show(answer["data"])
                self.started_new.emit()

        self.host.send(PacketType.NEW_CONVERSATION, None, done)

    def open(self, conversation_id: int | None, then: Any = None,
             turn_id: str | None = None) -> None:
        """Open a conversation, or (with `turn_id`) the one that holds that turn."""
        if self._busy():
            return

        def done(answer: dict[str, Any]) -> None:
            if not answer["success"]:
                self._say(tr("Not opened: {error}", error=answer["error"]))
                return
            self._show(answer["data"])
            if then is not None:
                then()

        body = {"turn_id": turn_id} if conversation_id is None else \
            {"conversation_id": conversation_id}
        self.host.send(PacketType.OPEN_CONVERSATION, body, done)

    def go_to_result(self, conversation_id: int, turn_id: str) -> None:
        """A search result: open its conversation and go to the message."""
        def jump() -> None:
            if turn_id:
                self.message_wanted.emit(turn_id)

        if conversation_id == self.current:
            jump()
        else:
            self.open(conversation_id, jump)

    def rename(self, conversation_id: int, title: str) -> None:
        self.host.send(PacketType.RENAME_CONVERSATION,
                       {"conversation_id": conversation_id, "title": title},
                       lambda answer: (self.refresh(), self.said.emit(
                           tr("Renamed to “{title}”", title=title.strip()), CONFIRM_MSECS))
                       if answer["success"]
                       else self._say(tr("Not renamed: {error}", error=answer["error"])))

    def delete(self, conversation_id: int) -> None:
        if self._busy():
            return

        def done(answer: dict[str, Any]) -> None:
            if not answer["success"]:
                self._say(tr("Not deleted: {error}", error=answer["error"]))
                return
            self._say(tr("Conversation deleted: Deleted conversations, at the bottom of the "
                         "sidebar, brings it back. The memory keeps what it learned."))
            if conversation_id == self.current:
                self.current_deleted.emit()
            self.refresh()

        self.host.send(PacketType.DELETE_CONVERSATION, {"conversation_id": conversation_id},
                       done)

    def restore(self, conversation_id: int) -> None:
        self.host.send(PacketType.RESTORE_CONVERSATION, {"conversation_id": conversation_id},
                       lambda answer: (self._say(tr("Conversation restored.")),
                                       self.refresh(deleted=True)) if answer["success"]
                       else self._say(tr("Not restored: {error}", error=answer["error"])))

    def search(self, text: str) -> None:
        self.host.send(PacketType.SEARCH_CONVERSATIONS, {"query": text},
                       lambda answer: self.sidebar.set_results(answer["data"]["results"])
                       if answer["success"] else self._say(answer["error"]))

    def export(self, conversation_id: int | None = None) -> None:
        path, _ = QFileDialog.getSaveFileName(self.window, tr("Export conversation"),
                                              str(Path.home() / self._file_name(conversation_id)),
                                              tr("Markdown (*.md)"))
        if path:
            self.export_to(path, conversation_id)

    def _file_name(self, conversation_id: int | None) -> str:
        """The conversation's title as a file name ("Trip to Kyoto.md")."""
        wanted = conversation_id if conversation_id is not None else self.current
        title = next((c["title"] for c in self.listed if c["id"] == wanted), "")
        return f"{file_name(shown_title(title)) or tr('conversation')}.md"

    def export_to(self, path: str, conversation_id: int | None = None) -> None:
        body: dict[str, Any] = {"path": path}
        if conversation_id is not None:
            body["conversation_id"] = conversation_id
        self.host.send(PacketType.EXPORT_CONVERSATION, body,
                       lambda answer: self._say(tr("Conversation exported to {path}", path=path))
                       if answer["success"]
                       else self._say(tr("Not exported: {error}", error=answer["error"])))

    def copy(self, conversation_id: int | None = None) -> None:
        body = {} if conversation_id is None else {"conversation_id": conversation_id}

        def done(answer: dict[str, Any]) -> None:
            if answer["success"]:
                QGuiApplication.clipboard().setText(answer["data"]["markdown"])
                self._say(tr("Conversation copied as Markdown"))

        self.host.send(PacketType.EXPORT_CONVERSATION, body, done)
