"""The conversations sidebar (Ctrl+B): New chat, search across every conversation, the
conversations by recency, and the deleted ones to bring back.

It shows and asks; the window does the work through the backend."""

from __future__ import annotations

import html
import time
from typing import Any

from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtGui import QAbstractTextDocumentLayout, QFont, QPainter, QPalette, QTextDocument
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from app.dialogs.ask_text import ask_text
from app.looks.sizes import chars
from core.i18n import tr
from core.store.conversations import NEW_TITLE

IdRole = Qt.ItemDataRole.UserRole + 1
TurnRole = Qt.ItemDataRole.UserRole + 2
HtmlRole = Qt.ItemDataRole.UserRole + 3  # a search result drawn with its match in bold


def marked(text: str, matches: list[list[int]]) -> str:
    """`text` as HTML with the matched spans in bold."""
    out, at = [], 0
    for start, length in matches:
        if start < at:
            continue
        out += [html.escape(text[at:start]), "<b>", html.escape(text[start:start + length]),
                "</b>"]
        at = start + length
    return "".join(out) + html.escape(text[at:])


class ResultDelegate(QStyledItemDelegate):
    """Draws a search result's title and its snippet with the matched words in bold."""

    def _document(self, option: QStyleOptionViewItem, index) -> QTextDocument:
        document = QTextDocument()
        document.setDefaultFont(option.font)
        document.setDocumentMargin(2)
        document.setHtml(index.data(HtmlRole))
        document.setTextWidth(option.rect.width() or 200)
        return document

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index) -> None:
        if index.data(HtmlRole) is None:
            super().paint(painter, option, index)
            return
        self.initStyleOption(option, index)
        option.text = ""
        style = option.widget.style() if option.widget else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, option, painter, option.widget)
        document = self._document(option, index)
        selected = option.state & QStyle.StateFlag.State_Selected
        context = QAbstractTextDocumentLayout.PaintContext()
        context.palette.setColor(QPalette.ColorRole.Text, option.palette.color(
            QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text))
        painter.save()
        painter.translate(option.rect.topLeft())
        document.documentLayout().draw(painter, context)
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index) -> QSize:
        if index.data(HtmlRole) is None:
            return super().sizeHint(option, index)
        option = QStyleOptionViewItem(option)
        option.rect.setWidth(option.widget.viewport().width() if option.widget else 200)
        size = self._document(option, index).size()
        return QSize(round(size.width()), round(size.height()))


def shown_title(title: str) -> str:
    # the default title is stored in English; only it is said in the chosen language
    return tr("New chat") if title == NEW_TITLE else title


def _when(stamp: float) -> str:
    if time.localtime(stamp)[:3] == time.localtime()[:3]:
        return time.strftime("%H:%M", time.localtime(stamp))
    return time.strftime("%Y-%m-%d", time.localtime(stamp))


