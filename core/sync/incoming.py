"""Applying another device's changes to this memory.

The rule, per column: the later write by the hybrid logical clock wins, ties going to the
larger device id. Removing a row for good (emptying the trash, undoing its creation) wins
over edits of it; a removed row comes back only whole, from a write later than its
removal (an undo or a redo), and with it the columns written later still by a device that
had not heard of the removal (kept aside until then, in sync_parked). The same name
created on two devices is one node: the one with the smaller id stays, the other is merged
into it with its facts, and two active copies of one fact keep the smaller id active. What
this device decides alone to reach that state (a merge it found) is recorded like its own
writes; what every device does the same way (a merge it received) is not sent again.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from core.store import one_copy
from core.store.change_capture import SYNCED, note_merge
from core.store.graph import decode_ops, index_change_rows
from core.sync.hlc import HybridClock, check_not_ahead, parse_stamp
from core.sync.outgoing import Change, clocks_of, decode_value, encode_value, keep_clocks

# Columns naming a row of a table whose rows can be merged into others.
_NODE_REFERENCES = {"edges": ("source_id", "target_id")}
_ASIDE = "\x00merging"


@dataclass
class Applied:
    rows: int = 0
    conflicts: int = 0
    merged: int = 0
    edges: set[int] = field(default_factory=set)  # facts written: their slots are looked at


def _recording(conn: sqlite3.Connection, on: bool) -> None:
    conn.execute("UPDATE sync_capture SET on_ = ?", (int(on),))


def alias(conn: sqlite3.Connection, table: str, row_id: Any) -> Any:
    """The row `row_id` was merged into, if it was (merges may chain)."""
    for _ in range(64):
        row = conn.execute("SELECT to_id FROM sync_alias WHERE tbl = ? AND from_id = ?",
                           (table, row_id)).fetchone()
        if row is None:
            return row_id
        row_id = row[0]
    return row_id


def _current(conn: sqlite3.Connection, table: str, row_id: int) -> dict[str, Any] | None:
    cursor = conn.execute(f"SELECT * FROM {table} WHERE id = ?", (row_id,))
    row = cursor.fetchone()
    return None if row is None else {d[0]: v for d, v in
                                     zip(cursor.description, row, strict=True)}


def apply_changes(conn: sqlite3.Connection, clock: HybridClock, device: str,
                  changes: Iterable[Change], now: float, *, seen: Seen | None = None
                  ) -> Applied:
    """Apply one file's changes inside the caller's transaction."""
    applier = _Applier(conn, clock, device, now)
    applier.seen = seen
    _recording(conn, False)
    try:
        for change in changes:
            applier.apply(change)
    finally:
        _recording(conn, True)
    repair_references(conn)
    return applier.applied


# What a reference to a row that was removed for good becomes: a fact about a removed
# node goes with it; an optional link is cleared.
_DANGLING = {("edges", "nodes"): "remove"}


def repair_references(conn: sqlite3.Connection) -> None:
    """A row removed on one device while another pointed a new row at it (a node whose
    creation was undone, given a fact elsewhere): every device settles it the same way,
    and records what it did so the others hear it too."""
    for _ in range(8):  # removing a fact may leave another pointing at it
        problems = conn.execute("PRAGMA foreign_key_check").fetchall()
        if not problems:
            return
        for table, row_id, parent, key in problems:
            if _DANGLING.get((table, parent)) == "remove":
                conn.execute(f"DELETE FROM {table} WHERE id = ?", (row_id,))
                continue
            column = next(row[3] for row in conn.execute(
                f"PRAGMA foreign_key_list({table})") if row[0] == key)
            conn.execute(f"UPDATE {table} SET {column} = NULL WHERE rowid = ?", (row_id,))


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


class _Applier:
    """One file's changes from one device, applied by the rule the module states."""

    def __init__(self, conn: sqlite3.Connection, clock: HybridClock, device: str,
                 now: float) -> None:
        self.conn, self.clock, self.device, self.now = conn, clock, device, now
        self.known = {table: _columns(conn, table) for table in SYNCED}
        self.applied = Applied()
        self.seen: Seen | None = None
        self._unmerged: list[int] = []
        self._rewrites = conn.execute("SELECT 1 FROM sync_rewritten LIMIT 1").fetchone() \
            is not None

    def apply(self, change: Change) -> None:
        table, stamp = change.get("t"), change.get("s")
        if table not in self.known or not isinstance(stamp, str) or \
                not isinstance(change.get("id"), int) or isinstance(change.get("id"), bool):
            raise ValueError(f"a change the file cannot hold: {str(change)[:120]}")
        check_not_ahead(stamp, self.now)  # a clock set years ahead pulls no one along
        self.clock.see(stamp)
        row_id = change["id"]
        self.applied.rows += 1
        if table == "nodes" and "m" in change:
            self._merge(row_id, change["m"], stamp)
            return
        if table == "nodes" and alias(self.conn, table, row_id) != row_id:
            merged_at = self.conn.execute(
                "SELECT stamp FROM sync_alias WHERE tbl = 'nodes' AND from_id = ?",
                (row_id,)).fetchone()[0]
            if not (change.get("w") and merged_at and stamp > merged_at):
                # merged into another node: the node it became keeps its own values, on
                # every device (facts naming it are pointed at that node as they arrive);
                # its own are kept aside, for the day the merge is undone
                if not change.get("x"):
                    self._park_write(table, row_id, stamp, change)
                return
            # put back whole after the merge (the merge was undone): a node again
            self.conn.execute("DELETE FROM sync_alias WHERE tbl = 'nodes' AND from_id = ?",
                              (row_id,))
            self._unmerged.append(row_id)
        if change.get("x"):
            self._remove(table, row_id, stamp)
            return
        self._write(table, row_id, stamp, change)
        while self._unmerged:  # its facts name it again, once it is back
            _name_again(self.conn, self._unmerged.pop())

    def _merge(self, gone: int, keep: Any, stamp: str) -> None:
        """Another device merged node `gone` into `keep`: so does this one. A merge says
        two nodes are one; when `gone` was merged here into a third node already, the two
        nodes it became are one too, and the larger id is merged into the smaller (every
        device does the same, whatever order the merges arrive in)."""
        if not isinstance(keep, int) or isinstance(keep, bool):
            raise ValueError(f"a merge into {keep!r}")
        target, became = alias(self.conn, "nodes", keep), alias(self.conn, "nodes", gone)
        if became == target or (became == gone and clocks_of(self.conn, "nodes", gone)[0].get(
                "*", "") > stamp):
            return  # merged already, or put back whole since (an undo)
        self.applied.merged += 1
        if became != gone:
            smaller, larger = sorted((became, target))
            merge_nodes(self.conn, keep=smaller, gone=larger)
            target = smaller
        elif self.conn.execute("SELECT 1 FROM nodes WHERE id = ?", (gone,)).fetchone():
            _move_facts(self.conn, target, gone)  # every device does the same: not sent
            _park(self.conn, "nodes", gone)
            self.conn.execute("DELETE FROM nodes WHERE id = ?", (gone,))
        self.conn.execute("INSERT OR REPLACE INTO sync_alias VALUES ('nodes', ?, ?, ?)",
                          (gone, target, stamp))

    def _remove(self, table: str, row_id: int, stamp: str) -> None:
        clocks, removed = clocks_of(self.conn, table, row_id)
        if (removed and removed >= stamp) or clocks.get("*", "") > stamp:
            return  # already removed, or put back whole since
        # its columns written after the removal stay its own, should the row come back
        _park(self.conn, table, row_id, later_than=stamp)
        self.conn.execute(f"DELETE FROM {table} WHERE id = ?", (row_id,))
        keep_clocks(self.conn, table, row_id, clocks, stamp)

    def _values(self, table: str, change: Change, row_id: int) -> dict[str, Any]:
        values = {name: decode_value(value) for name, value in
                  (change.get("v") or {}).items()}
        unknown = set(values) - self.known[table]
        if unknown or "id" in values:
            raise ValueError(f"columns this device does not have in {table}: "
                             f"{sorted(unknown)}")
        for name in _NODE_REFERENCES.get(table, ()):
            if name in values:
                named = values[name]
                values[name] = alias(self.conn, "nodes", named)
                if named != values[name] or self._rewrites:  # (none kept: nothing to clear)
                    _remember_rewrite(self.conn, (table, row_id, name), named, values[name])
                    self._rewrites = True
        if table == "change_log" and values.get("device", 1) is None:
            values["device"] = self.device  # its maker's "this device"
        return values

    def _park_write(self, table: str, row_id: int, stamp: str, change: Change) -> None:
        """A write to a row not here (merged away, removed, or not arrived yet): kept with
        the row's parked values, each column by the rule, so the write that puts the row
        back (an undone merge, an undo of its removal, its creation) brings it back as the
        devices that had the row when this write came have it."""
        values = self._values(table, change, row_id)
        stamps = dict.fromkeys(values, stamp) | self._column_stamps(change)
        clocks, removed = clocks_of(self.conn, table, row_id)
        kept = _parked(self.conn, table, row_id)
        for name, value in values.items():
            # (what was written before the row's removal can never win over the write
            # that puts it back, which comes later still: it is not kept)
            if clocks.get(name, "") < stamps[name] and stamps[name] > (removed or ""):
                kept[name], clocks[name] = value, stamps[name]
        if kept:
            _keep_parked(self.conn, table, row_id, kept)
        keep_clocks(self.conn, table, row_id, clocks, removed)

    def _unpark(self, table: str, row_id: int, values: dict[str, Any],
                stamps: dict[str, str], clocks: dict[str, str]) -> None:
        """A row put back whole: each column written later than the values that put it
        back keeps that later value."""
        kept = _parked(self.conn, table, row_id)
        for name in values:
            if name in kept and clocks.get(name, "") > stamps[name]:
                values[name], stamps[name] = kept[name], clocks[name]
        self.conn.execute("DELETE FROM sync_parked WHERE tbl = ? AND row_id = ?",
                          (table, row_id))

    def _column_stamps(self, change: Change) -> dict[str, str]:
        """Each column's own stamp where the change carries them (a snapshot's rows)."""
        stamps = change.get("c") or {}
        if not isinstance(stamps, dict) or not all(
                isinstance(v, str) for v in stamps.values()):
            raise ValueError(f"a change's column stamps: {str(stamps)[:120]}")
        for stamp in stamps.values():
            check_not_ahead(stamp, self.now)
        return stamps

    def _write(self, table: str, row_id: int, stamp: str, change: Change) -> None:
        values = self._values(table, change, row_id)
        stamps = dict.fromkeys(values, stamp) | self._column_stamps(change)
        clocks, removed = clocks_of(self.conn, table, row_id)
        whole = bool(change.get("w"))
        row = _current(self.conn, table, row_id)
        if (whole and removed and removed > stamp) or (row is None and not whole):
            # removed later than this row was written whole; or an edit of a row removed
            # here, or not here yet: kept for the write that puts it here, should one come
            self._park_write(table, row_id, stamp, change)
            return
        if row is None:  # (back after a removal or a merge: its columns written since stay)
            self._unpark(table, row_id, values, stamps, clocks)
            _insert(self.conn, table, row_id, values, self.applied)
            if table == "edges":
                self.applied.edges.add(row_id)
            keep_clocks(self.conn, table, row_id,
                        {**{k: stamps[k] for k in values}, "*": stamp}, None)
            if table == "change_log" and values.get("ops") is not None:
                index_change_rows(self.conn, row_id, decode_ops(values["ops"]))
            return
        newer = {k: v for k, v in values.items() if clocks.get(k, "") < stamps[k]}
        for name in set(values) - set(newer):
            if row.get(name) != values[name] and clocks.get(name, "") > stamps[name]:
                self._conflict(table, row_id, name, (row.get(name), clocks[name]),
                               (values[name], stamps[name]))
        for name in newer:  # this device's own edit, made before the other saw it, lost
            if row.get(name) != values[name] and self._unseen_own(clocks.get(name)):
                self._conflict(table, row_id, name, (values[name], stamps[name]),
                               (row.get(name), clocks[name]))
        if table == "edges":
            self.applied.edges.add(row_id)
        if newer:
            _update(self.conn, table, row_id, newer, self.applied)
            clocks.update({name: stamps[name] for name in newer})
        if whole:
            clocks["*"] = max(clocks.get("*", ""), stamp)
        keep_clocks(self.conn, table, row_id, clocks, None)

    def _unseen_own(self, stamp: str | None) -> bool:
        """`stamp` is of an edit made here that the writer of this file had not seen
        (its file says which of this device's files it had applied: see `Seen`)."""
        seen = self.seen
        return bool(stamp) and seen is not None and seen.me is not None and \
            seen.upto is not None and stamp.endswith("-" + seen.me) and stamp > seen.upto

    def _conflict(self, table: str, row_id: int, column: str, kept: tuple[Any, str],
                  lost: tuple[Any, str]) -> None:
        """A column written on two devices, each before seeing the other's: `kept` (its
        value and stamp, the later) stays, `lost` is listed, on both devices. Columns
        derived from another (a normalised name, a time of update) are not listed: one
        edit is one conflict."""
        if column not in PERSON_COLUMNS.get(table, ()):
            return
        (kept, kept_stamp), (lost, lost_stamp) = kept, lost
        self.applied.conflicts += 1
        self.conn.execute(
            "INSERT INTO sync_conflicts(tbl, row_id, col, kept, lost, kept_device,"
            " lost_device, at, kept_at, lost_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (table, row_id, column, _shown(kept), _shown(lost), parse_stamp(kept_stamp)[2],
             parse_stamp(lost_stamp)[2], self.now, parse_stamp(kept_stamp)[0] / 1000,
             parse_stamp(lost_stamp)[0] / 1000))


