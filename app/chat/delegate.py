"""Draws one chat message: who and when, the Markdown body, the collapsed reasoning and an
inline error with Retry. One delegate paints every row, so 2,000 messages cost 2,000 rows of
data, not 2,000 widgets; laid-out documents are cached per message version and width."""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from dataclasses import dataclass

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QPointF,
    QRect,
    QRectF,
    QSize,
    Qt,
    QUrl,
)
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QDesktopServices,
    QFont,
    QFontDatabase,
    QFontMetrics,
    QGuiApplication,
    QMouseEvent,
    QPainter,
    QPalette,
    QTextDocument,
    QTextOption,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

from app.chat.code_blocks import code_rects, fix_tables, style_code_blocks
from app.chat.message_editor import MessageEditor
from app.chat.message_text import MessageText
from app.chat.model import ChatMessage, MessageRole, speaker_of, stamp_of
from app.looks.contrast import code_tint, tint
from app.looks.sizes import char_width, chars
from app.looks.text_marks import join_emoji_to_punctuation
from app.status.status_parts import first_upper
from core import i18n
from core.i18n import N_, tr

Index = QModelIndex | QPersistentModelIndex
CACHE_SIZE = 600  # documents kept laid out; enough for several screens of scrolling
LONG_STREAM = 20_000  # characters past which a streaming reply is shown as plain text…
STREAM_REFRESH = 0.25  # …and laid out again at most this often (seconds)
RETRY = N_("Retry")
COPY = N_("Copy")
MAX_COLUMN_CHARS = 110  # longer lines are hard to read on wide windows
# What each message offers on hover and on keyboard focus, at the right of its header.
ACTION_WORDS = {"copy": N_("Copy"), "edit": N_("Edit"), "regenerate": N_("Regenerate"),
                "delete": N_("Delete")}
VERSION_MARKS = {"older": "‹", "newer": "›", "position": ""}


def action_label(message: ChatMessage, name: str) -> str:
    if name == "position":
        shown, total = message.position()
        return f"{shown}/{total}"
    return VERSION_MARKS.get(name) or i18n.tr(ACTION_WORDS[name])


@dataclass
class MessageLayout:
    """Where each part of a message goes, computed once for paint, size and clicks."""

    bubble: QRect
    header_y: int
    body: QTextDocument
    body_top_left: QPointF
    reasoning_line: QRect | None
    reasoning: QTextDocument | None
    reasoning_top_left: QPointF | None
    error_line: QRect | None
    retry: QRect | None
    height: int
    copies: list[tuple[QRect, str]]  # each code block's Copy label and the code it copies
    memory_note: QRect | None = None  # "Remembered 2 · Recalled 3" under the reply
    actions: list[tuple[QRect, str]] | None = None  # Copy, Edit or Regenerate, in the header


