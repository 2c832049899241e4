"""The app's own Markdown export of one conversation (`core.store.conversations.markdown`),
read back: "# Title", then each message under a line "**You** · 2024-05-01 10:00" or
"**Assistant** · …" in local time. A chat exported on one computer can so be brought into
the memory on another. The file has no id, so its bytes' hash is its source: the same
file read twice is the same conversation."""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Iterator
from pathlib import Path

from core.history_import.readers import (
    PastConversation,
    PastFormatError,
    PastMessage,
    not_an_export,
    open_file,
)
from core.i18n import N_

MAX_BYTES = 64 << 20  # far past any one conversation; the file is read whole
HEADER = re.compile(r"\*\*(You|Assistant)\*\* · (\d{4}-\d{2}-\d{2} \d{2}:\d{2})")
NO_REPLY = re.compile(r"\*\(.*\)\*", re.DOTALL)  # how the export writes a failed reply
ROLES = {"You": "user", "Assistant": "assistant"}


def read(path: Path) -> Iterator[PastConversation]:
    """The file's one conversation; nothing when it has a title but no message."""
    data = _bytes(path)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise PastFormatError(N_("{name} is not UTF-8 text"), name=path.name) from None
    conversation = parse(text, source=f"markdown:{hashlib.sha256(data).hexdigest()[:16]}")
    if conversation is None:
        raise not_an_export(path)
    if conversation.messages:
        yield conversation


def _bytes(path: Path) -> bytes:
    with open_file(path) as file:
        try:
            data = file.read(MAX_BYTES + 1)
        except OSError as error:
            raise PastFormatError(N_("cannot read {name}: {error}"), name=path.name,
                                  error=error.strerror or type(error).__name__) from None
    if len(data) > MAX_BYTES:
        raise PastFormatError(N_("{name} is too large: the most TrulyMEM imports is "
                                 "{megabytes} MB"), name=path.name,
                              megabytes=f"{MAX_BYTES / 1e6:,.0f}")
    return data


def parse(text: str, *, source: str) -> PastConversation | None:
    """The conversation in `text`, or None when it has neither a title nor a message
    header (not this app's export)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    title = None
    if start < len(lines) and lines[start].startswith("# "):
        title, start = lines[start][2:].strip(), start + 1
    found: list[tuple[str, str, list[str]]] = []  # who, when, the lines under the header
    for i in range(start, len(lines)):
        header = HEADER.fullmatch(lines[i].strip())
        if header and (i == start or not lines[i - 1].strip()):
            found.append((header[1], header[2], []))
        elif found:
            found[-1][2].append(lines[i])
    if title is None and not found:
        return None
    messages = [message for index, (who, when, body) in enumerate(found)
                if (message := _message(index, who, when, "\n".join(body).strip()))]
    times = [m.created_at for m in messages if m.created_at is not None]
    return PastConversation(source=source, title=title or "",
                            created_at=min(times, default=None),
                            updated_at=max(times, default=None), messages=messages,
                            format="markdown")


def _message(index: int, who: str, when: str, text: str) -> PastMessage | None:
    role = ROLES[who]
    if not text or (role == "assistant" and NO_REPLY.fullmatch(text)):
        return None  # a reply that failed: the export writes its error in its place
    return PastMessage(role=role, text=text, created_at=_local_time(when),
                       source_id=str(index))


def _local_time(text: str) -> float | None:
    try:
        return time.mktime(time.strptime(text, "%Y-%m-%d %H:%M"))
    except (ValueError, OverflowError):
        return None
