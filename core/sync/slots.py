"""One value per one-value slot after a sync: two devices that each moved the person
from Oslo, one to Bergen and one to Trondheim, while apart, each keep one home.

Every device settles it the same way, so nothing is sent: the value written later (by
the fact's clock) stays active, the other is kept as superseded by it, valid until the
kept one was written, and the conflict is listed in words on every device.
"""

from __future__ import annotations

import json
from typing import Any

from core.meaning.names import same_value
from core.store import GraphStore
from core.sync.hlc import parse_stamp
from core.sync.incoming import SLOT
from core.tools.one_value import SURE, slot_values


def _born(store: GraphStore, edge_id: int) -> str:
    """The clock the fact was written with (its creation), "" when not synced."""
    row = store.query_one("SELECT clocks FROM sync_rows WHERE tbl = 'edges' AND row_id = ?",
                          (edge_id,))
    clocks = json.loads(row["clocks"]) if row else {}
    return clocks.get("*") or max(clocks.values(), default="")


def settle(store: GraphStore, edges: set[int], now: float) -> int:
    """Supersede all but the latest value in every one-value slot the facts `edges`
    fill; answers how many were superseded. Runs in the caller's transaction, with the
    recording of changes off (every device does the same)."""
    settled = 0
    for edge_id in sorted(edges):
        edge = store.query_one(
            "SELECT e.*, t.name AS target_name FROM edges e JOIN nodes t ON t.id ="
            " e.target_id WHERE e.id = ? AND e.status = 'active' AND e.category = 'general'",
            (edge_id,))
        if edge is None or edge["confidence"] < SURE:
            continue
        rivals = [r for r in slot_values(store, edge, edge["target_name"])
                  if r["confidence"] >= SURE and r["target_id"] != edge["target_id"]
                  and same_value(r["target_name"], edge["target_name"]) is False]
        if not rivals:
            continue
        ranked = sorted([edge, *rivals], key=lambda r: (_born(store, r["id"]), r["id"]))
        kept = ranked[-1]
        for lost in ranked[:-1]:
            _supersede(store, kept, lost, now)
            settled += 1
    return settled


def _supersede(store: GraphStore, kept: Any, lost: Any, now: float) -> None:
    kept_stamp, lost_stamp = _born(store, kept["id"]), _born(store, lost["id"])
    until = parse_stamp(kept_stamp)[0] / 1000 if kept_stamp else None
    store.conn.execute("UPDATE edges SET status = 'superseded', superseded_by = ?,"
                       " valid_to = ? WHERE id = ?", (kept["id"], until, lost["id"]))
    name = store.query_one("SELECT name FROM nodes WHERE id = ?", (lost["target_id"],))
    store.conn.execute(
        "INSERT INTO sync_conflicts(tbl, row_id, col, kept, lost, kept_device, lost_device,"
        " at, kept_at, lost_at) VALUES ('edges', ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (lost["id"], SLOT, kept["target_name"], name["name"] if name else None,
         parse_stamp(kept_stamp)[2] if kept_stamp else None,
         parse_stamp(lost_stamp)[2] if lost_stamp else None, now,
         until, parse_stamp(lost_stamp)[0] / 1000 if lost_stamp else None))
