"""What every tool handler shares: its result type, its error, and compact text output."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from core.store import Row
from core.store.text import normalize_name

DAY = 86400.0
PERSON_NODE = "User"  # the node for the person talking to the assistant
_PERSON_WORDS = {normalize_name(w) for w in (
    "User", "the user", "I", "me", "myself", "我", "用户", "我自己", "本人")}
MAX_ROWS = 40
MAX_CHARS = 4000


class ToolError(Exception):
    """The call was understood but cannot be carried out; the message tells the model why."""


@dataclass
class Outcome:
    """A handler's answer: `text` is what the model reads, `data` is for programs."""

    text: str
    data: dict[str, Any] = field(default_factory=dict)
    summary: str = ""


def the_person(name: str) -> str:
    """"I", "me", "我" or "the user" as a subject or object mean the person: one node,
    "User", so their facts gather in one place whatever words the model picks."""
    return PERSON_NODE if normalize_name(name) in _PERSON_WORDS else name


def day(timestamp: float | None) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(timestamp)) if timestamp else "?"


def edge_line(edge: Row) -> str:
    """One memory as a compact line: `[12] Xiao Ming -likes-> apples (x3, 0.8, 2026-11-30)`."""
    notes = []
    if edge.get("mention_count", 1) > 1:
        notes.append(f"x{edge['mention_count']}")
    if edge.get("confidence", 1.0) < 1.0:
        notes.append(f"{edge['confidence']:.2g}")
    if edge.get("status", "active") != "active":
        notes.append(edge["status"])
    if edge.get("temporal_tag"):
        notes.append(edge["temporal_tag"])
    notes.append(day(edge.get("updated_at")))
    return (f"[{edge['id']}] {edge['source_name']} -{edge['relation']}-> "
            f"{edge['target_name']} ({', '.join(notes)})")


def fact_line(edge: Row) -> str:
    """A memory as few tokens as it can take, for text sent with every request (the
    snapshot, commit results): `Xiao Ming -likes-> apples (x3)`; the date only when it is
    not today, no row id (no tool takes one)."""
    notes = []
    if edge.get("mention_count", 1) > 1:
        notes.append(f"x{edge['mention_count']}")
    if edge.get("confidence", 1.0) < 1.0:
        notes.append(f"{edge['confidence']:.2g}")
    if edge.get("temporal_tag"):
        notes.append(edge["temporal_tag"])
    when = day(edge.get("updated_at"))
    if when != day(time.time()):
        notes.append(when)
    line = f"{edge['source_name']} -{edge['relation']}-> {edge['target_name']}"
    return f"{line} ({', '.join(notes)})" if notes else line


def bounded(header: str, lines: list[str], max_rows: int = MAX_ROWS,
            max_chars: int = MAX_CHARS, more: bool = False) -> tuple[str, int]:
    """Header plus as many leading lines as fit; says so when some were left out.

    Returns the text and how many lines it kept. Lines come best first, so the cut keeps
    the best ones. `more` tells that rows beyond `lines` exist and were never fetched.
    """
    kept: list[str] = []
    size = len(header)
    for line in lines[:max_rows]:
        if size + len(line) + 1 > max_chars - 120:
            break
        kept.append(line)
        size += len(line) + 1
    text = "\n".join([header, *kept])
    if len(kept) < len(lines) or more:
        total = f"{len(lines)}+" if more else str(len(lines))
        text += (f"\n[showing {len(kept)} of {total} rows: cap of {max_rows} rows / "
                 f"{max_chars} characters reached; narrow the query for the rest]")
    return text, len(kept)
