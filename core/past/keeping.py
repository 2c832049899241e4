"""Keep the conversations of an export as the app's own: one pass, one transaction.

The file is read once, a conversation at a time (`core.past.readers`), and written as it
comes inside a single transaction: a file that breaks half-way (a damaged zip, JSON cut
short) leaves nothing behind, and memory stays at one conversation. A conversation
already kept (the same source) adds only the messages it gained since; the same file
imported again adds nothing. Nothing is sent anywhere: building the memory from what was
kept is a separate, optional step (`core.past.building`).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.errors import ErrorCode
from core.i18n import N_
from core.past.readers import PastConversation, PastFormatError, read
from core.secrets import scrub_known
from core.store.conversations import title_from
from core.store.graph import GraphStore, StoreError
from core.turn.history import clean_text

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
    store.conn.execute("BEGIN IMMEDIATE")
    try:
        import_id = store.conn.execute(
            "INSERT INTO past_imports(id, file_name, format, created_at) VALUES (?, ?, '', ?)",
            (store.new_id("past_imports"), path.name, now)).lastrowid
        for read_so_far, past in enumerate(read(path), 1):
            if cancelled():
                raise ImportStopped(N_("the import was stopped; nothing was kept"))
            formats.add(past.format)
            _keep_one(store, past, import_id, now, counts)
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
        raise
    return {"import_id": import_id, "format": ",".join(sorted(formats)), **counts}


def _keep_one(store: GraphStore, past: PastConversation, import_id: int, now: float,
              counts: dict[str, int]) -> None:
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
    counts["messages"] += len(rows)


__all__ = ["ImportStopped", "PastFormatError", "keep"]
