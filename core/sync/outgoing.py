"""What this device sends: the rows and columns its triggers recorded since the last file,
with their values as they are now and one new clock stamp per row."""

from __future__ import annotations

import base64
import json
import sqlite3
from typing import Any

from core.store.change_capture import SYNCED
from core.sync.hlc import HybridClock

Change = dict[str, Any]


def encode_value(value: Any) -> Any:
    """JSON for a column's value: bytes (the change log's compressed row images) as
    base64."""
    if isinstance(value, bytes):
        return {"$b": base64.b64encode(value).decode()}
    return value


def decode_value(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"$b"}:
        return base64.b64decode(value["$b"])
    return value


def clocks_of(conn: sqlite3.Connection, table: str,
              row_id: int) -> tuple[dict[str, str], str | None]:
    """A synced row's clock per column, and the stamp of its removal if it was removed."""
    row = conn.execute("SELECT clocks, removed FROM sync_rows WHERE tbl = ? AND row_id = ?",
                       (table, row_id)).fetchone()
    return (json.loads(row[0]), row[1]) if row else ({}, None)


def keep_clocks(conn: sqlite3.Connection, table: str, row_id: int, clocks: dict[str, str],
                removed: str | None) -> None:
    conn.execute("INSERT INTO sync_rows VALUES (?, ?, ?, ?) ON CONFLICT (tbl, row_id)"
                 " DO UPDATE SET clocks = excluded.clocks, removed = excluded.removed",
                 (table, row_id, json.dumps(clocks, separators=(",", ":")), removed))


def whole_row(conn: sqlite3.Connection, table: str, row_id: int) -> dict[str, Any] | None:
    cursor = conn.execute(f"SELECT * FROM {table} WHERE id = ?", (row_id,))
    row = cursor.fetchone()
    if row is None:
        return None
    return {d[0]: encode_value(v) for d, v in zip(cursor.description, row, strict=True)}


def _described(conn: sqlite3.Connection, clock: HybridClock, table: str, row_id: int,
               columns: set[str]) -> Change:
    """One row's change, stamped now; its clocks are kept."""
    stamp = clock.tick()
    clocks, _removed = clocks_of(conn, table, row_id)
    row = whole_row(conn, table, row_id)
    if "=" in columns:
        merged = conn.execute("SELECT to_id FROM sync_alias WHERE tbl = ? AND from_id = ?",
                              (table, row_id)).fetchone()
        if row is None and merged is not None:
            conn.execute("UPDATE sync_alias SET stamp = ? WHERE tbl = ? AND from_id = ?",
                         (stamp, table, row_id))
            return {"t": table, "id": row_id, "s": stamp, "m": merged[0]}
    if row is not None and table == "nodes":  # back (a merge undone): no longer merged
        conn.execute("DELETE FROM sync_alias WHERE tbl = ? AND from_id = ?", (table, row_id))
    if row is None:
        keep_clocks(conn, table, row_id, clocks, stamp)
        return {"t": table, "id": row_id, "s": stamp, "x": 1}
    if "*" in columns or "-" in columns:  # new, or removed and put back whole (an undo)
        clocks = {name: stamp for name in row if name != "id"}
        clocks["*"] = stamp
        keep_clocks(conn, table, row_id, clocks, None)
        return {"t": table, "id": row_id, "s": stamp, "w": 1,
                "v": {k: v for k, v in row.items() if k != "id"}}
    for name in columns:
        clocks[name] = stamp
    keep_clocks(conn, table, row_id, clocks, None)
    return {"t": table, "id": row_id, "s": stamp,
            "v": {name: row[name] for name in sorted(columns) if name in row}}


def collect(conn: sqlite3.Connection, clock: HybridClock) -> list[Change]:
    """The recorded changes as they are now, parents' tables first; the record is
    emptied. Runs inside the caller's transaction."""
    touched: dict[tuple[str, int], set[str]] = {}
    for table, row_id, column in conn.execute(
            "SELECT tbl, row_id, col FROM sync_outbox ORDER BY id"):
        touched.setdefault((table, row_id), set()).add(column)
    conn.execute("DELETE FROM sync_outbox")
    order = {name: index for index, name in enumerate(SYNCED)}
    changes = [_described(conn, clock, table, row_id, columns)
               for (table, row_id), columns in sorted(touched.items(),
                                                      key=lambda item: order[item[0][0]])]
    # Merges last: the receiver first takes the rows as they are here after the merge
    # (a fact the merge deleted arrives deleted), then merges what it holds besides.
    return sorted(changes, key=lambda change: "m" in change)


def everything(conn: sqlite3.Connection, clock: HybridClock) -> list[Change]:
    """Every synced row, whole: the first file of a device that starts or joins a set."""
    conn.execute("DELETE FROM sync_outbox")
    changes = []
    for table in SYNCED:
        for (row_id,) in conn.execute(f"SELECT id FROM {table} ORDER BY id").fetchall():
            changes.append(_described(conn, clock, table, row_id, {"*"}))
    return changes


def snapshot(conn: sqlite3.Connection) -> list[Change]:
    """This memory as it is, with each column's clock: what a device that missed files
    (pruned, or never seen: a device joining later) applies instead of them. Rows
    removed for good are listed with their removal's stamp, merges with theirs."""
    changes: list[Change] = []
    for table in SYNCED:
        for (row_id,) in conn.execute(f"SELECT id FROM {table} ORDER BY id").fetchall():
            row = whole_row(conn, table, row_id)
            clocks, _removed = clocks_of(conn, table, row_id)
            born = clocks.get("*") or max(clocks.values(), default=None)
            if born is None:
                continue  # never stamped: not sent yet, it goes in the next file
            changes.append({"t": table, "id": row_id, "s": born, "w": 1,
                            "c": {k: v for k, v in clocks.items() if k != "*"},
                            "v": {k: v for k, v in row.items() if k != "id"}})
    for table, row_id, removed in conn.execute(
            "SELECT tbl, row_id, removed FROM sync_rows WHERE removed IS NOT NULL"
            " ORDER BY tbl, row_id").fetchall():
        changes.append({"t": table, "id": row_id, "s": removed, "x": 1})
    for gone, keep, stamp in conn.execute(
            "SELECT from_id, to_id, stamp FROM sync_alias WHERE stamp IS NOT NULL"
            " ORDER BY stamp").fetchall():
        changes.append({"t": "nodes", "id": gone, "s": stamp, "m": keep})
    return changes