SLOT = "slot"  # two values of a one-value slot met (see core.sync.slots)
# The columns a person reads and edits; the others follow from them
PERSON_COLUMNS = {
    "nodes": ("name", "type", "description", "state", "summary", "deleted_at"),
    "edges": ("relation", "status", "source_id", "target_id", "archived_at", SLOT),
    "conversations": ("title", "deleted_at"),
    "messages": ("content", "deleted_at"),
}


@dataclass(frozen=True)
class Seen:
    """How far the writer of a file had seen this device's own edits: `me`, this
    device; `upto`, the clock of the last of its files the writer had applied ("" for
    none; None for not known: no conflict is claimed then)."""

    me: str | None = None
    upto: str | None = None


def _shown(value: Any) -> str | None:
    if value is None or isinstance(value, bytes):
        return None
    return str(value)[:500]


def _insert(conn: sqlite3.Connection, table: str, row_id: int, values: dict[str, Any],
            applied: Applied) -> None:
    names = ["id", *values]
    sql = (f"INSERT INTO {table} ({', '.join(names)}) VALUES "
           f"({', '.join('?' for _ in names)})")
    try:
        conn.execute(sql, (row_id, *values.values()))
        return
    except sqlite3.IntegrityError:
        if table == "nodes" and _node_named(conn, values.get("norm_name")) is not None:
            _insert_merging(conn, sql, row_id, values, applied)
            return
        if table == "edges" and _twin(conn, row_id, values) is not None:
            _insert_fact_twin(conn, sql, row_id, values)
            return
        if table == "conversations" and values.get("source") is not None:
            # The same export imported on two devices: both kept, one names the source.
            conn.execute(sql, (row_id, *{**values, "source": None}.values()))
            return
        raise


