"""LoCoMo (Maharana et al., ACL 2024), the benchmark of very long conversations between
two people: each sample is read as one conversation per session, dated by the session,
so the memory is built from it the way it would be from a person's own chats over months.
Speaker A stands for the person ("user"), speaker B for the other side.

`questions` and `samples` serve the benchmark (bench/locomo.py), not the import."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from core.history_import.readers import (
    PastConversation,
    PastMessage,
    broken,
    json_items,
    kind,
    not_an_export,
    numbered,
    text_of,
)

SESSION = re.compile(r"session_(\d+)")
# "1:56 pm on 8 May, 2023", or the date alone: "8 May, 2023"
WHEN = re.compile(r"(?:(\d{1,2}):(\d{2})\s*([ap])\.?\s*m\.?\s+on\s+)?"
                  r"(\d{1,2})\s+([a-z]+)\.?,?\s+(\d{4})", re.IGNORECASE)
MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def conversations(items: Iterable[Any]) -> Iterator[PastConversation]:
    for number, sample in numbered(items):
        yield from _sessions(sample, number)


def _conversation(sample: dict[str, Any], number: int) -> dict[str, Any]:
    conversation = sample.get("conversation")
    if not isinstance(conversation, dict):
        raise broken(number, "its conversation is not an object")
    return conversation


def _sample_id(sample: dict[str, Any], number: int) -> str:
    ident = sample.get("sample_id")
    return str(ident) if ident not in (None, "") else f"#{number}"


def session_numbers(conversation: dict[str, Any]) -> list[int]:
    """The sessions that hold turns, in order (2 before 10); a session may have its date
    and no turns."""
    return sorted(int(found[1]) for key, value in conversation.items()
                  if (found := SESSION.fullmatch(key)) and isinstance(value, list))


def _sessions(sample: dict[str, Any], number: int) -> Iterator[PastConversation]:
    conversation = _conversation(sample, number)
    sample_id = _sample_id(sample, number)
    a, b = text_of(conversation.get("speaker_a")), text_of(conversation.get("speaker_b"))
    for n in session_numbers(conversation):
        when = session_time(conversation.get(f"session_{n}_date_time"))
        messages = [m for index, turn in enumerate(conversation[f"session_{n}"])
                    if (m := _message(turn, a, when, index=index, number=number))]
        if not messages:
            continue
        yield PastConversation(
            source=f"locomo:{sample_id}:{n}", title=f"{a} and {b}, session {n}",
            created_at=when, updated_at=messages[-1].created_at, messages=messages,
            format="locomo", speakers={"user": a, "assistant": b})


def _message(turn: Any, speaker_a: str, when: float | None, *, index: int,
             number: int) -> PastMessage | None:
    if not isinstance(turn, dict):
        raise broken(number, f"a turn of its conversation is not an object ({index + 1})")
    speaker = text_of(turn.get("speaker"))
    text = text_of(turn.get("text"))
    caption = text_of(turn.get("blip_caption"))
    if caption:
        text = f"{text} [shares a photo: {caption}]".strip()
    if not text:
        return None
    dia_id = turn.get("dia_id")
    return PastMessage(
        role="user" if speaker == speaker_a else "assistant", text=text,
        created_at=None if when is None else when + index,  # a second apart keeps the order
        source_id=str(dia_id) if dia_id not in (None, "") else str(index),
        speaker=speaker or None)


def session_time(text: Any) -> float | None:
    """A session's "1:56 pm on 8 May, 2023" (or "8 May, 2023") as local Unix seconds;
    read without the locale's month names, which need not be English."""
    found = WHEN.fullmatch(text.strip()) if isinstance(text, str) else None
    if found is None:
        return None
    hour_text, minute, half, day, month_name, year = found.groups()
    month = next((i for i, name in enumerate(MONTHS, 1)
                  if month_name.lower().startswith(name)), None)
    hour = int(hour_text) % 12 + (12 if (half or "").lower() == "p" else 0) \
        if hour_text else 0
    try:
        return datetime(int(year), month or 0, int(day), hour, int(minute or 0)).timestamp()
    except (ValueError, OverflowError, OSError):
        return None


# -- for the benchmark -------------------------------------------------------------------

def _samples(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """The file's samples, read one at a time; refuses a file that is not LoCoMo."""
    with json_items(path) as items:
        first = next(items, None)
        if first is None:
            return
        if kind(first) != "locomo":
            raise not_an_export(Path(path))
        yield from numbered(itertools.chain([first], items))


def questions(path: str | Path, sample_id: str | None = None) -> list[dict[str, Any]]:
    """Every sample's questions (or one sample's), each with its "sample_id" added."""
    found = []
    for number, sample in _samples(path):
        ident = _sample_id(sample, number)
        if sample_id is not None and ident != sample_id:
            continue
        qa = sample.get("qa") or []
        if not isinstance(qa, list):
            raise broken(number, "its qa is not a list")
        found += [{**item, "sample_id": ident} for item in qa if isinstance(item, dict)]
    return found


def samples(path: str | Path) -> list[dict[str, Any]]:
    """The samples: who speaks in each, and how many sessions hold turns."""
    found = []
    for number, sample in _samples(path):
        conversation = _conversation(sample, number)
        found.append({"sample_id": _sample_id(sample, number),
                      "speaker_a": text_of(conversation.get("speaker_a")),
                      "speaker_b": text_of(conversation.get("speaker_b")),
                      "sessions": len(session_numbers(conversation))})
    return found
