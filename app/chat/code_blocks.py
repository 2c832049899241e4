"""Code in a reply: a tinted, padded monospace block with its language and a Copy label on
a row of their own above the code, that wraps instead of spilling out, syntax colours from
Pygments once the reply is complete, and the text its Copy button copies.

Qt's Markdown importer marks every line of a code block with the block's language (empty
for an indented block); consecutive marked lines form one block.
"""

from __future__ import annotations

from dataclasses import dataclass

from pygments import lex
from pygments.lexers import get_lexer_by_name
from pygments.styles import get_style_by_name
from pygments.util import ClassNotFound
from PySide6.QtCore import QRectF
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QGuiApplication,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
    QTextTable,
)

from app.looks.contrast import code_tint, readable_on

# Characters of one block past which it stays uncoloured: colouring costs about 4 ms per
# 1,000 characters on the GUI thread, and a 2,000-line block took 440 ms.
MAX_HIGHLIGHTED = 10_000
# Lines of a block padded while the reply streams: a block format per line costs about
# 14 ms per 1,000 lines, so a longer block is padded once, when the reply is complete.
PADDED_WHILE_STREAMING = 300
GAP = 6  # pixels between a code block and the paragraph above it

@dataclass(frozen=True)
class CodeBlock:
    first: int  # number of its first and last text block in the document
    last: int
    language: str
    text: str


def find_code_blocks(document: QTextDocument) -> list[CodeBlock]:
    found: list[CodeBlock] = []
    block = document.begin()
    lines: list[str] = []
    first = language = None
    while True:
        marked = block.isValid() and block.blockFormat().hasProperty(
            QTextFormat.Property.BlockCodeLanguage)
        if marked and first is None:
            first, lines = block.blockNumber(), []
            language = str(block.blockFormat().property(
                QTextFormat.Property.BlockCodeLanguage) or "")
        if marked:
            lines.append(block.text())
        elif first is not None:
            found.append(CodeBlock(first, first + len(lines) - 1, language or "",
                                   "\n".join(lines)))
            first = None
        if not block.isValid():
            return found
        block = block.next()


def style_code_blocks(document: QTextDocument, dark: bool, highlight: bool,
                      wrap_chars: int, *, label_height: int = 0,
                      pad: int = 0) -> list[CodeBlock]:
    """Monospace, wrapped and (with `highlight`) coloured code blocks; answers the blocks.
    Their tinted background is painted by the chat's delegate (`code_rects`): a format
    on every line cost 28 ms for a 2,000-line block, and the reply stalls the window
    while it is formatted. `label_height` is kept free above each block for its
    language and Copy; `pad` is the code's distance from the tint's sides."""
    blocks = find_code_blocks(document)
    if not blocks:
        return blocks
    mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    mono.setPointSizeF(document.defaultFont().pointSizeF() * 0.95)
    style = get_style_by_name("monokai" if dark else "default")
    wrap = QTextBlockFormat()
    wrap.setNonBreakableLines(False)  # a long line wraps inside the block
    for code in blocks:
        cursor = QTextCursor(document.findBlockByNumber(code.first))
        end = document.findBlockByNumber(code.last)
        cursor.setPosition(end.position() + end.length() - 1, QTextCursor.MoveMode.KeepAnchor)
        face = QTextCharFormat()
        face.setFont(mono, QTextCharFormat.FontPropertiesInheritanceBehavior
                     .FontPropertiesSpecifiedOnly)
        face.setFontFamilies([mono.family()])
        cursor.mergeCharFormat(face)
        if pad and (highlight or code.last - code.first < PADDED_WHILE_STREAMING):
            padded = QTextBlockFormat()
            padded.setLeftMargin(pad)
            padded.setRightMargin(pad)
            cursor.mergeBlockFormat(padded)
        if label_height:
            room = QTextBlockFormat()
            room.setTopMargin(label_height + GAP)
            QTextCursor(document.findBlockByNumber(code.first)).mergeBlockFormat(room)
        block = document.findBlockByNumber(code.first)
        while block.isValid() and block.blockNumber() <= code.last:
            if block.length() > wrap_chars:  # only lines that would not fit
                QTextCursor(block).mergeBlockFormat(wrap)
            block = block.next()
        if highlight and len(code.text) <= MAX_HIGHLIGHTED:
            _colour(document, code, style)
    return blocks


def code_rects(document: QTextDocument, blocks: list[CodeBlock]) -> list[QRectF]:
    """Where each code block lies in the document, for its tinted background."""
    layout = document.documentLayout()
    rects = []
    for code in blocks:
        first = document.findBlockByNumber(code.first)
        top = layout.blockBoundingRect(first)
        bottom = layout.blockBoundingRect(document.findBlockByNumber(code.last))
        label = max(0.0, first.blockFormat().topMargin() - GAP)  # the language and Copy row
        rects.append(QRectF(0, top.top() - label, document.textWidth(),
                            bottom.bottom() - top.top() + label))
    return rects


def _colour(document: QTextDocument, code: CodeBlock, style) -> None:
    try:
        # Offsets must match the document's: no stripping of leading or trailing lines.
        lexer = get_lexer_by_name(code.language, stripnl=False, ensurenl=False) \
            if code.language else None
    except (ClassNotFound, ImportError):  # a language the packaged program leaves out
        lexer = None
    if lexer is None:
        return
    start = document.findBlockByNumber(code.first).position()
    cursor = QTextCursor(document)
    background = code_tint(QGuiApplication.palette())  # each colour reads on it at 4.5:1
    offset = 0
    for kind, value in lex(code.text, lexer):
        shown = style.style_for_token(kind)
        if shown.get("color") or shown.get("bold") or shown.get("italic"):
            face = QTextCharFormat()
            if shown.get("color"):
                face.setForeground(readable_on(QColor(f"#{shown['color']}"), background))
            if shown.get("bold"):
                face.setFontWeight(QFont.Weight.Bold)
            if shown.get("italic"):
                face.setFontItalic(True)
            cursor.setPosition(start + offset)
            cursor.setPosition(start + offset + len(value), QTextCursor.MoveMode.KeepAnchor)
            cursor.mergeCharFormat(face)
        offset += len(value)


def fix_tables(document: QTextDocument, gap: int = GAP) -> None:
    """Qt's Markdown importer puts an empty paragraph at the top of a table's first cell,
    which pushes its header text a line below the others, and after a code block it
    leaves that cell's header text regular: remove the paragraph, make the header row
    bold, and leave a gap above the table."""
    for frame in document.rootFrame().childFrames():
        if not isinstance(frame, QTextTable):
            continue
        cell = frame.cellAt(0, 0)
        first = cell.firstCursorPosition().block()
        if first.text() == "" and first.next().isValid() \
                and first.next().position() < cell.lastCursorPosition().position() + 1:
            cursor = QTextCursor(first)
            cursor.movePosition(QTextCursor.MoveOperation.NextBlock,
                                QTextCursor.MoveMode.KeepAnchor)
            cursor.removeSelectedText()
        bold = QTextCharFormat()
        bold.setFontWeight(QFont.Weight.Bold)
        for column in range(frame.columns()):
            header = frame.cellAt(0, column)
            cursor = header.firstCursorPosition()
            cursor.setPosition(header.lastCursorPosition().position(),
                               QTextCursor.MoveMode.KeepAnchor)
            cursor.mergeCharFormat(bold)
        spaced = frame.format()
        spaced.setTopMargin(max(spaced.topMargin(), gap))
        frame.setFormat(spaced)
