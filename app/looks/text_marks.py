"""Invisible marks that make text lay out as it reads, added only where it is shown.

A word joiner (U+2060) is zero-width and allows no line break. After an emoji it keeps
the next punctuation mark in the text's own font: Qt drew the "." of "Done ✅." with the
fallback font that followed the emoji's (a monospaced one), a gap wider than a space
("Done ✅ ."). After a hyphen it keeps a model's name on one line ("deepseek-/v4-flash"
broke at the hyphen). Copied text leaves the marks out (`plain`)."""

from __future__ import annotations

import re

from PySide6.QtGui import QTextCursor, QTextDocument, QTextFormat

JOINER = "\u2060"
# An emoji (with its variation selector, if any) and the punctuation mark after it.
_EMOJI_THEN_MARK = re.compile(
    "([\u2600-\u27bf\u2b00-\u2bff\U0001f000-\U0001faff]\ufe0f?)"
    "(?=[.,;:!?)\\]\u3001\u3002\uff01\uff0c\uff1a\uff1b\uff1f\uff09])")
_HYPHEN_IN_WORD = re.compile(r"(?<=\w)-(?=\w)")


def plain(text: str) -> str:
    """`text` without the marks, as it is copied."""
    return text.replace(JOINER, "")


def unbroken_at_hyphens(text: str) -> str:
    """"deepseek-v4-flash" that wraps as one word (a label's word wrap broke it at "-")."""
    return _HYPHEN_IN_WORD.sub("-" + JOINER, text)


def join_emoji_to_punctuation(document: QTextDocument) -> None:
    """A word joiner between each emoji and the punctuation after it, outside code."""
    block = document.begin()
    while block.isValid():
        text = block.text()
        if _EMOJI_THEN_MARK.search(text) and not block.blockFormat().hasProperty(
                QTextFormat.Property.BlockCodeFence):
            cursor = QTextCursor(block)
            # from the end, so the positions before each insertion stay right
            for match in reversed(list(_EMOJI_THEN_MARK.finditer(text))):
                units = len(text[:match.end()].encode("utf-16-le")) // 2
                cursor.setPosition(block.position() + units)
                if not cursor.charFormat().fontFixedPitch():  # inline code stays as written
                    cursor.insertText(JOINER)
        block = block.next()