def _node_named(conn: sqlite3.Connection, norm_name: Any) -> int | None:
    row = conn.execute("SELECT id FROM nodes WHERE norm_name = ?", (norm_name,)).fetchone()
    return row[0] if row else None


def _insert_merging(conn: sqlite3.Connection, sql: str, row_id: int, values: dict[str, Any],
                    applied: Applied) -> None:
    """A node arrives with a name this memory already has: one node stays."""
    local = _node_named(conn, values["norm_name"])
    applied.merged += 1
    if local < row_id:  # it is this node: the others hear so
        note_merge(conn, row_id, local)
        return
    conn.execute(sql, (row_id, *{**values, "norm_name": values["norm_name"] + _ASIDE}
                       .values()))
    merge_nodes(conn, keep=row_id, gone=local)
    conn.execute("UPDATE nodes SET norm_name = ? WHERE id = ?", (values["norm_name"], row_id))


def merge_nodes(conn: sqlite3.Connection, keep: int, gone: int) -> None:
    """Node `gone` becomes `keep` here, as a change of this device: its facts name `keep`,
    its history shows under `keep`, it is removed, and the merge is sent so the other
    devices make it too."""
    _recording(conn, True)
    try:
        _move_facts(conn, keep, gone)
        _park(conn, "nodes", gone)
        conn.execute("DELETE FROM nodes WHERE id = ?", (gone,))
        note_merge(conn, gone, keep)
    finally:
        _recording(conn, False)


