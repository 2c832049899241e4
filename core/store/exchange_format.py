"""The memory export format: its columns, and the check of one row.

Rows are checked with the small table below rather than a JSON schema: an export can hold
millions of them, and this is about fifty times faster with the same kind of message.
"""

from __future__ import annotations

import re
from typing import Any

from core.errors import CodedError, ErrorCode

FORMAT = "trulymem-memory"
VERSION = 1
MAX_FILE_BYTES = 8 * 1024**3  # reading streams; this only stops a runaway file
MAX_TEXT = 10_000
NODE_COLUMNS = ("id", "name", "kind", "type", "mention_count", "created_at", "updated_at",
                "description", "state", "summary", "deleted_at")
EDGE_COLUMNS = ("id", "source_id", "target_id", "relation", "confidence", "status",
                "valid_from", "valid_to", "superseded_by", "source_message", "created_at",
                "updated_at", "category", "mention_count", "temporal_tag", "archived_at",
                "reviewed_at")


class ExchangeError(CodedError, ValueError):
    """A file that cannot be exported to or imported; nothing was changed."""


class ImportCancelled(ExchangeError):
    """The person stopped the import; nothing was changed."""

    code = ErrorCode.CANCELLED


_SURROGATE = re.compile("[\ud800-\udfff]")


def _text(value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return "must be non-empty text"
    if len(value) > MAX_TEXT:
        return f"is longer than {MAX_TEXT:,} characters"
    if not value.isascii() and _SURROGATE.search(value):
        return "holds a broken character (a lone UTF-16 surrogate)"
    return None


def _optional_text(value: Any) -> str | None:
    return None if value is None else _text(value)


def _id(value: Any) -> str | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 2**62
    return None if ok else "must be a whole number from 1"


def _optional_id(value: Any) -> str | None:
    return None if value is None else _id(value)


def _count(value: Any) -> str | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 2**31
    return None if ok else "must be a whole number from 0"


def _time(value: Any) -> str | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1e11
    return None if ok else "must be a time in seconds since 1970"


def _optional_time(value: Any) -> str | None:
    return None if value is None else _time(value)


def _confidence(value: Any) -> str | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1
    return None if ok else "must be a number from 0 to 1"


def _one_of(*choices: str):
    def check(value: Any) -> str | None:
        return None if value in choices else f"must be one of {', '.join(choices)}"
    return check


NODE_FIELDS = {
    "id": _id, "name": _text, "kind": _one_of("entity", "task", "persona", "state"),
    "type": _optional_text, "mention_count": _count, "created_at": _time,
    "updated_at": _time, "description": _optional_text, "state": _optional_text,
    "summary": _optional_text, "deleted_at": _optional_time,
}
EDGE_FIELDS = {
    "id": _id, "source_id": _id, "target_id": _id, "relation": _text,
    "confidence": _confidence,
    "status": _one_of("active", "superseded", "deleted", "archived"),
    "valid_from": _optional_time, "valid_to": _optional_time, "superseded_by": _optional_id,
    "source_message": _optional_text, "created_at": _time, "updated_at": _time,
    "category": _one_of("general", "persona", "task"), "mention_count": _count,
    "temporal_tag": _optional_text, "archived_at": _optional_time,
    "reviewed_at": _optional_time,  # when the person kept the fact in the review inbox
}
REQUIRED = {"nodes": ("id", "name", "kind", "created_at", "updated_at"),
            "edges": ("id", "source_id", "target_id", "relation", "status", "created_at",
                      "updated_at")}
FIELDS = {"nodes": NODE_FIELDS, "edges": EDGE_FIELDS}
MAX_ROWS = {"nodes": 2_000_000, "edges": 5_000_000}


def row_problem(table: str, row: Any) -> tuple[str, str] | None:
    """What is wrong with one row of `table` ("nodes" or "edges"), as (field, problem)
    with "" for the row as a whole, or None."""
    if not isinstance(row, dict):
        return "", "must be an object"
    fields = FIELDS[table]
    unknown = row.keys() - fields.keys()
    if unknown:
        return "", f"unknown field(s) {', '.join(sorted(unknown)[:5])}"
    missing = [name for name in REQUIRED[table] if name not in row]
    if missing:
        return "", f"missing {', '.join(missing)}"
    for name, value in row.items():
        problem = fields[name](value)
        if problem:
            return name, problem
    return None
