"""Read a JSON object's members one at a time, its arrays one element at a time.

A memory export can hold millions of rows; `json.load` on it took gigabytes. This walks
the top-level object itself and hands each value, or each element of an array value, to
the standard library's C decoder, so memory stays at one element plus one read buffer
whatever the file's size, and the file is read once. (ijson, measured on a 600 MB export,
needs one pass per array and one more for the top-level keys: 17 s against 7 s here.)
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, TextIO

CHUNK_CHARS = 1 << 20
MAX_VALUE_CHARS = 8 << 20  # one node or edge is far smaller; past this the JSON is broken
_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class NotJSON(ValueError):
    """The text is not JSON, or not an object at the top level; says where."""


class NotAnObject(NotJSON):
    """The text starts with something other than an object."""


class NotAnArray(NotJSON):
    """The text starts with something other than an array."""


class TooLarge(NotJSON):
    """One value is larger than a reader holds at once (`most` characters)."""

    def __init__(self, most: int) -> None:
        super().__init__(f"one value is larger than {most >> 20} MB")
        self.most = most


def _ran_out(error: json.JSONDecodeError, text: str) -> bool:
    """The decoder stopped because the text ended, not at a wrong character."""
    return error.msg.startswith("Unterminated string") or error.pos >= len(text) - 1


class _Buffer:
    """Text read so far and not yet consumed, refilled in chunks."""

    def __init__(self, stream: TextIO, max_value_chars: int = MAX_VALUE_CHARS) -> None:
        self.stream = stream
        self.max_value_chars = max_value_chars
        self.text = ""
        self.pos = 0
        self.consumed = 0  # characters dropped before `text`, for positions in messages
        self.ended = False

    def more(self) -> bool:
        if self.ended:
            return False
        chunk = self.stream.read(CHUNK_CHARS)
        if not chunk:
            self.ended = True
            return False
        self.consumed += self.pos
        self.text = self.text[self.pos:] + chunk
        self.pos = 0
        return True

    def peek(self) -> str:
        """The next character that is not white space, or "" at the end of the text."""
        while True:
            self.pos = _SPACE.match(self.text, self.pos).end()
            if self.pos < len(self.text) or not self.more():
                return self.text[self.pos:self.pos + 1]

    def take(self, expected: str) -> None:
        found = self.peek()
        if found != expected:
            self.fail(f"expected {expected!r}, found {found or 'the end of the file'!r}")
        self.pos += 1

    def value(self) -> Any:
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.text, self.pos)
            except json.JSONDecodeError as error:
                if len(self.text) - self.pos > self.max_value_chars:
                    if _ran_out(error, self.text):  # cut only by the bound: it is too big
                        raise TooLarge(self.max_value_chars) from None
                    self.fail(error.msg)
                if not self.more():
                    self.fail(error.msg)
                continue
            except RecursionError:
                self.fail("nested too deeply")
            if end == len(self.text) and self.more():
                continue  # a number may go on in the next chunk
            self.pos = end
            return value

    def fail(self, reason: str) -> None:
        # json's own words may end in "at" ("Unterminated string starting at"): said once
        raise NotJSON(f"{reason.removesuffix(' at')} at character {self.consumed + self.pos:,}")


def members(stream: TextIO) -> Iterator[tuple[str, str, Any]]:
    """Events for the top-level object: ("value", key, value) for a member that is not an
    array, ("array", key, None) when an array member starts, then ("item", key, element)
    for each of its elements. Raises NotJSON, at the first broken character."""
    buffer = _Buffer(stream)
    if buffer.peek() != "{":
        raise NotAnObject("the file does not hold a JSON object")
    buffer.pos += 1
    if buffer.peek() == "}":
        buffer.pos += 1
    else:
        while True:
            key = buffer.value()
            if not isinstance(key, str):
                buffer.fail("expected a member name")
            buffer.take(":")
            if buffer.peek() == "[":
                buffer.pos += 1
                yield "array", key, None
                yield from _elements(buffer, key)
            else:
                yield "value", key, buffer.value()
            if buffer.peek() == "}":
                buffer.pos += 1
                break
            buffer.take(",")
    if buffer.peek():
        buffer.fail("unexpected text after the object")


def elements(stream: TextIO, max_value_chars: int = MAX_VALUE_CHARS) -> Iterator[Any]:
    """The elements of a top-level array, one at a time: an export of chats is one array
    whose elements can each be large (`max_value_chars` bounds one). Raises NotAnArray
    when the text is not an array, NotJSON at the first broken character."""
    buffer = _Buffer(stream, max_value_chars)
    if buffer.peek() != "[":
        raise NotAnArray("the file does not hold a JSON array")
    buffer.pos += 1
    for _event, _key, value in _elements(buffer, ""):
        yield value
    if buffer.peek():
        buffer.fail("unexpected text after the array")


def _elements(buffer: _Buffer, key: str) -> Iterator[tuple[str, str, Any]]:
    if buffer.peek() == "]":
        buffer.pos += 1
        return
    while True:
        yield "item", key, buffer.value()
        if buffer.peek() == "]":
            buffer.pos += 1
            return
        buffer.take(",")

