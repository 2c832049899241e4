"""The conversation view: a list view over ChatModel that follows the newest message."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QAbstractItemView, QListView, QMenu, QWidget

from app.chat.delegate import MessageDelegate
from app.chat.model import ChatModel, MessageRole

OLDER_PAGE = 100  # older messages brought in per scroll to the top


class ChatView(QListView):
    retry_requested = Signal()
    undo_turn_requested = Signal(str)  # a turn id

    def __init__(self, model: ChatModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chatView")
        self.setAccessibleName("Conversation")
        self.chat = model
        self.setModel(model)
        self.delegate = MessageDelegate(self)
        self.delegate.retry_requested = self.retry_requested.emit
        self.delegate.reasoning_toggled = self.toggle_reasoning
        self.setItemDelegate(self.delegate)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.verticalScrollBar().setSingleStep(self.fontMetrics().height() * 2)
        self.setResizeMode(QListView.ResizeMode.Adjust)
        self.setUniformItemSizes(False)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFrameShape(QListView.Shape.NoFrame)
        self.setMouseTracking(True)
        self._follow = True
        self._loading_older = False
        self._restore_from_bottom: int | None = None  # set while older rows come in
        self.verticalScrollBar().valueChanged.connect(self._note_position)
        self.verticalScrollBar().rangeChanged.connect(self._keep_following)
        model.rowsInserted.connect(self._on_rows_inserted)
        model.modelReset.connect(self.delegate.clear_caches)
        model.modelReset.connect(lambda: self._set_follow(True))

        copy = QAction("Copy message", self)
        copy.setShortcut(QKeySequence.StandardKey.Copy)
        copy.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        copy.triggered.connect(self.copy_selected)
        self.addAction(copy)

    # -- following the newest message ------------------------------------------------------

    def _set_follow(self, follow: bool) -> None:
        self._follow = follow
        if follow:
            self.scrollToBottom()

    def _note_position(self, value: int) -> None:
        bar = self.verticalScrollBar()
        self._follow = value >= bar.maximum() - self.fontMetrics().height()
        if value < self.viewport().height() and self.chat.older and not self._loading_older:
            self._loading_older = True
            QTimer.singleShot(0, self._load_older)

    def _load_older(self) -> None:
        """Prepend a page of older messages. The view lays the rows out once, later; when
        the scroll range then grows, the same message is put back under the eye."""
        bar = self.verticalScrollBar()
        self._restore_from_bottom = bar.maximum() - bar.value()
        if not self.chat.load_older(OLDER_PAGE):
            self._restore_from_bottom = None
        self._loading_older = False

    def _keep_following(self, _minimum: int, maximum: int) -> None:
        if self._restore_from_bottom is not None:
            from_bottom, self._restore_from_bottom = self._restore_from_bottom, None
            self.verticalScrollBar().setValue(maximum - from_bottom)
        elif self._follow:
            self.verticalScrollBar().setValue(maximum)

    def _on_rows_inserted(self, _parent: QModelIndex, _first: int, _last: int) -> None:
        if self._follow:
            self.scrollToBottom()

    def dataChanged(self, top_left, bottom_right, roles=()) -> None:
        """A growing reply changes its row's height: ask for a new layout of the rows."""
        super().dataChanged(top_left, bottom_right, roles)
        self.scheduleDelayedItemsLayout()

    # -- actions on messages ---------------------------------------------------------------

    def selected_row(self) -> int | None:
        rows = self.selectionModel().selectedRows()
        return rows[0].row() if rows else None

    def selected_turn(self) -> str | None:
        row = self.selected_row()
        return self.chat.messages[row].turn_id if row is not None else None

    def copy_selected(self) -> None:
        row = self.selected_row()
        if row is not None:
            QGuiApplication.clipboard().setText(self.chat.messages[row].content)

    def toggle_reasoning(self, row: int) -> None:
        message = self.chat.messages[row]
        if message.reasoning:
            self.chat.change(row, reasoning_open=not message.reasoning_open)

    def set_retry_row(self, row: int | None) -> None:
        """Offer Retry on this row's message (None: on none)."""
        previous = self.delegate.retry_message
        self.delegate.retry_message = self.chat.messages[row] if row is not None else None
        for message in (previous, self.delegate.retry_message):
            if message is not None and message in self.chat.messages:
                self.chat.change(self.chat.messages.index(message))  # repaint

    def changeEvent(self, event) -> None:
        if event.type() == event.Type.FontChange:
            self.delegate.clear_caches()
        super().changeEvent(event)

    def keyPressEvent(self, event) -> None:
        row = self.selected_row()
        if event.key() == Qt.Key.Key_Space and row is not None:
            self.toggle_reasoning(row)
            return
        super().keyPressEvent(event)

    def contextMenuEvent(self, event) -> None:
        index = self.indexAt(event.pos())
        if not index.isValid():
            return
        self.setCurrentIndex(index)
        message = index.data(MessageRole)
        menu = QMenu(self)
        menu.addAction("Copy message", self.copy_selected)
        if message.reasoning:
            menu.addAction("Hide reasoning" if message.reasoning_open else "Show reasoning",
                           lambda: self.toggle_reasoning(index.row()))
        if message is self.delegate.retry_message:
            menu.addAction("Retry", self.retry_requested.emit)
        if message.turn_id:
            menu.addAction("Undo this turn's memory changes",
                           lambda: self.undo_turn_requested.emit(message.turn_id))
        menu.exec(event.globalPos())