class ConversationSidebar(QDockWidget):
    # Conversation ids: objects, not int (32 bits in Qt); a synced device numbers above
    open_requested = Signal(object)
    new_requested = Signal()
    rename_requested = Signal(object, str)
    delete_requested = Signal(object)
    restore_requested = Signal(object)
    export_requested = Signal(object)
    copy_requested = Signal(object)
    search_requested = Signal(str)
    deleted_requested = Signal(bool)  # show the deleted ones (True) or the others
    result_chosen = Signal(object, str)  # conversation id, turn id of the message found

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(tr("Conversations"), parent)
        self.setObjectName("conversationsDock")
        self.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetClosable
                         | QDockWidget.DockWidgetFeature.DockWidgetMovable)
        self.current: int | None = None
        self.showing_deleted = False
        self.new_button = QPushButton(tr("New chat"))
        self.new_button.setAccessibleName(tr("New chat"))
        self.new_button.clicked.connect(self.new_requested)
        self.search = QLineEdit()
        self.search.setObjectName("conversationSearch")
        self.search.setAccessibleName(tr("Search all conversations"))
        self.search.setPlaceholderText(tr("Search all conversations…"))
        self.search.setClearButtonEnabled(True)
        self._search_later = QTimer(self)
        self._search_later.setSingleShot(True)
        self._search_later.setInterval(250)  # search once typing pauses, not per key
        self._search_later.timeout.connect(self._search)
        self.search.textChanged.connect(lambda _text: self._search_later.start())
        self.list = QListWidget()
        self.list.setObjectName("conversationList")
        self.list.setAccessibleName(tr("Conversations"))
        self.list.setWordWrap(True)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setItemDelegate(ResultDelegate(self.list))
        self.list.itemActivated.connect(self._chosen)
        self.list.itemClicked.connect(self._chosen)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._menu)
        self.deleted_button = QPushButton(tr("Deleted conversations"))
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
        self.setMinimumWidth(chars(self, 28))

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
            title = shown_title(row["title"])
            item = QListWidgetItem(title)
            item.setData(IdRole, row["id"])
            when = _when(row["updated_at"])
            item.setToolTip(f"{title}\n"
                            + (tr("{when} · 1 message", when=when) if count == 1
                               else tr("{when} · {count} messages", when=when, count=count))
                            + ("\n" + tr("Deleted: right-click to restore") if deleted else ""))
            if row.get("imported"):  # its own date: when it was said, elsewhere
                item.setData(HtmlRole, f"{html.escape(title)}<br><small>" + html.escape(
                    tr("Imported · {date}", date=_when(row["created_at"]))) + "</small>")
                item.setToolTip(item.toolTip() + "\n" + tr("Imported from another app"))
            if row["id"] == current and not deleted:
                font = QFont(item.font())
                font.setBold(True)
                item.setFont(font)
            self.list.addItem(item)
            if row["id"] == current and not deleted:
                self.list.setCurrentItem(item)
        if not rows:
            empty = QListWidgetItem(tr("No deleted conversations") if deleted else
                                    tr("No conversations yet"))
            empty.setFlags(Qt.ItemFlag.NoItemFlags)
            self.list.addItem(empty)

    def set_results(self, results: list[dict[str, Any]]) -> None:
        self.list.clear()
        for row in results:
            snippet = marked(row["snippet"], row.get("matches") or [])
            said = tr("You: {message}", message=snippet) if row["role"] == "user" \
                else tr("Assistant: {message}", message=snippet)
            title = shown_title(row["title"])
            item = QListWidgetItem(f"{title}\n{row['snippet']}")
            item.setData(HtmlRole, f"<b>{html.escape(title)}</b><br>{said}")
            item.setData(IdRole, row["conversation_id"])
            item.setData(TurnRole, row.get("turn_id") or "")
            item.setToolTip(row["snippet"])
            self.list.addItem(item)
        if not results:
            empty = QListWidgetItem(tr("Nothing found for “{query}”",
                                       query=self.search.text().strip()))
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
        self.deleted_button.setText(tr("Back to conversations") if shown
                                    else tr("Deleted conversations"))
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
            menu.addAction(tr("Restore"), lambda: self.restore_requested.emit(conversation))
        else:
            menu.addAction(tr("Rename…"), lambda: self._rename(item, conversation))
            menu.addAction(tr("Export as Markdown…"),
                           lambda: self.export_requested.emit(conversation))
            menu.addAction(tr("Copy as Markdown"), lambda: self.copy_requested.emit(conversation))
            menu.addAction(tr("Delete"), lambda: self.delete_requested.emit(conversation))
        menu.exec(self.list.viewport().mapToGlobal(position))

    def _rename(self, item: QListWidgetItem, conversation: int) -> None:
        shown = item.text().split("\n")[0]
        title, ok = ask_text(self, tr("Rename conversation"), tr("Title:"),
                                         text=shown)
        if ok and title.strip():
            if title == shown == tr("New chat"):
                title = NEW_TITLE  # kept as stored, so the first message still names it
            self.rename_requested.emit(conversation, title)
