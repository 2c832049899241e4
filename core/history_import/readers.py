"""Read an export of past conversations, whichever app wrote it, one conversation at a time.

ChatGPT and Claude export a zip holding `conversations.json`, one JSON array of every
conversation the person ever had: hundreds of megabytes for a long-time user. It is never
loaded whole: its elements are decoded one at a time (`json_members.elements`), so memory
stays at one conversation whatever the file's size. The first element says which app
wrote it; each app's shape is read by its own module (`chatgpt`, `claude`, `locomo`), and
the app's own Markdown export by `markdown`. A broken file raises PastFormatError, possibly
half-way: the caller keeps everything or nothing.
"""

from __future__ import annotations

import importlib
import io
import itertools
import math
import os
import stat
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from core.errors import CodedError, ErrorCode
from core.i18n import N_
from core.store.json_members import NotAnArray, NotJSON, TooLarge, elements

FORMATS = ("chatgpt", "claude", "markdown", "locomo")
MARKDOWN_SUFFIXES = (".md", ".markdown")
EXPORT_NAME = "conversations.json"  # what both ChatGPT's and Claude's zips hold
MAX_VALUE_CHARS = 64 << 20  # one conversation; a single pasted message can be 5 MB
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a zip with files, an empty zip
_ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError)  # a zip damaged inside


@dataclass
class PastMessage:
    """One message as its app showed it; the person is always "user"."""

    role: str  # "user" or "assistant"
    text: str
    created_at: float | None  # Unix seconds
    source_id: str  # stable inside its conversation (a node id, a uuid, a dia_id, an index)
    speaker: str | None = None  # a name, where the format gives one (LoCoMo)


@dataclass
class PastConversation:
    """One conversation; `source` is the same each time the same file is read, so reading
    it again adds nothing."""

    source: str  # "chatgpt:<id>", "claude:<uuid>", "locomo:<sample>:<n>", "markdown:<hash>"
    title: str
    created_at: float | None
    updated_at: float | None
    messages: list[PastMessage]
    format: str  # one of FORMATS
    speakers: dict[str, str] | None = None  # {"user": name, "assistant": name} (LoCoMo)


class PastFormatError(CodedError, ValueError):
    """The file is not an export this app reads, or it is broken; says where."""


def broken(number: int, detail: str) -> PastFormatError:
    """A conversation whose structure makes no sense; `detail` is English, like a JSON
    decoder's message."""
    return PastFormatError(N_("the export is broken at conversation {number}: {detail}"),
                           number=number, detail=detail)


def not_an_export(path: Path) -> PastFormatError:
    return PastFormatError(N_("{name} is not a ChatGPT, Claude, LoCoMo or TrulyMEM export"),
                           name=path.name)


def seconds(value: Any) -> float | None:
    """A time given as Unix seconds, or None when it is missing or makes no sense."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value > 0 else None


def text_of(value: Any) -> str:
    """A text field, stripped; anything that is not a string reads as no text."""
    return value.strip() if isinstance(value, str) else ""


# -- the file ----------------------------------------------------------------------------

def open_file(path: Path) -> BinaryIO:
    """The file for reading as bytes. A device, a pipe or a folder is refused before it is
    read, and opening without blocking keeps a pipe with no writer from hanging."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        descriptor = os.open(path, flags)
    except FileNotFoundError:
        raise PastFormatError(N_("there is no file {name} in {folder}"), ErrorCode.NOT_FOUND,
                              name=path.name, folder=str(path.parent)) from None
    except OSError as error:
        raise PastFormatError(N_("cannot read {name}: {error}"), name=path.name,
                              error=error.strerror or type(error).__name__) from None
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise PastFormatError(N_("{name} is not a regular file (it is a device, a pipe or a "
                                 "folder); choose an export file"), name=path.name)
    return os.fdopen(descriptor, "rb")


def is_markdown(path: Path) -> bool:
    return path.suffix.lower() in MARKDOWN_SUFFIXES


@contextmanager
def json_items(path: str | Path) -> Iterator[Iterator[Any]]:
    """The elements of the export's top-level array, decoded one at a time, from a JSON
    file or from the `conversations.json` inside a zip. Every way the file can be broken
    comes out of the iterator as PastFormatError."""
    path = Path(path)
    with ExitStack() as stack:
        raw = stack.enter_context(open_file(path))
        try:
            zipped = path.suffix.lower() == ".zip" or raw.read(4) in _ZIP_MAGIC
            raw.seek(0)
        except OSError as error:
            raise PastFormatError(N_("cannot read {name}: {error}"), name=path.name,
                                  error=error.strerror or type(error).__name__) from None
        binary = _zip_member(raw, path, stack) if zipped else raw
        stream = io.TextIOWrapper(binary, encoding="utf-8-sig")
        yield _checked(elements(stream, MAX_VALUE_CHARS), path)


