"""The conversations sidebar (Ctrl+B): New chat, search across every conversation, the
conversations by recency, and the deleted ones to bring back.

It shows and asks; the window does the work through the backend."""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QDockWidget,
    QHBoxLayout,
    QInputDialog,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

IdRole = Qt.ItemDataRole.UserRole + 1
TurnRole = Qt.ItemDataRole.UserRole + 2


def _when(stamp: float) -> str:
    if time.localtime(stamp)[:3] == time.localtime()[:3]:
        return time.strftime("%H:%M", time.localtime(stamp))
    return time.strftime("%Y-%m-%d", time.localtime(stamp))


class ConversationSidebar(QDockWidget):
    open_requested = Signal(int)
    new_requested = Signal()
    rename_requested = Signal(int, str)
    delete_requested = Signal(int)
    restore_requested = Signal(int)
    export_requested = Signal(int)
    copy_requested = Signal(int)
    search_requested = Signal(str)
    deleted_requested = Signal(bool)  # show the deleted ones (True) or the others
    result_chosen = Signal(int, str)  # conversation id, turn id of the message found

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Conversations", parent)
        self.setObjectName("conversationsDock")
        self.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetClosable
                         | QDockWidget.DockWidgetFeature.DockWidgetMovable)
        self.current: int | None = None
        self.showing_deleted = False
        self.new_button = QPushButton("New chat")
        self.new_button.setAccessibleName("New chat")
        self.new_button.clicked.connect(self.new_requested)
        self.search = QLineEdit()
        self.search.setObjectName("conversationSearch")
        self.search.setAccessibleName("Search all conversations")
        self.search.setPlaceholderText("Search all conversations…")
        self.search.setClearButtonEnabled(True)
        self._search_later = QTimer(self)
        self._search_later.setSingleShot(True)
        self._search_later.setInterval(250)  # search once typing pauses, not per key
        self._search_later.timeout.connect(self._search)
        self.search.textChanged.connect(lambda _text: self._search_later.start())
        self.list = QListWidget()
        self.list.setObjectName("conversationList")
        self.list.setAccessibleName("Conversations")
        self.list.setWordWrap(True)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.itemActivated.connect(self._chosen)
        self.list.itemClicked.connect(self._chosen)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._menu)
        self.deleted_button = QPushButton("Deleted conversations")
        self.deleted_button.setCheckable(True)
        self.deleted_button.setFlat(True)
        self.deleted_button.toggled.connect(self._toggle_deleted)
        top = QHBoxLayout()
        top.addWidget(self.new_button)
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.addLayout(top)
        layout.addWidget(self.search)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.deleted_button)
        self.setWidget(body)
        self.setMinimumWidth(28 * self.fontMetrics().averageCharWidth())

    # -- filling --------------------------------------------------------------------------

    def set_conversations(self, rows: list[dict[str, Any]], current: int | None,
                          deleted: bool = False) -> None:
        if self.search.text().strip():
            return  # the search results stay until the search is cleared
        self.current = current
        self.showing_deleted = deleted
        self.list.clear()
        for row in rows:
            count = row.get("messages", 0)
            item = QListWidgetItem(row["title"])
            item.setData(IdRole, row["id"])
            item.setToolTip(f"{row['title']}\n{_when(row['updated_at'])} · {count} "
                            f"message{'s' if count != 1 else ''}"
                            + ("\nDeleted: right-click to restore" if deleted else ""))
            if row["id"] == current and not deleted:
                font = QFont(item.font())
                font.setBold(True)
                item.setFont(font)
            self.list.addItem(item)
            if row["id"] == current and not deleted:
                self.list.setCurrentItem(item)
        if not rows:
            empty = QListWidgetItem("No deleted conversations" if deleted else
                                    "No conversations yet")
            empty.setFlags(Qt.ItemFlag.NoItemFlags)
            self.list.addItem(empty)

    def set_results(self, results: list[dict[str, Any]]) -> None:
        self.list.clear()
        for row in results:
            who = "You" if row["role"] == "user" else "Assistant"
            item = QListWidgetItem(f"{row['title']}\n{who}: {row['snippet']}")
            item.setData(IdRole, row["conversation_id"])
            item.setData(TurnRole, row.get("turn_id") or "")
            item.setToolTip(row["snippet"])
            self.list.addItem(item)
        if not results:
            empty = QListWidgetItem(f"Nothing found for “{self.search.text().strip()}”")
            empty.setFlags(Qt.ItemFlag.NoItemFlags)
            self.list.addItem(empty)

    # -- asking ---------------------------------------------------------------------------

    def _search(self) -> None:
        text = self.search.text().strip()
        if text:
            self.search_requested.emit(text)
        else:
            self.deleted_requested.emit(self.showing_deleted)  # back to the list

    def _toggle_deleted(self, shown: bool) -> None:
        self.search.clear()
        self.deleted_button.setText("Back to conversations" if shown
                                    else "Deleted conversations")
        self.deleted_requested.emit(shown)

    def _chosen(self, item: QListWidgetItem) -> None:
        conversation = item.data(IdRole)
        if conversation is None or self.showing_deleted:
            return
        turn = item.data(TurnRole)
        if turn is not None:
            self.result_chosen.emit(conversation, turn)
        elif conversation != self.current:
            self.open_requested.emit(conversation)

    def _menu(self, position) -> None:
        item = self.list.itemAt(position)
        conversation = item.data(IdRole) if item is not None else None
        if conversation is None:
            return
        menu = QMenu(self)
        if self.showing_deleted:
            menu.addAction("Restore", lambda: self.restore_requested.emit(conversation))
        else:
            menu.addAction("Rename…", lambda: self._rename(item, conversation))
            menu.addAction("Export as Markdown…",
                           lambda: self.export_requested.emit(conversation))
            menu.addAction("Copy as Markdown", lambda: self.copy_requested.emit(conversation))
            menu.addAction("Delete", lambda: self.delete_requested.emit(conversation))
        menu.exec(self.list.viewport().mapToGlobal(position))

    def _rename(self, item: QListWidgetItem, conversation: int) -> None:
        title, ok = QInputDialog.getText(self, "Rename conversation", "Title:",
                                         text=item.text().split("\n")[0])
        if ok and title.strip():
            self.rename_requested.emit(conversation, title)
