"""The review inbox: what the model, or another app (over MCP), changed in the memory that
the person has not looked at.

A change is waiting when the model or an app made it, nobody undid it, and the person has not kept
it. Keeping marks the change reviewed and the facts it wrote (`edges.reviewed_at`, which an
export carries); undoing goes through the change log like any undo. Nothing here writes a
logged change: reviewing is not a change to the memory.
"""

from __future__ import annotations

from typing import Any

from core.i18n import tr
from core.store.conversations import with_speakers
from core.store.describe import describe_ops
from core.store.graph import GraphStore, StoreError, decode_ops

# An app's actor is "mcp:<name>": a range of the inbox index ('mcp;' sorts right after
# every 'mcp:…'), where LIKE would scan the whole index on every change event.
WAITING = ("(actor = 'model' OR (actor >= 'mcp:' AND actor < 'mcp;')) AND reviewed_at IS NULL"
           " AND undone_by IS NULL"
           " AND undo_of IS NULL")
MAX_PAGE = 500
SHOWN_MESSAGE = 300  # characters of the message that caused a change


def count(store: GraphStore) -> int:
    return store.conn.execute(f"SELECT count(*) FROM change_log WHERE {WAITING}").fetchone()[0]


def waiting(store: GraphStore, limit: int = 200, before: int | None = None) -> dict[str, Any]:
    """The newest waiting changes (older than change `before`, for the next page), each
    with its lines and the person's message of the turn that made it."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
        raise StoreError(tr("limit must be a whole number from 1 to {most}", most=MAX_PAGE))
    if before is not None and (isinstance(before, bool) or not isinstance(before, int)):
        raise StoreError(tr("before must be a change id"))
    rows = store.query(
        f"SELECT id, created_at, tool, actor, turn_id, summary, ops FROM change_log WHERE"
        f" {WAITING}"
        f"{' AND id < ?' if before is not None else ''} ORDER BY id DESC LIMIT ?",
        [*([before] if before is not None else []), limit + 1])
    more = len(rows) > limit
    rows = rows[:limit]
    messages = _messages(store, {r["turn_id"] for r in rows if r["turn_id"]})
    changes = []
    for row in rows:
        lines = describe_ops(store, decode_ops(row.pop("ops")))
        row["lines"] = lines
        row["guess"] = any(line.get("guess") for line in lines)
        row["message"] = messages.get(row["turn_id"])
        changes.append(row)
    return {"changes": changes, "more": more, "count": count(store)}


def _messages(store: GraphStore, turn_ids: set[str]) -> dict[str, dict[str, Any]]:
    if not turn_ids:
        return {}
    marks = ", ".join("?" for _ in turn_ids)
    imported = ", c.import_id" if store.schema_version() >= 15 else ", NULL AS import_id"
    found = store.query(
        f"SELECT m.turn_id, m.role, substr(m.content, 1, {SHOWN_MESSAGE}) AS content,"
        f" m.conversation_id, m.created_at{imported} FROM messages m LEFT JOIN"
        f" conversations c ON c.id = m.conversation_id WHERE m.role = 'user' AND"
        f" m.turn_id IN ({marks})", sorted(turn_ids))
    for message in found:  # an imported conversation says who spoke (LoCoMo's people)
        if message["import_id"] is not None:
            with_speakers(store, message["conversation_id"], [message])
    return {m["turn_id"]: m for m in found}


def keep(store: GraphStore, change_ids: Any = None, through: Any = None) -> dict[str, Any]:
    """Mark changes reviewed: the ids given, or every waiting change up to `through` (what
    the person saw when they chose Keep all, not what a turn added since)."""
    if store.read_only:
        raise StoreError(store.read_only)
    if change_ids is None:
        if isinstance(through, bool) or not isinstance(through, int):
            raise StoreError(tr("give change_ids, or through: the newest change id shown"))
        ids = [r[0] for r in store.conn.execute(
            f"SELECT id FROM change_log WHERE {WAITING} AND id <= ?", (through,))]
    else:
        if not isinstance(change_ids, list) or not all(
                isinstance(i, int) and not isinstance(i, bool) for i in change_ids):
            raise StoreError(tr("change_ids must be a list of change ids"))
        ids = [r[0] for r in store.conn.execute(
            f"SELECT id FROM change_log WHERE {WAITING} AND id IN"
            f" ({', '.join('?' for _ in change_ids) or 'NULL'})", change_ids)]
    now = store.clock()
    edges: set[int] = set()
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        for (blob,) in store.conn.execute(
                f"SELECT ops FROM change_log WHERE id IN ({', '.join('?' for _ in chunk)})",
                chunk):
            edges.update(op["id"] for op in decode_ops(blob)
                         if op.get("table") == "edges" and "id" in op)
    with store.transaction():
        store.conn.executemany("UPDATE change_log SET reviewed_at = ? WHERE id = ?",
                               [(now, i) for i in ids])
        store.conn.executemany("UPDATE edges SET reviewed_at = ? WHERE id = ?",
                               [(now, i) for i in sorted(edges)])
    return {"kept": ids, "count": count(store)}