def _remember_rewrite(conn: sqlite3.Connection, where: tuple[str, int, str], named: Any,
                      became: Any) -> None:
    """A fact's column named a merged node and was pointed at the node it became: kept,
    so the fact names it again should the merge be undone."""
    table, row_id, column = where
    if named == became:
        conn.execute("DELETE FROM sync_rewritten WHERE tbl = ? AND row_id = ? AND col = ?",
                     (table, row_id, column))
    else:
        conn.execute("INSERT OR REPLACE INTO sync_rewritten VALUES (?, ?, ?, ?, ?)",
                     (table, row_id, column, named, became))


def _park(conn: sqlite3.Connection, table: str, row_id: int, later_than: str = "") -> None:
    """Keep a row's values as it is merged away or removed (its clocks stay in
    sync_rows): a write that puts it back takes the columns written after it. Removed,
    only the columns written after the removal are kept (none, unless another device
    edited it before it heard): what the trash emptied does not stay in the file."""
    row = _current(conn, table, row_id)
    if row is not None and later_than:
        clocks = clocks_of(conn, table, row_id)[0]
        row = {k: v for k, v in row.items() if clocks.get(k, "") > later_than}
    if row:
        _keep_parked(conn, table, row_id, row)


def _parked(conn: sqlite3.Connection, table: str, row_id: int) -> dict[str, Any]:
    found = conn.execute("SELECT row FROM sync_parked WHERE tbl = ? AND row_id = ?",
                         (table, row_id)).fetchone()
    return {k: decode_value(v) for k, v in json.loads(found[0]).items()} if found else {}