def _zip_member(raw: BinaryIO, path: Path, stack: ExitStack) -> BinaryIO:
    """The zip's conversations.json, at whatever folder depth: the shallowest one."""
    try:
        archive = stack.enter_context(zipfile.ZipFile(raw))
        found = [info for info in archive.infolist() if _is_export(info)]
        if not found:
            raise PastFormatError(N_("there is no conversations.json in the zip file {name}"),
                                  name=path.name)
        found.sort(key=lambda info: (info.filename.count("/"), info.filename))
        return stack.enter_context(archive.open(found[0]))
    except (*_ZIP_ERRORS, NotImplementedError, RuntimeError) as error:
        # RuntimeError: a file with a password; NotImplementedError: a compression
        # zipfile cannot read (Deflate64)
        raise _damaged(path, error) from None


def _is_export(info: zipfile.ZipInfo) -> bool:
    """conversations.json, not a Mac's resource copy of it (__MACOSX/, ._name)."""
    name = info.filename.replace("\\", "/")
    return not info.is_dir() and name.rsplit("/", 1)[-1] == EXPORT_NAME \
        and not name.startswith("__MACOSX/")


def _damaged(path: Path, error: BaseException) -> PastFormatError:
    return PastFormatError(N_("the zip file {name} is damaged: {detail}"), name=path.name,
                           detail=str(error) or type(error).__name__)


def _checked(items: Iterator[Any], path: Path) -> Iterator[Any]:
    """The elements, with every failure of the file said as PastFormatError."""
    try:
        yield from items
    except NotAnArray:
        raise not_an_export(path) from None
    except TooLarge as error:
        raise PastFormatError(N_("{name} holds one conversation larger than {most} MB: too "
                                 "large to import"), name=path.name,
                              most=error.most >> 20) from None
    except NotJSON as error:
        raise PastFormatError(N_("{name} is not valid JSON ({error})"), name=path.name,
                              error=str(error)) from None
    except UnicodeDecodeError:
        raise PastFormatError(N_("{name} is not UTF-8 text"), name=path.name) from None
    except _ZIP_ERRORS as error:
        raise _damaged(path, error) from None
    except OSError as error:
        raise PastFormatError(N_("cannot read {name}: {error}"), name=path.name,
                              error=error.strerror or type(error).__name__) from None


# -- which app wrote it ------------------------------------------------------------------

def kind(first: Any) -> str | None:
    """The format an export's first element is in, or None when no reader knows it."""
    if not isinstance(first, dict):
        return None
    if "mapping" in first:
        return "chatgpt"
    if "chat_messages" in first:
        return "claude"
    if "conversation" in first and "qa" in first:
        return "locomo"
    return None


def detect(path: str | Path) -> str:
    """The export's format (one of FORMATS), from the file's name or its first element;
    "" for an export that holds no conversation. Raises PastFormatError."""
    path = Path(path)
    if is_markdown(path):
        return "markdown"
    with json_items(path) as items:
        first = next(items, None)
    if first is None:
        return ""
    found = kind(first)
    if found is None:
        raise not_an_export(path)
    return found


def read(path: str | Path) -> Iterator[PastConversation]:
    """The export's conversations, one at a time, in the file's order; a conversation
    with no message to show is left out. Raises PastFormatError, possibly after some
    conversations were read."""
    path = Path(path)
    if is_markdown(path):
        yield from _reader("markdown").read(path)
        return
    with json_items(path) as items:
        first = next(items, None)
        if first is None:
            return
        found = kind(first)
        if found is None:
            raise not_an_export(path)
        yield from _reader(found).conversations(itertools.chain([first], items))


def _reader(name: str) -> Any:
    """A format's module, imported when needed: each imports this one for its types."""
    return importlib.import_module(f"core.history_import.{name}")


def numbered(items: Iterable[Any]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each element with its position from 1, refusing one that is not an object."""
    for number, item in enumerate(items, 1):
        if not isinstance(item, dict):
            raise broken(number, "it is not an object")
        yield number, item


def past_conversation(kind: str, ident: Any, number: int, messages: list[PastMessage],
                      **about: Any) -> PastConversation:
    """The conversation as `kind:ident`; where the export gives no id, the first message's
    (as stable: a conversation's root node is not) or, with no message, its place."""
    if not isinstance(ident, str) or not ident:
        ident = messages[0].source_id if messages else f"#{number}"
    return PastConversation(source=f"{kind}:{ident}", messages=messages, format=kind,
                            **about)


def read_each(items: Iterable[Any], read: Callable[[dict[str, Any], int], PastConversation]
              ) -> Iterator[PastConversation]:
    """Each element read as a conversation by `read(item, number)`; one with no message
    left (every one hidden, or empty) is not a conversation."""
    for number, item in numbered(items):
        conversation = read(item, number)
        if conversation.messages:
            yield conversation


__all__ = ["FORMATS", "PastConversation", "PastFormatError", "PastMessage", "detect",
           "read"]
