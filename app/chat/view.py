"""The conversation view: a list view over ChatModel that follows the newest message."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QModelIndex, QPersistentModelIndex, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence, QMouseEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QListView,
    QMenu,
    QStyleOptionViewItem,
    QToolButton,
    QWidget,
)

from app.chat.delegate import MessageDelegate
from app.chat.model import ChatModel, MessageRole
from core.i18n import tr

OLDER_PAGE = 100  # older messages brought in per scroll to the top


class ChatView(QListView):
    retry_requested = Signal()
    undo_turn_requested = Signal(str)  # a turn id
    code_copied = Signal(str)
    memory_note_clicked = Signal(str)  # the turn id of the reply whose line was clicked
    regenerate_requested = Signal(str)  # the turn whose reply is asked for again
    edit_sent = Signal(str, str)  # the turn of the message edited, its new text
    delete_turn_requested = Signal(str)
    branch_requested = Signal(str, int)  # an edited message's turn, -1 or 1: another branch
    restore_requested = Signal()  # Ctrl+Z in the chat: bring the last deleted exchange back

    def __init__(self, model: ChatModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chatView")
        self.setAccessibleName(tr("Conversation"))
        self.chat = model
        self.setModel(model)
        self.delegate = MessageDelegate(self)
        self.delegate.retry_requested = self.retry_requested.emit
        self.delegate.code_copied = self.code_copied.emit
        self.delegate.memory_note_clicked = self._memory_note_clicked
        self.delegate.reasoning_toggled = self.toggle_reasoning
        self.delegate.action_requested = self.run_action
        self._edit_index: QPersistentModelIndex | None = None  # the message being edited
        self.restorable = False  # a deleted exchange Ctrl+Z can bring back
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
        self._unseen: set[int] = set()  # rows new or grown while the person read further up
        self.jump = QToolButton(self)
        self.jump.setObjectName("jumpToLatest")
        self.jump.setAccessibleName(tr("Jump to the latest message"))
        self.jump.setCursor(Qt.CursorShape.PointingHandCursor)
        self.jump.clicked.connect(self.follow_latest)
        self.jump.hide()
        self._loading_older = False
        self._restore_from_bottom: int | None = None  # set while older rows come in
        self._text_index: QPersistentModelIndex | None = None  # the selectable message
        self._forward_to: QWidget | None = None  # where a drag that began on text goes
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.verticalScrollBar().valueChanged.connect(self._note_position)
        self.verticalScrollBar().rangeChanged.connect(self._keep_following)
        model.rowsInserted.connect(self._on_rows_inserted)
        model.modelReset.connect(self.delegate.clear_caches)
        model.modelAboutToBeReset.connect(self.close_text)
        model.modelAboutToBeReset.connect(self.cancel_edit)
        model.rowsAboutToBeRemoved.connect(lambda *_: self._edit_gone())
        model.modelReset.connect(lambda: self._set_follow(True))

        copy = QAction(tr("Copy message"), self)
        copy.setShortcut(QKeySequence.StandardKey.Copy)
        copy.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        copy.triggered.connect(self.copy_selected)
        self.addAction(copy)

    # -- following the newest message ------------------------------------------------------

    def _set_follow(self, follow: bool) -> None:
        self._follow = follow
        if follow:
            self.scrollToBottom()
        self._update_jump()

    def follow_latest(self) -> None:
        """Back to the newest message, and stay there as replies stream in (sending a
        message does this; so does the Jump to latest button)."""
        self._set_follow(True)

    def _update_jump(self) -> None:
        """Scrolled up from the end: offer the way back, with how many messages came or
        grew below since."""
        if self._follow:
            self._unseen.clear()
        self.jump.setVisible(not self._follow)
        if not self._follow:
            count = len(self._unseen)
            self.jump.setText(tr("↓ Jump to latest") if not count
                              else tr("↓ Jump to latest (1 new message)") if count == 1
                              else tr("↓ Jump to latest ({count} new messages)", count=count))
            self.jump.adjustSize()
            self._place_jump()

    def _place_jump(self) -> None:
        margin = self.fontMetrics().height()
        area = self.viewport().geometry()
        self.jump.move(area.right() - self.jump.width() - margin,
                       area.bottom() - self.jump.height() - margin)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._place_jump()

    def viewportEvent(self, event) -> bool:
        """Heights follow the width: when the viewport's width changes (the window, a dock,
        a scroll bar appearing), every row is measured and placed again. The list's own
        relayout can run before the width settles and keep rows placed for the old one,
        which drew text over the next message."""
        if event.type() == QEvent.Type.Resize and event.size().width() != \
                event.oldSize().width():
            self.scheduleDelayedItemsLayout()
        return super().viewportEvent(event)

    def _note_position(self, value: int) -> None:
        bar = self.verticalScrollBar()
        following = value >= bar.maximum() - self.fontMetrics().height()
        if following != self._follow:
            self._follow = following
            self._update_jump()
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

    def _on_rows_inserted(self, _parent: QModelIndex, first: int, last: int) -> None:
        if self._follow:
            self.scrollToBottom()
        elif first > 0 and not self._loading_older and self._restore_from_bottom is None:
            self._unseen.update(range(first, last + 1))  # new ones, not older ones
            self._update_jump()

    def dataChanged(self, top_left, bottom_right, roles=()) -> None:
        """A growing reply changes its row's height: ask for a new layout of the rows."""
        text = self._text_index
        if text is not None and text.isValid() \
                and top_left.row() <= text.row() <= bottom_right.row():
            self.close_text()  # its text changed: the overlay would show the old one
        super().dataChanged(top_left, bottom_right, roles)
        self.scheduleDelayedItemsLayout()
        latest = self.chat.rowCount() - 2  # the newest exchange; older edits are not news
        if not self._follow and top_left.isValid() and bottom_right.row() >= latest:
            before = len(self._unseen)
            self._unseen.update(range(max(top_left.row(), latest), bottom_right.row() + 1))
            if len(self._unseen) != before:
                self._update_jump()

    def _memory_note_clicked(self, row: int) -> None:
        turn = self.chat.messages[row].turn_id
        if turn:
            self.memory_note_clicked.emit(turn)

    # -- selecting text inside a message -----------------------------------------------------

    def _body_at(self, point: QPoint) -> QModelIndex | None:
        """The message whose text is under `point` (viewport coordinates)."""
        index = self.indexAt(point)
        if not index.isValid():
            return None
        message = self.chat.messages[index.row()]
        if message.streaming or not message.content:
            return None
        option = QStyleOptionViewItem()
        self.initViewItemOption(option)
        option.rect = self.visualRect(index)
        return index if self.delegate.body_rect(option, message).contains(point) else None

    def open_text(self, index: QModelIndex, focus: bool = False) -> QWidget | None:
        """Put the selectable text over this message's body (one message at a time)."""
        if self._text_index is None or QModelIndex(self._text_index) != index:
            self.close_text()
            message = self.chat.messages[index.row()]
            if message.streaming or not message.content \
                    or message is self.delegate.edit_message:
                return None
            self.openPersistentEditor(index)
            self._text_index = QPersistentModelIndex(index)
            editor = self.indexWidget(index)
            if editor is not None:
                editor.menu_requested = lambda where, chosen: self.show_menu(
                    QModelIndex(self._text_index), where, chosen)
                editor.installEventFilter(self)  # Esc goes back to the conversation
        editor = self.indexWidget(index)
        if focus and editor is not None:
            editor.setFocus()
        return editor

    def close_text(self) -> None:
        if self._text_index is not None:
            if self._text_index.isValid():
                self.closePersistentEditor(QModelIndex(self._text_index))
            self._text_index = None
            self._forward_to = None

    def _forward(self, event: QMouseEvent) -> None:
        """Hand the event to the selectable text. An event it leaves unaccepted comes back
        up to this view, and is then taken as handled rather than sent round again."""
        target, self._forward_to = self._forward_to, None
        if target is None:
            return
        local = target.mapFrom(self.viewport(), event.position().toPoint())
        copy = QMouseEvent(event.type(), local, event.globalPosition(), event.button(),
                           event.buttons(), event.modifiers())
        QApplication.sendEvent(target, copy)
        if event.type() != QEvent.Type.MouseButtonRelease:
            self._forward_to = target

    def _press_on_text(self, event: QMouseEvent) -> bool:
        """A press (or double click) on a message's text starts a selection there: the
        selectable text is put over it and gets this event and the drag that follows."""
        index = self._body_at(event.position().toPoint())
        if index is None or event.button() != Qt.MouseButton.LeftButton:
            return False
        self.setCurrentIndex(index)
        editor = self.open_text(index, focus=True)
        if editor is None:
            return False
        self._forward_to = editor.viewport()
        self._forward(event)
        return True

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if not self._press_on_text(event):
            super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._forward_to is not None and event.buttons():
            self._forward(event)
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self._forward_to is not None:
            self._forward(event)
            return
        super().mouseReleaseEvent(event)

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        if not self._press_on_text(event):
            super().mouseDoubleClickEvent(event)

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.KeyPress and event.key() == Qt.Key.Key_Escape \
                and self._text_index is not None and watched is self.indexWidget(
                    QModelIndex(self._text_index)):
            self.close_text()
            self.setFocus()
            return True
        return super().eventFilter(watched, event)

    # -- editing a message where it stands ------------------------------------------------

    def start_edit(self, row: int) -> None:
        """Your message at `row` in a box on itself, with Cancel and Send."""
        message = self.chat.messages[row] if 0 <= row < len(self.chat.messages) else None
        if message is None or message.role != "user" or not message.turn_id \
                or message.streaming:
            return
        self.cancel_edit()
        self.close_text()
        turns = [m.turn_id for m in self.chat.messages if m.turn_id and m.role == "user"]
        delegate = self.delegate
        delegate.edit_message = message
        delegate.edit_later = len(turns) - 1 - turns.index(message.turn_id)
        delegate.edit_height = 6 * self.fontMetrics().lineSpacing()
        index = self.chat.index(row)
        self.chat.change(row)  # laid out again with room for the box
        self.openPersistentEditor(index)
        self._edit_index = QPersistentModelIndex(index)
        editor = self.indexWidget(index)
        width = self.delegate.body_rect(self._option(), message).width()
        delegate.edit_height = editor.height_for(width)
        self.chat.change(row)
        editor.cancelled.connect(self.cancel_edit)
        editor.sent.connect(lambda text, turn=message.turn_id: self._edited(turn, text))
        self.scrollTo(index)
        editor.text.setFocus()

    def _option(self) -> QStyleOptionViewItem:
        option = QStyleOptionViewItem()
        self.initViewItemOption(option)
        option.rect = self.viewport().rect()
        return option

    def editor_of_edit(self) -> QWidget | None:
        if self._edit_index is None or not self._edit_index.isValid():
            return None
        return self.indexWidget(QModelIndex(self._edit_index))

    def cancel_edit(self) -> None:
        """Leave the message as it was; the keyboard goes back to it."""
        index, self._edit_index = self._edit_index, None
        message, self.delegate.edit_message = self.delegate.edit_message, None
        if index is not None and index.isValid():
            self.closePersistentEditor(QModelIndex(index))
            if message in self.chat.messages:
                self.chat.change(self.chat.messages.index(message))
            self.setCurrentIndex(QModelIndex(index))
            self.setFocus()

    def _edit_gone(self) -> None:
        """Rows are going (a new turn, another conversation): the box goes with them."""
        if self._edit_index is not None and not self._edit_index.isValid():
            self._edit_index = None
            self.delegate.edit_message = None

    def _edited(self, turn: str, text: str) -> None:
        self.cancel_edit()
        self.edit_sent.emit(turn, text)

    def run_action(self, row: int, name: str) -> None:
        """Copy, Edit, Regenerate or Delete, from a message's header (hover or keyboard)."""
        message = self.chat.messages[row]
        self.setCurrentIndex(self.chat.index(row))
        if name == "copy":
            self.copy_selected()
        elif name == "edit":
            self.start_edit(row)
        elif name == "regenerate" and message.turn_id:
            self.regenerate_requested.emit(message.turn_id)
        elif name == "delete" and message.turn_id and not message.streaming:
            self.delete_turn_requested.emit(message.turn_id)  # the exchange; Ctrl+Z undoes
        elif name in ("older", "newer") and message.role == "user" and message.turn_id:
            self.branch_requested.emit(message.turn_id, -1 if name == "older" else 1)
        elif name in ("older", "newer"):
            self.chat.show_version(row, -1 if name == "older" else 1)

    def event(self, event) -> bool:
        """Ctrl+Z here brings back the exchange just deleted, before the window's Undo
        (of memory changes) gets it."""
        if event.type() == QEvent.Type.ShortcutOverride and self.restorable and \
                event.matches(QKeySequence.StandardKey.Undo):
            event.accept()
            return True
        return super().event(event)

    # -- actions on messages ---------------------------------------------------------------

    def selected_row(self) -> int | None:
        rows = self.selectionModel().selectedRows()
        return rows[0].row() if rows else None

    def selected_turn(self) -> str | None:
        row = self.selected_row()
        return self.chat.messages[row].turn_id if row is not None else None

    def copy_selected(self) -> None:
        """The selected message as text (Markdown marks rendered away)."""
        row = self.selected_row()
        if row is None:
            return
        message = self.chat.messages[row]
        if message.role == "user":
            text = message.content
        else:
            option = QStyleOptionViewItem()
            self.initViewItemOption(option)
            text = self.delegate.layout(option, message).body.toPlainText()
        QGuiApplication.clipboard().setText(text)

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
        if event.type() == event.Type.FontChange:  # text zoom, or the system's font
            self.delegate.clear_caches()
            self.verticalScrollBar().setSingleStep(self.fontMetrics().height() * 2)
            self.scheduleDelayedItemsLayout()
        super().changeEvent(event)

    def keyPressEvent(self, event) -> None:
        row = self.selected_row()
        if self.restorable and event.matches(QKeySequence.StandardKey.Undo):
            self.restore_requested.emit()
            return
        if event.key() == Qt.Key.Key_Space and row is not None:
            self.toggle_reasoning(row)
            return
        if event.key() in (Qt.Key.Key_Left, Qt.Key.Key_Right) and not event.modifiers() \
                and row is not None and self.chat.messages[row].position()[1] > 1:
            self.run_action(row, "older" if event.key() == Qt.Key.Key_Left else "newer")
            return
        if event.key() == Qt.Key.Key_Delete and not event.modifiers() and row is not None:
            self.run_action(row, "delete")  # the focused message's exchange
            return
        if row is not None and not event.modifiers() and event.key() in (Qt.Key.Key_E,
                                                                          Qt.Key.Key_R):
            message = self.chat.messages[row]
            wanted = "edit" if event.key() == Qt.Key.Key_E else "regenerate"
            if (wanted == "edit") == (message.role == "user"):
                self.run_action(row, wanted)
                return
        opens_text = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_F2)
        if opens_text and row is not None \
                and self.open_text(self.chat.index(row), focus=True) is not None:
            return  # select with Shift+arrows or Ctrl+A; Esc goes back
        super().keyPressEvent(event)

    def contextMenuEvent(self, event) -> None:
        index = self.indexAt(event.pos())
        if index.isValid():
            self.show_menu(index, event.globalPos(), "")

    def show_menu(self, index: QModelIndex, where: QPoint, chosen: str) -> None:
        """The message's menu; `chosen` is text selected inside it, if any."""
        if not index.isValid():
            return
        self.setCurrentIndex(index)
        message = index.data(MessageRole)
        menu = QMenu(self)
        if chosen:
            menu.addAction(tr("Copy"), lambda: QGuiApplication.clipboard().setText(chosen))
        menu.addAction(tr("Copy message"), self.copy_selected)
        menu.addAction(tr("Copy as Markdown"),
                       lambda: QGuiApplication.clipboard().setText(message.content))
        if message.turn_id and message.role == "assistant" and not message.streaming:
            menu.addAction(tr("Regenerate reply"),
                           lambda: self.regenerate_requested.emit(message.turn_id))
        if message.turn_id and message.role == "user":
            menu.addAction(tr("Edit and resend"), lambda: self.start_edit(index.row()))
        if message.reasoning:
            menu.addAction(tr("Hide reasoning") if message.reasoning_open else tr("Show reasoning"),
                           lambda: self.toggle_reasoning(index.row()))
        if message is self.delegate.retry_message:
            menu.addAction(tr("Retry"), self.retry_requested.emit)
        if message.turn_id:
            menu.addAction(tr("Undo this turn's memory changes"),
                           lambda: self.undo_turn_requested.emit(message.turn_id))
            menu.addAction(tr("Delete this exchange"),
                           lambda: self.delete_turn_requested.emit(message.turn_id))
        menu.exec(where)