class MessageDelegate(QStyledItemDelegate):
    def __init__(self, view: QAbstractItemView) -> None:
        super().__init__(view)
        self.view = view
        self._documents: OrderedDict[tuple, QTextDocument] = OrderedDict()
        self._heights: dict[tuple, int] = {}  # relayouts of known rows cost a lookup
        self._streamed: dict[int, tuple[int, float]] = {}  # long replies: version, when
        self.retry_message: ChatMessage | None = None  # the failed reply that offers Retry
        self.retry_requested = None  # set by the view: a callable taking no arguments
        self.code_copied = None  # set by the view: a callable taking the copied code
        self.memory_note_clicked = None  # set by the view: a callable taking the row
        self.editing: ChatMessage | None = None  # shown by a selectable text on top
        self.edit_message: ChatMessage | None = None  # being edited, in a box on itself
        self.edit_height = 0  # the box's height
        self.edit_later = 0  # exchanges after the one being edited
        self.action_requested = None  # set by the view: a callable taking (row, action)
        self.reasoning_toggled = None  # set by the view: a callable taking the row

    # -- layout ---------------------------------------------------------------------------

    def _document(self, message: ChatMessage, part: str, width: int,
                  font: QFont, palette: QPalette) -> QTextDocument:
        version = self._shown_version(message) if part == "body" else message.version
        key = (message.serial, version, part, width, font.key())
        document = self._documents.get(key)
        if document is not None:
            self._documents.move_to_end(key)
            return document
        document = QTextDocument()
        document.setDocumentMargin(0)
        document.setDefaultFont(font)
        if part == "body" and message.role == "user":
            document.setPlainText(message.content)  # as typed: line breaks and all
        elif part == "body" and message.streaming and len(message.content) > LONG_STREAM:
            document.setPlainText(message.content + " ▍")  # formatted when it is complete
        elif part == "body":
            text = message.content
            if message.streaming:
                text = (text or "") + " ▍"
            document.setMarkdown(text if text or message.error else "…")
            fix_tables(document)
            # Long words and code lines wrap instead of running out of the bubble.
            option = document.defaultTextOption()
            option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
            document.setDefaultTextOption(option)
            base = palette.color(QPalette.ColorRole.Base)
            mono = QFontMetrics(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
            line = QFontMetrics(font).height()
            document.code_blocks = style_code_blocks(  # type: ignore[attr-defined]
                document, base.lightnessF() < 0.5, highlight=not message.streaming,
                wrap_chars=max(8, int((width - line) / char_width(mono)) - 2),
                label_height=line, pad=line // 2)
        else:
            document.setPlainText(message.reasoning)
        join_emoji_to_punctuation(document)  # "Done ✅." without a gap before the "."
        document.setTextWidth(width)
        self._documents[key] = document
        if len(self._documents) > CACHE_SIZE:
            self._documents.popitem(last=False)
        return document

    def _shown_version(self, message: ChatMessage) -> int:
        """The version of a reply to draw. A long reply still streaming is laid out again
        at most every STREAM_REFRESH seconds, not on every token: each layout of it takes
        tens of milliseconds, and tokens come every few."""
        if not (message.streaming and len(message.content) > LONG_STREAM):
            self._streamed.pop(message.serial, None)  # finished: nothing left to throttle
            return message.version
        shown = self._streamed.get(message.serial)
        now = time.monotonic()
        if shown is None or now - shown[1] >= STREAM_REFRESH:
            self._streamed[message.serial] = (message.version, now)
            return message.version
        return shown[0]

    def clear_caches(self) -> None:
        """After a model reset: cached entries are keyed by object ids that may be reused."""
        self._documents.clear()
        self._heights.clear()

    def layout(self, option: QStyleOptionViewItem, message: ChatMessage) -> MessageLayout:
        metrics = QFontMetrics(option.font)
        pad = metrics.height() // 2
        viewport = max(self.view.viewport().width(), 12 * metrics.height())
        width = min(viewport, chars(metrics, MAX_COLUMN_CHARS))
        left = option.rect.left() + (viewport - width) // 2  # a readable column, centred
        indent = 4 * metrics.height() if message.role == "user" else 0
        bubble_left = left + pad + indent
        bubble_width = width - 2 * pad - indent
        inner_left = bubble_left + pad
        inner_width = max(bubble_width - 2 * pad, metrics.height())
        top = option.rect.top() + pad // 2
        y = top + pad
        header_y = y
        y += metrics.height() + pad // 2
        reasoning_line = reasoning = reasoning_top_left = None
        if message.reasoning:  # thinking came first, so it sits above the answer
            reasoning_line = QRect(inner_left, y, inner_width, metrics.height())
            y += metrics.height()
            if message.reasoning_open:
                small = QFont(option.font)
                small.setPointSizeF(option.font.pointSizeF() * 0.92)
                reasoning = self._document(message, "reasoning", inner_width - pad, small,
                                           option.palette)
                reasoning_top_left = QPointF(inner_left + pad, y + pad // 2)
                y += pad // 2 + round(reasoning.size().height())
            y += pad // 2
        body = self._document(message, "body", inner_width, option.font, option.palette)
        body_top_left = QPointF(inner_left, y)
        if message is self.edit_message:
            y += self.edit_height
        elif message.content or not message.error:  # a failed empty reply shows its error
            y += round(body.size().height())
        error_line = retry = None
        if message.error:  # whole, wrapped: its end says what to do
            y += pad // 2 if message.content else 0
            error_width = inner_width
            if message is self.retry_message:
                retry_width = metrics.horizontalAdvance(i18n.tr(RETRY)) + pad
                retry = QRect(inner_left + inner_width - retry_width, y, retry_width,
                              metrics.height())
                error_width = inner_width - retry_width - pad
            error_line = QRect(inner_left, y, error_width,
                               error_height(option.font, error_width, message.error))
            y += error_line.height()
        note = None
        if message.memory_note and not message.streaming:
            y += pad // 2
            note_width = min(inner_width, metrics.horizontalAdvance(
                f"◆ {message.memory_note}") + pad)
            note = QRect(inner_left, y, note_width, metrics.height())
            y += metrics.height()
        y += pad
        bubble = QRect(bubble_left, top, bubble_width, y - top)
        copies = [] if message is self.edit_message else \
            self._copy_labels(body, body_top_left, metrics, message)
        return MessageLayout(bubble, header_y, body, body_top_left, reasoning_line, reasoning,
                             reasoning_top_left, error_line, retry,
                             y - option.rect.top() + pad // 2, copies, note,
                             self._actions(message, option.font, inner_left,
                                           inner_left + inner_width, header_y))

    def _actions(self, message: ChatMessage, font: QFont, header_left: int, right: int,
                 y: int) -> list[tuple[QRect, str]]:
        """Copy, Edit (yours) or Regenerate (a reply), and Delete (the exchange),
        right-aligned in the header."""
        metrics = QFontMetrics(font)
        if message.streaming or message is self.edit_message or not message.turn_id:
            return []
        names = ["copy", "edit" if message.role == "user" else "regenerate", "delete"]
        rects = []
        for name in reversed(names):
            width = metrics.horizontalAdvance(action_label(message, name)) + metrics.height()
            rects.append((QRect(right - width, y, width, metrics.height()), name))
            right -= width
        if message.position()[1] <= 1:
            return rects[::-1]
        # ‹ 2/3 › (a reply's versions, a message's branches) follows the time, where it
        # always shows: right-aligned before the actions shown on hover, it floated in
        # the middle of the header, next to nothing
        left = header_left + header_width(message, font) + metrics.height() // 2
        marks = []
        for name in ("older", "position", "newer"):
            width = metrics.horizontalAdvance(action_label(message, name)) + metrics.height()
            marks.append((QRect(left, y, width, metrics.height()), name))
            left += width
        return marks + rects[::-1]

    @staticmethod
    def _copy_labels(body: QTextDocument, top_left: QPointF, metrics: QFontMetrics,
                     message: ChatMessage) -> list[tuple[QRect, str]]:
        """A Copy label at the top right of each finished code block, on the row above
        its code."""
        if message.streaming:
            return []
        labels = []
        width = metrics.horizontalAdvance(i18n.tr(COPY)) + metrics.height() // 2
        for code in getattr(body, "code_blocks", ()):
            first = body.documentLayout().blockBoundingRect(body.findBlockByNumber(code.first))
            rect = QRect(round(top_left.x() + body.textWidth()) - width - 2,
                         round(top_left.y() + first.top()) - metrics.height(), width,
                         metrics.height())
            labels.append((rect, code.text))
        return labels

    @staticmethod
    def _paint_languages(painter: QPainter, palette: QPalette, parts: MessageLayout,
                         metrics: QFontMetrics) -> None:
        """Each code block's language, at the left of the row above its code."""
        body = parts.body
        for code in getattr(body, "code_blocks", ()):
            if not code.language:
                continue
            first = body.documentLayout().blockBoundingRect(body.findBlockByNumber(code.first))
            painter.setPen(palette.color(QPalette.ColorRole.PlaceholderText))
            painter.drawText(QRect(round(parts.body_top_left.x()) + metrics.height() // 2,
                                   round(parts.body_top_left.y() + first.top())
                                   - metrics.height(), metrics.height() * 12,
                                   metrics.height()),
                             Qt.AlignmentFlag.AlignVCenter, code.language)

    # -- Qt delegate interface ------------------------------------------------------------

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        """Called for every row on each relayout, so the known case is one lookup; the
        caches are cleared when the model resets or the font changes."""
        rows = getattr(index.model(), "messages", None)
        message: ChatMessage = rows[index.row()] if rows is not None \
            else index.data(MessageRole)
        width = self.view.viewport().width()
        key = (message.serial, self._shown_version(message), width, message.reasoning_open,
               message is self.retry_message, message.memory_note,
               message is self.edit_message and self.edit_height)
        height = self._heights.get(key)
        if height is None:
            option = QStyleOptionViewItem(option)
            option.rect = QRect(0, 0, width, 0)
            height = self._heights[key] = self.layout(option, message).height
        return QSize(width, height)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        message: ChatMessage = index.data(MessageRole)
        parts = self.layout(option, message)
        palette = option.palette
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        radius = QFontMetrics(option.font).height() / 2
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        if message.role == "user":
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(tint(palette.color(QPalette.ColorRole.Base),
                                   palette.color(QPalette.ColorRole.Highlight), 0.12))
            painter.drawRoundedRect(parts.bubble, radius, radius)
        if selected or option.state & QStyle.StateFlag.State_HasFocus:
            highlight = palette.color(QPalette.ColorRole.Highlight)
            painter.setPen(highlight)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(parts.bubble.adjusted(0, 0, -1, -1), radius, radius)
        self._paint_header(painter, option, message, parts)
        self._paint_code_backgrounds(painter, palette, parts)
        if (message.content or not message.error) and message is not self.editing \
                and message is not self.edit_message:
            self._paint_document(painter, palette, parts.body, parts.body_top_left,
                                 QPalette.ColorRole.Text, visible=self.view.viewport().rect())
        muted = palette.color(QPalette.ColorRole.PlaceholderText)
        if parts.reasoning_line is not None:
            painter.setPen(muted)
            arrow = "▾" if message.reasoning_open else "▸"
            count = f"{len(message.reasoning):,}"
            label = tr("Thinking ({count} characters)", count=count) \
                if message.streaming and not message.content \
                else tr("Reasoning ({count} characters)", count=count)
            painter.drawText(parts.reasoning_line, Qt.AlignmentFlag.AlignVCenter,
                             f"{arrow} {label}")
        if parts.reasoning is not None and parts.reasoning_top_left is not None:
            self._paint_document(painter, palette, parts.reasoning, parts.reasoning_top_left,
                                 QPalette.ColorRole.PlaceholderText,
                                 visible=self.view.viewport().rect())
        if parts.error_line is not None:
            self._paint_error(painter, option, message, parts)
        if parts.memory_note is not None:
            painter.setPen(muted)
            painter.drawText(parts.memory_note, Qt.AlignmentFlag.AlignVCenter,
                             QFontMetrics(option.font).elidedText(
                                 f"◆ {message.memory_note}", Qt.TextElideMode.ElideRight,
                                 parts.memory_note.width()))
        if message is not self.edit_message:
            self._paint_languages(painter, palette, parts, QFontMetrics(option.font))
        painter.setPen(palette.color(QPalette.ColorRole.Link))
        for rect, _code in parts.copies:
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, i18n.tr(COPY))
        self._paint_actions(painter, option, message, parts)
        painter.restore()

    @staticmethod
    def _paint_actions(painter: QPainter, option: QStyleOptionViewItem, message: ChatMessage,
                       parts: MessageLayout) -> None:
        """Copy, Edit or Regenerate, and Delete on hover and keyboard focus; ‹ 2/3 ›
        always."""
        palette = option.palette
        hovered = bool(option.state & (QStyle.StateFlag.State_MouseOver
                                       | QStyle.StateFlag.State_Selected))
        shown, total = message.position()
        for rect, name in parts.actions or ():
            if name not in VERSION_MARKS and not hovered:
                continue
            idle = name == "position" or (name, shown) in (("older", 1), ("newer", total))
            painter.setPen(palette.color(QPalette.ColorRole.PlaceholderText if idle
                                         else QPalette.ColorRole.Link))
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, action_label(message, name))

    def _paint_header(self, painter: QPainter, option: QStyleOptionViewItem,
                      message: ChatMessage, parts: MessageLayout) -> None:
        bold = QFont(option.font)
        bold.setBold(True)
        speaker = speaker_of(message)
        painter.setFont(bold)
        painter.setPen(option.palette.color(QPalette.ColorRole.Text))
        left = parts.body_top_left.x()
        rect = QRect(round(left), parts.header_y, parts.bubble.width(),
                     QFontMetrics(bold).height())
        painter.drawText(rect, Qt.AlignmentFlag.AlignVCenter, speaker)
        painter.setFont(option.font)
        painter.setPen(option.palette.color(QPalette.ColorRole.PlaceholderText))
        stamp = stamp_of(message)
        rect.setLeft(rect.left() + QFontMetrics(bold).horizontalAdvance(speaker) +
                     QFontMetrics(option.font).height() // 2)
        painter.drawText(rect, Qt.AlignmentFlag.AlignVCenter, stamp)

    def _paint_error(self, painter: QPainter, option: QStyleOptionViewItem,
                     message: ChatMessage, parts: MessageLayout) -> None:
        assert parts.error_line is not None
        bold = QFont(option.font)
        bold.setBold(True)
        painter.setFont(bold)
        painter.setPen(option.palette.color(QPalette.ColorRole.Text))
        painter.drawText(parts.error_line, ERROR_FLAGS, error_words(message.error))
        if parts.retry is not None:
            painter.setPen(option.palette.color(QPalette.ColorRole.Link))
            font = QFont(option.font)
            font.setUnderline(True)
            painter.setFont(font)
            painter.drawText(parts.retry, Qt.AlignmentFlag.AlignCenter, i18n.tr(RETRY))

    @staticmethod
    def _paint_code_backgrounds(painter: QPainter, palette: QPalette,
                                parts: MessageLayout) -> None:
        blocks = getattr(parts.body, "code_blocks", ())
        if not blocks:
            return
        painter.save()
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(code_tint(palette))
        for rect in code_rects(parts.body, blocks):
            painter.drawRoundedRect(rect.translated(parts.body_top_left).adjusted(-4, -2, 4, 2),
                                    4, 4)
        painter.restore()

    @staticmethod
    def _paint_document(painter: QPainter, palette: QPalette, document: QTextDocument,
                        top_left: QPointF, color: QPalette.ColorRole, *,
                        visible: QRect) -> None:
        """Draw only the lines inside `visible` (the viewport): a 2,000-line reply drew
        every line on each repaint, 10 ms each, while only a screenful shows."""
        context = QAbstractTextDocumentLayout.PaintContext()
        text_palette = QPalette(palette)
        text_palette.setColor(QPalette.ColorRole.Text, palette.color(color))
        context.palette = text_palette
        context.clip = QRectF(visible).translated(-top_left)
        painter.save()
        painter.translate(top_left)
        document.documentLayout().draw(painter, context)
        painter.restore()

    # -- the selectable text over one message (see message_text) --------------------------

    def body_rect(self, option: QStyleOptionViewItem, message: ChatMessage) -> QRect:
        parts = self.layout(option, message)
        size = parts.body.size()
        return QRect(parts.body_top_left.toPoint(),
                     QSize(math.ceil(size.width()), math.ceil(size.height())))

    def createEditor(self, parent: QWidget, option: QStyleOptionViewItem,
                     index: Index) -> QWidget:
        message: ChatMessage = index.data(MessageRole)
        if message is self.edit_message:
            return MessageEditor(message.content, self.edit_later, parent)
        parts = self.layout(option, message)
        offset = parts.body_top_left.toPoint()
        editor = MessageText(parts.body, [(r.translated(-offset), code)
                                          for r, code in parts.copies], parent)
        editor.code_copied = self.code_copied
        self.editing = message
        return editor

    def updateEditorGeometry(self, editor: QWidget, option: QStyleOptionViewItem,
                             index: Index) -> None:
        rect = self.body_rect(option, index.data(MessageRole))
        if isinstance(editor, MessageEditor):
            rect.setHeight(self.edit_height)
        editor.setGeometry(rect)

    def setEditorData(self, editor: QWidget, index: Index) -> None:
        pass  # the text is the message's; nothing is edited

    def setModelData(self, editor: QWidget, model, index: Index) -> None:
        pass

    def destroyEditor(self, editor: QWidget, index: Index) -> None:
        if isinstance(editor, MessageText):
            self.editing = None
        super().destroyEditor(editor, index)

    def editorEvent(self, event: QEvent, model, option: QStyleOptionViewItem,
                    index: Index) -> bool:
        """Clicks on Retry, on the reasoning line and on links inside a message."""
        if event.type() != QEvent.Type.MouseButtonRelease or not isinstance(event, QMouseEvent):
            return False
        if event.button() != Qt.MouseButton.LeftButton:
            return False
        message: ChatMessage = index.data(MessageRole)
        parts = self.layout(option, message)
        point = event.position().toPoint()
        if parts.retry is not None and parts.retry.contains(point) and self.retry_requested:
            self.retry_requested()
            return True
        for rect, name in parts.actions or ():
            if rect.contains(point) and self.action_requested:
                self.action_requested(index.row(), name)
                return True
        for rect, code in parts.copies:
            if rect.contains(point):
                QGuiApplication.clipboard().setText(code)
                if self.code_copied:
                    self.code_copied(code)
                return True
        if parts.memory_note is not None and parts.memory_note.contains(point) \
                and self.memory_note_clicked:
            self.memory_note_clicked(index.row())
            return True
        if parts.reasoning_line is not None and parts.reasoning_line.contains(point) \
                and self.reasoning_toggled:
            self.reasoning_toggled(index.row())
            return True
        anchor = parts.body.documentLayout().anchorAt(event.position() - parts.body_top_left)
        if anchor:
            QDesktopServices.openUrl(QUrl(anchor))
            return True
        return False


def header_width(message: ChatMessage, font: QFont) -> int:
    """The speaker in bold and the time after it, as `_paint_header` puts them."""
    bold = QFont(font)
    bold.setBold(True)
    metrics = QFontMetrics(font)
    return (QFontMetrics(bold).horizontalAdvance(speaker_of(message)) + metrics.height() // 2
            + metrics.horizontalAdvance(stamp_of(message)))


ERROR_FLAGS = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextWordWrap


def error_words(error: str) -> str:
    """A failed reply's error as a sentence: its first letter raised (the backend's words
    start in lower case to be put inside other sentences)."""
    return f"⚠ {first_upper(error)}"


def error_height(font: QFont, width: int, error: str) -> int:
    """The height of the error's lines at `width`, in the bold it is painted in."""
    bold = QFont(font)
    bold.setBold(True)
    metrics = QFontMetrics(bold)
    return max(metrics.height(), metrics.boundingRect(
        QRect(0, 0, max(width, 1), 100 * metrics.height()), ERROR_FLAGS,
        error_words(error)).height())