def _keep_parked(conn: sqlite3.Connection, table: str, row_id: int,
                 row: dict[str, Any]) -> None:
    conn.execute("INSERT OR REPLACE INTO sync_parked VALUES (?, ?, ?)",
                 (table, row_id, json.dumps({k: encode_value(v) for k, v in row.items()},
                                            ensure_ascii=False)))


def _name_again(conn: sqlite3.Connection, node: int) -> None:
    """A merge was undone: the facts that were pointed away from `node` while it was
    merged name it again (those still pointing where the merge sent them)."""
    for table, row_id, column, became in conn.execute(
            "SELECT tbl, row_id, col, became FROM sync_rewritten WHERE original = ?",
            (node,)).fetchall():
        with contextlib.suppress(sqlite3.IntegrityError):  # the same fact stands there
            conn.execute(f"UPDATE {table} SET {column} = ? WHERE id = ? AND {column} = ?",
                         (node, row_id, became))
    conn.execute("DELETE FROM sync_rewritten WHERE original = ?", (node,))


def _move_facts(conn: sqlite3.Connection, keep: int, gone: int) -> None:
    """Point `gone`'s facts at `keep` (two active copies of one fact: the later steps
    aside) and show its history under `keep`."""
    for name in ("source_id", "target_id"):
        for (edge_id,) in conn.execute(f"SELECT id FROM edges WHERE {name} = ?",
                                       (gone,)).fetchall():
            edge = _current(conn, "edges", edge_id)
            edge[name] = keep
            twin = _twin(conn, edge_id, edge)
            if twin is not None:
                _retire_twin(conn, edge_id, twin)
            conn.execute(f"UPDATE edges SET {name} = ? WHERE id = ?", (keep, edge_id))
            _remember_rewrite(conn, ("edges", edge_id, name), gone, keep)
    conn.execute("INSERT OR IGNORE INTO change_rows SELECT tbl, ?, change_id FROM"
                 " change_rows WHERE tbl = 'nodes' AND row_id = ?", (keep, gone))


