"""What a write takes away: the rows it deletes, supersedes, archives or removes.

The model's destructive power in one turn is a budget of rows, not of calls: a single
obedient `memory_purge` can match every fact. The executor runs a destructive call inside
its transaction, reads from the change's row images what it took away, and rolls the
whole call back when that is more than the turn has left. Counting from the row images
needs no per-tool prediction and cannot disagree with what the call really did.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from core.store import GraphStore
from core.store.graph import decode_ops
from core.store.search import marks

PREVIEW_ROWS = 500  # lines kept for the approval card; the count is always exact
HOUR = 3600.0
# Across turns (or an app's sessions), per hour: this many turns' (sessions') worth. A
# stored instruction that forgets just under the per-turn budget every turn is stopped
# after three turns instead of emptying the memory over fifty.
HOURLY_FACTOR = 3


@dataclass(frozen=True)
class Destroyed:
    table: str  # "edges" or "nodes"
    id: int
    verb: str  # deleted, superseded, archived, removed for good
    fingerprint: str  # of the row as it was: SQLite reuses ids, so an id alone can mislead

    def key(self) -> tuple[str, int, str]:
        return self.table, self.id, self.fingerprint


def fingerprint(row: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(row, sort_keys=True, default=str).encode()).hexdigest()[:16]


def destroyed_rows(ops: list[dict[str, Any]]) -> list[Destroyed]:
    """Rows the ops took away, each once, in the order they were touched.

    An edge counts when it stops being active or is removed for good; a node when it is
    soft-deleted or removed. Restoring or reinforcing takes nothing away.
    """
    found: dict[tuple[str, int], Destroyed] = {}
    for op in ops:
        before, after, key = op["before"], op["after"], (op["table"], op["id"])
        if before is None:
            continue
        verb = None
        if after is None:
            verb = "removed for good"
        elif op["table"] == "edges":
            if before["status"] == "active" and after["status"] != "active":
                verb = after["status"]
        elif before.get("deleted_at") is None and after.get("deleted_at") is not None:
            verb = "deleted"
        if verb:
            first = found.get(key)
            found[key] = Destroyed(op["table"], op["id"], verb,
                                   first.fingerprint if first else fingerprint(before))
        elif key in found and after is not None and _alive(op["table"], after):
            del found[key]  # taken away and put back within the same call
    return list(found.values())


# Columns that change as a by-product of writing something else: a node is "mentioned
# again" by every new fact about it. Anything else changed in a row is a write.
BOOKKEEPING = {"nodes": frozenset({"updated_at", "mention_count"}),
               "edges": frozenset({"updated_at"})}


def rewritten(op: dict[str, Any]) -> bool:
    """True when the op added, removed or really changed its row (see BOOKKEEPING)."""
    before, after = op["before"], op["after"]
    if before is None or after is None:
        return before is not after
    ignored = BOOKKEEPING.get(op["table"], frozenset())
    return any(before.get(k) != after.get(k) for k in before.keys() | after.keys()
               if k not in ignored)


def written_rows(ops: list[dict[str, Any]]) -> int:
    """Rows the ops added or changed, each once: a new fact, a retyped node, a re-tagged
    or reinforced fact all count (what an app writes is budgeted, not only what it takes
    away); a bulk op counts the rows of its ranges."""
    keys: set[tuple[str, int]] = set()
    bulk = 0
    for op in ops:
        if "id" not in op:
            bulk += sum(last - first + 1 for first, last in op.get("inserted", ()))
        elif rewritten(op):
            keys.add((op["table"], op["id"]))
    return len(keys) + bulk


def _this_hour(store: GraphStore, actor_like: str) -> list[list[dict[str, Any]]]:
    """The ops of every change the actors matching `actor_like` (a LIKE pattern: "model",
    "mcp:%") made in the last hour. Undone changes still count: forgetting again after an
    undo is still forgetting."""
    rows = store.conn.execute(
        "SELECT ops FROM change_log WHERE created_at > ? AND actor LIKE ? AND undo_of IS NULL",
        (store.log_clock() - HOUR, actor_like))
    return [decode_ops(blob) for (blob,) in rows]


def taken_this_hour(store: GraphStore, actor_like: str) -> int:
    """Rows the actors matching `actor_like` took away in the last hour."""
    return sum(len(destroyed_rows(ops)) for ops in _this_hour(store, actor_like))


def written_this_hour(store: GraphStore, actor_like: str) -> int:
    """Rows the actors matching `actor_like` added or changed in the last hour."""
    return sum(written_rows(ops) for ops in _this_hour(store, actor_like))


def _alive(table: str, row: dict[str, Any]) -> bool:
    return row["status"] == "active" if table == "edges" else row.get("deleted_at") is None


class OverBudget(Exception):
    """A call would take away more rows than the turn has left, or (an app's) write more
    than its session or the hour has left; it was rolled back. `reason` says which:
    "removes" or "writes"."""

    def __init__(self, rows: list[Destroyed], preview: list[str], left: int,
                 reason: str = "removes", written: int = 0) -> None:
        super().__init__(f"{len(rows)} rows over a budget with {left} left")
        self.rows = rows
        self.preview = preview
        self.left = left
        self.reason = reason
        self.written = written


def preview_lines(store: GraphStore, rows: list[Destroyed]) -> list[dict[str, str]]:
    """One line per row for the person to judge, read inside the call's transaction:
    what happens to it (`verb`: deleted, superseded, archived, removed for good, added,
    changed) and the fact or name (`text`), which the window says in its language."""
    edge_ids = [r.id for r in rows if r.table == "edges"][:PREVIEW_ROWS]
    node_ids = [r.id for r in rows if r.table == "nodes"][:PREVIEW_ROWS]
    names: dict[int, str] = {}
    texts: dict[int, str] = {}
    if edge_ids:
        for row in store.query(
                "SELECT e.id, s.name AS source, e.relation, t.name AS target FROM edges e"
                " JOIN nodes s ON s.id = e.source_id JOIN nodes t ON t.id = e.target_id"
                f" WHERE e.id IN ({marks(edge_ids)})", edge_ids):
            texts[row["id"]] = f"{row['source']} -{row['relation']}-> {row['target']}"
    if node_ids:
        for row in store.query(f"SELECT id, name, kind FROM nodes WHERE id IN"
                               f" ({marks(node_ids)})", node_ids):
            names[row["id"]] = f"{row['name']} ({row['kind']})"
    lines = []
    for row in rows[:PREVIEW_ROWS]:
        what = texts.get(row.id) if row.table == "edges" else names.get(row.id)
        lines.append({"verb": row.verb, "text": what or f"{row.table[:-1]} {row.id}"})
    return lines


def summarize(rows: list[Destroyed]) -> str:
    """"delete 300 memories and supersede 12": how the approval card names the request."""
    verbs: dict[str, int] = {}
    for row in rows:
        verbs[row.verb] = verbs.get(row.verb, 0) + 1
    plain = {"deleted": "delete", "superseded": "supersede", "archived": "archive",
             "removed for good": "remove for good"}
    parts = [f"{plain.get(v, v)} {n} {'memory' if n == 1 else 'memories'}"
             for v, n in verbs.items()]
    return " and ".join(parts) or "change nothing"
