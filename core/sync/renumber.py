"""Moving a memory's rows into its device's own range of ids when it starts syncing, so
rows made on two devices before they met never share an id. Every reference moves with
them: facts' nodes, messages' conversations, the change log's links and row images, the
full-text indexes, the vectors."""

from __future__ import annotations

import sqlite3
from typing import Any

from core.store.change_capture import SYNCED
from core.store.graph import ID_SPAN, decode_ops, encode_ops

# table: its columns naming a row of another synced table (or itself)
REFERENCES: dict[str, dict[str, str]] = {
    "edges": {"source_id": "nodes", "target_id": "nodes", "superseded_by": "edges"},
    "conversations": {"import_id": "past_imports", "remembered_to": "messages"},
    "messages": {"conversation_id": "conversations"},
    "change_log": {"undo_of": "change_log", "undone_by": "change_log"},
    "approvals": {"change_id": "change_log"},
    "branches": {"conversation_id": "conversations", "undo_change": "change_log"},
    "edge_vectors": {"edge_id": "edges"},
    "message_vectors": {"message_id": "messages"},
}
_ROW_IMAGE_LINKS = {"source_id": "nodes", "target_id": "nodes", "superseded_by": "edges",
                    "conversation_id": "conversations"}


def move_into_range(conn: sqlite3.Connection, slot: int) -> int:
    """Add slot × ID_SPAN to every id below ID_SPAN; answers the rows moved. Runs inside
    the caller's transaction, with foreign keys checked at its commit."""
    base = slot * ID_SPAN
    moved = 0
    for table in SYNCED:
        moved += conn.execute(f"UPDATE {table} SET id = id + ? WHERE id < ?",
                              (base, ID_SPAN)).rowcount
    if not moved:
        return 0
    for table, links in REFERENCES.items():
        for column in links:
            conn.execute(f"UPDATE {table} SET {column} = {column} + ? WHERE {column} < ?",
                         (base, ID_SPAN))
    conn.execute("UPDATE edge_vectors SET seq = seq + (SELECT coalesce(max(seq), 0) FROM"
                 " edge_vectors)")  # a saved search index sees it is out of date
    conn.execute("UPDATE message_vectors SET seq = seq + (SELECT coalesce(max(seq), 0) FROM"
                 " message_vectors)")  # a program following them loads them again
    conn.execute("UPDATE change_rows SET row_id = row_id + ?, change_id = change_id + ?"
                 " WHERE row_id < ? AND change_id < ?", (base, base, ID_SPAN, ID_SPAN))
    conn.execute("UPDATE id_floor SET tbl = tbl || '@' || ?, top = top + ? WHERE"
                 " instr(tbl, '@') = 0", (base, base))
    for change_id, blob in conn.execute(
            "SELECT id, ops FROM change_log WHERE id >= ? AND id < ?",
            (base, base + ID_SPAN)).fetchall():
        conn.execute("UPDATE change_log SET ops = ? WHERE id = ?",
                     (encode_ops([_moved_op(op, base) for op in decode_ops(blob)]), change_id))
    _rebuild_full_text(conn)
    return moved


def _moved_op(op: dict[str, Any], base: int) -> dict[str, Any]:
    def shift(value: Any) -> Any:
        return value + base if isinstance(value, int) and 0 <= value < ID_SPAN else value

    op = dict(op)
    if "id" in op:
        op["id"] = shift(op["id"])
    if "of" in op:
        op["of"] = shift(op["of"])
    if "inserted" in op:
        op["inserted"] = [[shift(first), shift(last)] for first, last in op["inserted"]]
    for image in ("before", "after"):
        if isinstance(op.get(image), dict):
            row = dict(op[image])
            for name in ("id", *_ROW_IMAGE_LINKS):
                if name in row:
                    row[name] = shift(row[name])
            op[image] = row
    return op


def _rebuild_full_text(conn: sqlite3.Connection) -> None:
    conn.execute("DELETE FROM node_fts")
    conn.execute("INSERT INTO node_fts(rowid, body) SELECT id, search_text(name || ' ' ||"
                 " coalesce(description, '')) FROM nodes")
    conn.execute("DELETE FROM edge_fts")
    conn.execute("INSERT INTO edge_fts(rowid, body) SELECT e.id, search_text(s.name || ' ' ||"
                 " e.relation || ' ' || t.name) FROM edges e JOIN nodes s ON s.id ="
                 " e.source_id JOIN nodes t ON t.id = e.target_id")
    conn.execute("DELETE FROM message_fts")
    conn.execute("INSERT INTO message_fts(rowid, body) SELECT id, search_text(content)"
                 " FROM messages")