def _twin(conn: sqlite3.Connection, edge_id: int, values: dict[str, Any]) -> int | None:
    """Another active edge saying what `values` says (the one-active-copy rule)."""
    if values.get("status", "active") != "active":
        return None
    row = conn.execute("SELECT id FROM edges WHERE source_id = ? AND norm_relation = ? AND"
                       " target_id = ? AND status = 'active' AND id != ?",
                       (values.get("source_id"), values.get("norm_relation"),
                        values.get("target_id"), edge_id)).fetchone()
    return row[0] if row else None


def _retire_twin(conn: sqlite3.Connection, edge_id: int, twin: int) -> None:
    """Of two active copies of one fact, one steps aside (`core.store.one_copy`)."""
    earlier, later = one_copy.kept_and_retired(edge_id, twin)
    if conn.execute("SELECT 1 FROM edges WHERE id = ?", (later,)).fetchone():
        conn.execute("UPDATE edges SET status = 'superseded', superseded_by = ? WHERE id = ?",
                     (earlier, later))


def _insert_fact_twin(conn: sqlite3.Connection, sql: str, row_id: int,
                      values: dict[str, Any]) -> None:
    twin = _twin(conn, row_id, values)
    if twin < row_id:  # it arrives stepped aside, and says so to the others
        conn.execute(sql, (row_id, *{**values, "status": "superseded",
                                     "superseded_by": twin}.values()))
        conn.executemany("INSERT INTO sync_outbox(tbl, row_id, col) VALUES ('edges', ?, ?)",
                         [(row_id, "status"), (row_id, "superseded_by")])
        return
    _recording(conn, True)
    try:
        _retire_twin(conn, row_id, twin)
    finally:
        _recording(conn, False)
    conn.execute(sql, (row_id, *values.values()))


def _update(conn: sqlite3.Connection, table: str, row_id: int, values: dict[str, Any],
            applied: Applied) -> None:
    sql = f"UPDATE {table} SET {', '.join(f'{k} = ?' for k in values)} WHERE id = ?"
    try:
        conn.execute(sql, (*values.values(), row_id))
        return
    except sqlite3.IntegrityError:
        row = {**_current(conn, table, row_id), **values}
        if table == "nodes" and "norm_name" in values:
            other = _node_named(conn, values["norm_name"])
            if other is not None:
                applied.merged += 1
                if other < row_id:
                    rest = {k: v for k, v in values.items() if k != "norm_name"}
                    if rest:
                        _update(conn, table, row_id, rest, applied)
                    merge_nodes(conn, keep=other, gone=row_id)
                    return
                conn.execute(sql, (*{**values, "norm_name": values["norm_name"] + _ASIDE}
                                   .values(), row_id))
                merge_nodes(conn, keep=row_id, gone=other)
                conn.execute("UPDATE nodes SET norm_name = ? WHERE id = ?",
                             (values["norm_name"], row_id))
                return
        if table == "edges":
            twin = _twin(conn, row_id, row)
            if twin is not None:
                _recording(conn, True)
                try:
                    _retire_twin(conn, row_id, twin)
                    if twin < row_id:
                        values = {**values, "status": "superseded", "superseded_by": twin}
                finally:
                    _recording(conn, False)
                conn.execute(f"UPDATE {table} SET {', '.join(f'{k} = ?' for k in values)}"
                             " WHERE id = ?", (*values.values(), row_id))
                return
        raise
