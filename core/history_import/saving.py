"""Keep the conversations of an export as the app's own: one pass, in batches.

The file is read once, a conversation at a time (`core.history_import.readers`), and written as it
comes, committed every half second so the chat, sync and other apps can write meanwhile:
a file that breaks half-way (a damaged zip, JSON cut short) or an import stopped by the
person leaves nothing behind (what the batches kept is taken back), and memory stays at
one conversation. A conversation
already kept (the same source) adds only the messages it gained since; the same file
imported again adds nothing. Nothing is sent anywhere: building the memory from what was
kept is a separate, optional step (`core.history_import.building`).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import sqlite3
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import ErrorCode
from core.history_import.readers import PastConversation, PastFormatError, read
from core.i18n import N_
from core.redaction import scrub_known
from core.store.conversations import title_from
from core.store.graph import GraphStore, StoreError
from core.store.history import clean_text

log = logging.getLogger(__name__)
Report = Callable[[int, int], None]  # conversations, messages read so far
PAST_SCHEMA = 15  # the schema version that keeps past conversations


class ImportStopped(StoreError):
    """The person stopped reading the file; nothing was kept."""

    code = ErrorCode.CANCELLED


def _nothing(_conversations: int, _messages: int) -> None:
    pass


def _never() -> bool:
    return False


def keep(store: GraphStore, path: str | Path, *, report: Report = _nothing,
         cancelled: Callable[[], bool] = _never) -> dict[str, Any]:
    """Read the export at `path` and keep its conversations; answers what was added.
    Raises PastFormatError (the file) or StoreError (the database) with nothing kept."""
    if store.read_only:
        raise StoreError(store.read_only, ErrorCode.READ_ONLY)
    if store.schema_version() < PAST_SCHEMA:
        raise StoreError(N_("this memory file is too old to import conversations into"))
    path = Path(path)
    counts = {"conversations": 0, "messages": 0, "unchanged": 0, "grown": 0, "undated": 0}
    now = store.log_clock()
    formats: set[str] = set()
    added, import_id = _Added(), None
    store.conn.execute("BEGIN IMMEDIATE")
    try:
        import_id = store.conn.execute(
            "INSERT INTO past_imports(id, file_name, format, created_at) VALUES (?, ?, '', ?)",
            (store.new_id("past_imports"), path.name, now)).lastrowid
        times: dict[str, int] = {}
        batch_started = time.monotonic()
        for read_so_far, past in enumerate(read(path), 1):
            if cancelled():
                raise ImportStopped(N_("the import was stopped; nothing was kept"))
            formats.add(past.format)
            _keep_one(store, _apart(past, times), import_id, now, counts=counts, added=added)
            if time.monotonic() - batch_started > BATCH_SECONDS:
                # the write lock is let go: chat, sync and other apps write meanwhile
                store.conn.execute("COMMIT")
                report(read_so_far, counts["messages"])
                store.conn.execute("BEGIN IMMEDIATE")
                batch_started = time.monotonic()
            else:
                report(read_so_far, counts["messages"])
        if counts["messages"]:
            store.conn.execute(
                "UPDATE past_imports SET format = ?, conversations = ?, messages = ?"
                " WHERE id = ?", (",".join(sorted(formats)), counts["conversations"]
                                  + counts["grown"], counts["messages"], import_id))
        else:  # the same file again: nothing to record
            store.conn.execute("DELETE FROM past_imports WHERE id = ?", (import_id,))
            import_id = None
        store.conn.execute("COMMIT")
    except BaseException:
        if store.conn.in_transaction:
            store.conn.execute("ROLLBACK")
        added.take_back(store, import_id)
        raise
    return {"import_id": import_id, "format": ",".join(sorted(formats)), **counts}


BATCH_SECONDS = 0.5  # how long the import holds the write lock at a time


def _apart(past: PastConversation, times: dict[str, int]) -> PastConversation:
    """Two conversations of one file under one id are two conversations: the second is
    kept under the id and its place ("chatgpt:abc#2"), the same each time the file is
    read, never spliced onto the first."""
    times[past.source] = times.get(past.source, 0) + 1
    if times[past.source] == 1:
        return past
    return dataclasses.replace(past, source=f"{past.source}#{times[past.source]}")


@dataclass
class _Added:
    """What an import kept in the batches committed so far: taken back whole if the file
    breaks or the person stops it later, so nothing of a failed import stays."""

    conversations: list[int] = field(default_factory=list)
    grown: list[tuple[int, float, int | None]] = field(default_factory=list)
    messages: list[tuple[int, int]] = field(default_factory=list)  # id ranges

    def take_back(self, store: GraphStore, import_id: int | None) -> None:
        if not (self.conversations or self.grown or self.messages or import_id):
            return
        conn = store.conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            for first, last in self.messages:
                conn.execute("DELETE FROM messages WHERE id BETWEEN ? AND ?", (first, last))
            conn.executemany("DELETE FROM conversations WHERE id = ?",
                             [(c,) for c in self.conversations])
            conn.executemany("UPDATE conversations SET updated_at = ?, import_id = ?"
                             " WHERE id = ?", [(u, i, c) for c, u, i in self.grown])
            if import_id is not None:
                conn.execute("DELETE FROM past_imports WHERE id = ?", (import_id,))
            conn.execute("COMMIT")
        except sqlite3.Error:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            log.exception("an import that failed could not be taken back whole")


def _keep_one(store: GraphStore, past: PastConversation, import_id: int, now: float, *,
              counts: dict[str, int], added: _Added) -> None:
    """One conversation: new, or grown since it was kept (its new messages only)."""
    known = store.query_one(
        "SELECT c.id, (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id)"
        " AS kept FROM conversations c WHERE c.source = ?", (past.source,))
    messages = [m for m in past.messages if m.text.strip()]
    start = known["kept"] if known else 0
    if known and start >= len(messages):
        counts["unchanged"] += 1
        return
    first = next((m.created_at for m in messages if m.created_at), None)
    created = past.created_at or first
    if created is None:
        counts["undated"] += 1
        created = now
    last = max((m.created_at for m in messages if m.created_at), default=None)
    updated = max(past.updated_at or created, last or created)
    if known:
        conversation_id = known["id"]
        before = store.query_one("SELECT updated_at, import_id FROM conversations WHERE"
                                 " id = ?", (conversation_id,))
        added.grown.append((conversation_id, before["updated_at"], before["import_id"]))
        store.conn.execute("UPDATE conversations SET updated_at = max(updated_at, ?),"
                           " import_id = ? WHERE id = ?", (updated, import_id,
                                                            conversation_id))
        counts["grown"] += 1
    else:
        title = " ".join(past.title.split())[:200] if past.title.strip() else title_from(
            next((m.text for m in messages if m.role == "user"), messages[0].text
                 if messages else ""))
        conversation_id = store.conn.execute(
            "INSERT INTO conversations(id, title, created_at, updated_at, source, import_id,"
            " speakers) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (store.new_id("conversations"), scrub_known(clean_text(title)), created, updated,
             past.source, import_id,
             json.dumps(past.speakers, ensure_ascii=False) if past.speakers else None),
        ).lastrowid
        added.conversations.append(conversation_id)
        counts["conversations"] += 1
    rows, turn, when = [], None, created
    for message in messages[start:]:
        # A person's message and the replies after it are one exchange, as in a live chat.
        if message.role == "user" or turn is None:
            turn = uuid.uuid4().hex
        when = message.created_at or when
        rows.append((message.role, scrub_known(clean_text(message.text)), turn, when,
                     conversation_id))
    first = store.new_id("messages")
    if first is not None:  # this device syncs: its own range of ids
        rows = [(first + offset, *row) for offset, row in enumerate(rows)]
    store.conn.executemany(
        "INSERT INTO messages(" + ("id, " if first is not None else "")
        + "role, content, turn_id, created_at, conversation_id) VALUES ("
        + ("?, " if first is not None else "") + "?, ?, ?, ?, ?)", rows)
    if rows:  # one transaction's rows are numbered one after another
        last = rows[-1][0] if first is not None else store.conn.execute(
            "SELECT last_insert_rowid()").fetchone()[0]
        added.messages.append((last - len(rows) + 1, last))
    counts["messages"] += len(rows)


__all__ = ["ImportStopped", "PastFormatError", "keep"]
