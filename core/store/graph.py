"""The SQLite graph store: connection, one-transaction writes with a change log, and undo.

Every write goes through `insert`, `update` or `delete` inside `write()`, which records
the row's image before and after. That record is the change log: it says what changed,
which tool and turn did it, and is all that `undo()` needs to put the rows back exactly.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import CodedError, ErrorCode
from core.i18n import N_, tr
from core.paths import PRIVATE_FILE, make_private_file
from core.store import takeback
from core.store.schema import migrate
from core.store.text import display_name, normalize_name, search_text

PERSONA_NODE = "AI"
TABLES = ("nodes", "edges")
ID_SPAN = 1 << 40  # ids per device: a device's range is slot × ID_SPAN onwards
BUSY_TIMEOUT_MS = 5000
TRASH_DAYS = 30  # deleted rows stay restorable at least this long
DAY_SECONDS = 86400.0
# Columns written outside the change log (the person's review mark): undo neither checks
# nor restores them, so keeping a change never blocks undoing it.
UNLOGGED_COLUMNS = frozenset({"reviewed_at"})

Row = dict[str, Any]


# How a logged change is said to the person: its summary until `core.store` installs the
# words made from its lines (core.store.describe, which itself reads the store).
CHANGE_WORDS: list[Callable[[GraphStore, Row], str]] = [
    lambda _store, entry: entry["summary"] or entry["tool"]]


class StoreError(CodedError):
    """A problem the caller can act on, with a message fit to show a person or a model."""

    code = ErrorCode.STORE


@dataclass
class Change:
    """The write under way: its provenance and the row images it has touched so far."""

    tool: str
    arguments: Any
    turn_id: str | None
    actor: str
    ops: list[dict[str, Any]] = field(default_factory=list)
    summary: str = ""
    undo_of: int | None = None
    undoes: list[int] = field(default_factory=list)
    id: int | None = None
    via: str | None = None  # how an app reached the memory (not its own word), or None
    device: str | None = None  # the other device it was made on (it came by sync)

    def touched(self) -> dict[str, Any]:
        """What the change wrote, as the one event a front end updates from: ids of the
        nodes and edges (a bulk import says `bulk` instead of listing millions)."""
        rows: dict[str, set[int]] = {"nodes": set(), "edges": set()}
        bulk = False
        for op in self.ops:
            if "id" in op:
                rows[op["table"]].add(op["id"])
            else:
                bulk = True
        return {"change_id": self.id, "actor": self.actor, "via": self.via, "tool": self.tool,
                "turn_id": self.turn_id, "summary": self.summary, "bulk": bulk,
                "nodes": sorted(rows["nodes"]), "edges": sorted(rows["edges"]),
                "device_name": self.device}


def sqlite_code(error: sqlite3.Error) -> int | None:
    """SQLite's primary result code of `error` (SQLITE_BUSY, SQLITE_FULL, …), or None for
    an error SQLite did not raise: what to do is read from this, never from the words."""
    code = getattr(error, "sqlite_errorcode", None)
    return None if code is None else code & 0xFF


def describe_sqlite_error(error: sqlite3.Error) -> str:
    """A plain sentence for the database errors a person can meet."""
    code, text = sqlite_code(error), str(error)
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return tr("the memory database is busy (another program holds it); nothing was "
                  "written")
    if code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
        return tr("the memory database file is damaged ({error})", error=text)
    if code == sqlite3.SQLITE_READONLY:
        return tr("the memory database is read-only; nothing was written")
    if code == sqlite3.SQLITE_FULL:
        return tr("the disk is full; nothing was saved (the memory can still be read)")
    if code == sqlite3.SQLITE_IOERR:
        return tr("the memory database could not be written ({error}); nothing was saved",
                  error=text)
    return tr("database error: {error}", error=text)


MAX_STORED_ARGUMENTS = 20_000  # characters of a call's arguments kept in the change log


def stored_arguments(arguments: Any) -> str:
    """A call's arguments as the change log keeps them: whole up to a sane size, else cut
    with a note (the row images, not the arguments, are what undo needs)."""
    text = json.dumps(arguments, ensure_ascii=False)
    if len(text) <= MAX_STORED_ARGUMENTS:
        return text
    return json.dumps({"cut": f"{len(text):,} characters, the first "
                              f"{MAX_STORED_ARGUMENTS:,} kept",
                       "start": text[:MAX_STORED_ARGUMENTS]}, ensure_ascii=False)


def encode_ops(ops: list[dict[str, Any]]) -> bytes:
    """Row images compress about tenfold: they repeat the same column names and values."""
    return zlib.compress(json.dumps(ops, ensure_ascii=False).encode(), 6)


def index_change_rows(conn: sqlite3.Connection, change_id: int,
                      ops: list[dict[str, Any]]) -> None:
    """Index the rows a logged change touched (`change_rows`), for each row's history."""
    conn.executemany("INSERT OR IGNORE INTO change_rows VALUES (?, ?, ?)",
                     [(op["table"], op["id"], change_id) for op in ops if "id" in op])
    for op in ops:
        table = op["table"]
        for first, last in op.get("inserted", ()):
            conn.execute(f"INSERT OR IGNORE INTO change_rows SELECT ?, id, ? FROM {table}"
                         " WHERE id BETWEEN ? AND ?", (table, change_id, first, last))
        if "removed" in op:
            conn.execute("INSERT OR IGNORE INTO change_rows SELECT tbl, row_id, ?"
                         " FROM change_rows WHERE tbl = ? AND change_id = ?",
                         (change_id, table, op["of"]))


def decode_ops(blob: bytes) -> list[dict[str, Any]]:
    return json.loads(zlib.decompress(blob))


def same_image(row: Row | None, image: Row | None) -> bool:
    """Whether a row is as a logged image shows it. Columns the log does not keep (the
    review mark) and columns added after the image was taken (a newer schema) are not
    compared."""
    if row is None or image is None:
        return row is image
    return all(row.get(k) == v for k, v in image.items() if k not in UNLOGGED_COLUMNS) \
        and row.keys() >= image.keys()


def _create_private(path: Path) -> None:
    """Create a new database file readable by its owner only, before SQLite opens it."""
    if not path.exists():
        descriptor = os.open(path, os.O_CREAT | os.O_WRONLY, PRIVATE_FILE)
        os.close(descriptor)


class GraphStore:
    """One connection to one graph file; owned by a single thread at a time."""

    def __init__(self, path: str | Path, clock: Callable[[], float] = time.time,
                 trash_days: int = TRASH_DAYS, read_only: str | None = None) -> None:
        """`read_only`, when given, is why the file must not be written (it is damaged,
        or its folder cannot be written): the store opens for reading only and every
        write is refused with that reason."""
        self.path = Path(path)
        # `clock` dates what the memory holds; `log_clock` when a change was made. They
        # differ only while a past conversation is remembered (see `said_at`).
        self.clock = self.log_clock = clock
        self.trash_days = trash_days  # no model tool removes anything deleted more recently
        self.read_only = read_only
        self._change: Change | None = None
        # Called with each change once it has committed (see `write`).
        self.on_commit: list[Callable[[Change], None]] = []
        # Recall by meaning (a `core.store.search.SimilarFacts`), when the owner runs one.
        self.meaning: Any = None
        if read_only:
            self._open_read_only()
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            _create_private(self.path)
            self.conn = sqlite3.connect(
                str(self.path), isolation_level=None, check_same_thread=False,
                timeout=BUSY_TIMEOUT_MS / 1000,
            )
        except (OSError, sqlite3.Error) as error:
            raise StoreError(tr("cannot open the memory database {path}: {error}",
                                path=self.path, error=error)) from error
        try:
            self.conn.row_factory = sqlite3.Row
            self.conn.create_function("search_text", 1, search_text, deterministic=True)
            self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            self.conn.execute("PRAGMA journal_mode = WAL")
            self.conn.execute("PRAGMA synchronous = FULL")
            self.conn.execute("PRAGMA foreign_keys = ON")
            self.migrated_from = migrate(self.conn)
        except sqlite3.Error as error:
            self.conn.close()
            raise StoreError(describe_sqlite_error(error)) from error
        # SQLite gives its side files the database's mode; older versions left all three
        # readable by everyone.
        for suffix in ("", "-wal", "-shm", "-journal"):
            make_private_file(Path(f"{self.path}{suffix}"))

    def _open_read_only(self) -> None:
        """Read-only, and if even that needs a write (a WAL file in a folder that cannot
        be written has no -shm to share), as an immutable file."""
        failure: sqlite3.Error | None = None
        for options in ("mode=ro", "mode=ro&immutable=1"):
            conn = None
            try:
                conn = sqlite3.connect(f"file:{self.path}?{options}", uri=True,
                                       isolation_level=None, check_same_thread=False,
                                       timeout=BUSY_TIMEOUT_MS / 1000)
                conn.row_factory = sqlite3.Row
                conn.create_function("search_text", 1, search_text, deterministic=True)
                conn.execute("SELECT count(*) FROM nodes").fetchone()
            except sqlite3.Error as error:
                failure = error
                if conn is not None:
                    conn.close()
                continue
            self.conn = conn
            self.migrated_from = self.schema_version()
            return
        raise StoreError(tr("cannot read the memory database {path}: {error}",
                            path=self.path, error=describe_sqlite_error(failure))) \
            from failure

    def quick_check(self, most: int = 10) -> list[str]:
        """SQLite's quick_check: the first `most` problems with the file's pages; empty
        when sound."""
        problems = [line for row in self.conn.execute(f"PRAGMA quick_check({most})")
                    for line in row[0].splitlines()
                    if row[0] != "ok" and not line.startswith("***")]
        return problems[:most]

    def close(self) -> None:
        self.conn.close()

    # -- reading -------------------------------------------------------------------------

    def query(self, sql: str, params: tuple | list = ()) -> list[Row]:
        return [dict(r) for r in self.conn.execute(sql, params)]

    def query_one(self, sql: str, params: tuple | list = ()) -> Row | None:
        row = self.conn.execute(sql, params).fetchone()
        return dict(row) if row else None

    def row(self, table: str, row_id: int) -> Row | None:
        return self.query_one(f"SELECT * FROM {table} WHERE id = ?", (row_id,))

    def find_node(self, name: str) -> Row | None:
        return self.query_one("SELECT * FROM nodes WHERE norm_name = ?", (normalize_name(name),))

    def schema_version(self) -> int:
        return self.conn.execute("PRAGMA user_version").fetchone()[0]

    def dump(self) -> dict[str, list[Row]]:
        """Every node and edge, in id order: what undo must restore exactly."""
        return {t: self.query(f"SELECT * FROM {t} ORDER BY id") for t in TABLES}

    # -- writing -------------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One transaction for writes the change log does not keep (review marks)."""
        if self.read_only:
            raise StoreError(self.read_only, ErrorCode.READ_ONLY)
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            self.conn.execute("COMMIT")
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise

    @contextmanager
    def said_at(self, when: float) -> Iterator[None]:
        """Writes inside are dated `when` (a past conversation's time: a fact said on
        8 May 2023 is valid from then), while the change log keeps the real time."""
        self.clock = lambda: when
        try:
            yield
        finally:
            self.clock = self.log_clock

    @contextmanager
    def write(self, tool: str, arguments: Any = None, turn_id: str | None = None,
              actor: str = "model", via: str | None = None) -> Iterator[Change]:
        """One transaction: everything inside happens, with its change-log entry, or nothing."""
        if self.read_only:
            raise StoreError(self.read_only, ErrorCode.READ_ONLY)
        if self._change is not None:
            raise StoreError("a write is already in progress", ErrorCode.INTERNAL)
        change = Change(tool, arguments, turn_id, actor, via=via)
        self._change = change
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield change
                if change.ops:
                    change.id = self._log(change)
                    # Undoing an undo (a redo) makes what that undo took back undoable
                    # again.
                    self.conn.executemany(
                        "UPDATE change_log SET undone_by = NULL WHERE undone_by = ?",
                        [(undone,) for undone in change.undoes])
                    self.conn.executemany(
                        "UPDATE change_log SET undone_by = ? WHERE id = ?",
                        [(change.id, undone) for undone in change.undoes])
                self.conn.execute("COMMIT")
            except BaseException:
                # SQLite may have rolled back by itself (a full disk does): a second
                # ROLLBACK would hide the real error behind "no transaction is active".
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise
        finally:
            self._change = None
        if change.id is not None:
            self._announce(change)

    def _announce(self, change: Change) -> None:
        """Tell the listeners once the change is on disk; a listener's failure is its own."""
        for listener in list(self.on_commit):
            try:
                listener(change)
            except Exception:  # a front end's bug must not look like a failed write
                logging.getLogger(__name__).exception("change listener failed")

    def _log(self, change: Change) -> int:
        cursor = self.conn.execute(
            "INSERT INTO change_log(id, created_at, tool, arguments, turn_id, actor, summary,"
            " ops, undo_of, via, device) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
            " (SELECT device FROM sync_self))",
            (self.new_id("change_log"), self.log_clock(), change.tool,
             stored_arguments(change.arguments),
             change.turn_id, change.actor, change.summary, encode_ops(change.ops),
             change.undo_of, change.via),
        )
        change_id = cursor.lastrowid
        index_change_rows(self.conn, change_id, change.ops)
        return change_id

    def _require_change(self) -> Change:
        """Every write belongs to a logged change; refuse before touching any row."""
        if self._change is None:
            raise StoreError("writes must happen inside store.write()", ErrorCode.INTERNAL)
        return self._change

    def _record(self, table: str, row_id: int, before: Row | None, after: Row | None) -> None:
        op = {"table": table, "id": row_id, "before": before, "after": after}
        self._require_change().ops.append(op)

    def record_inserted(self, table: str, ranges: list[list[int]]) -> None:
        """Log rows added in bulk as id ranges [first, last], not one image per row: an
        import of millions of rows would otherwise keep them all in memory. Undo removes
        the rows again."""
        self._require_change().ops.append({"table": table, "inserted": ranges})

    def id_base(self) -> int:
        """The first id of this device's own range once it syncs (0 before): devices
        number new rows in ranges of their own, so two never give one id to two rows."""
        try:
            row = self.conn.execute(
                "SELECT slot FROM sync_self UNION ALL SELECT * FROM (SELECT slot FROM"
                " sync_former ORDER BY left_at DESC LIMIT 1) LIMIT 1").fetchone()
        except sqlite3.Error:  # a file older than sync, opened read-only
            return 0
        return row[0] * ID_SPAN if row else 0

    def next_id(self, table: str, base: int | None = None) -> int:
        """The id the next row of `table` gets: above every id it ever had (`id_floor`),
        so a removed row's id never names another; within this device's range once it
        syncs (`base`, when the caller knows it already)."""
        base = self.id_base() if base is None else base
        if not base:
            return self.conn.execute(
                f"SELECT max((SELECT coalesce(max(id), 0) FROM {table}), coalesce((SELECT"
                " top FROM id_floor WHERE tbl = ?), 0)) + 1", (table,)).fetchone()[0]
        return self.conn.execute(
            f"SELECT max((SELECT coalesce(max(id), ?) FROM {table} WHERE id > ? AND id < ?),"
            " coalesce((SELECT top FROM id_floor WHERE tbl = ?), ?)) + 1",
            (base, base, base + ID_SPAN, f"{table}@{base}", base)).fetchone()[0]

    def new_id(self, table: str) -> int | None:
        """An id for a row of a table SQLite numbers by itself: None (SQLite's choice)
        until this device syncs, then the next one of its range."""
        base = self.id_base()
        return self.next_id(table, base) if base else None

    def _raise_floor(self, table: str, top: int) -> None:
        """Before rows up to `top` are removed: their ids stay taken."""
        base = self.id_base()
        key = f"{table}@{base}" if base and base < top < base + ID_SPAN else table
        self.conn.execute("INSERT INTO id_floor VALUES (?, ?) ON CONFLICT (tbl) DO UPDATE"
                          " SET top = max(top, excluded.top)", (key, top))

    def insert(self, table: str, values: Row) -> int:
        if table in TABLES and "id" not in values:
            values = {"id": self.next_id(table), **values}
        columns = ", ".join(values)
        marks = ", ".join("?" for _ in values)
        self._require_change()
        cursor = self.conn.execute(
            f"INSERT INTO {table} ({columns}) VALUES ({marks})", tuple(values.values())
        )
        row_id = cursor.lastrowid
        self._record(table, row_id, None, self.row(table, row_id))
        return row_id

    def update(self, table: str, row_id: int, values: Row) -> Row:
        self._require_change()
        before = self.row(table, row_id)
        if before is None:
            raise StoreError(N_("{row} {id} does not exist"), ErrorCode.NOT_FOUND,
                             row=table[:-1], id=row_id)
        assignments = ", ".join(f"{c} = ?" for c in values)
        self.conn.execute(
            f"UPDATE {table} SET {assignments} WHERE id = ?", (*values.values(), row_id)
        )
        after = {**before, **values}
        self._record(table, row_id, before, after)
        return after

    def delete(self, table: str, row_id: int) -> None:
        self._require_change()
        before = self.row(table, row_id)
        if before is None:
            return
        self._raise_floor(table, row_id)
        self.conn.execute(f"DELETE FROM {table} WHERE id = ?", (row_id,))
        self._record(table, row_id, before, None)

    # -- graph helpers -------------------------------------------------------------------

    def upsert_node(self, name: str, kind: str = "entity", type_: str | None = None,
                    retype: bool = True) -> Row:
        """The node called `name`, created if new; each call counts as one mention.

        `retype=False` gives `type_` to a new node only: a persona value that happens to
        share a name with a general memory must not change what that memory is."""
        if not normalize_name(name):
            raise StoreError(f"the name {name!r} has no visible character", ErrorCode.INVALID)
        now = self.clock()
        node = self.find_node(name)
        if node is None:
            node_id = self.insert("nodes", {
                "name": display_name(name), "norm_name": normalize_name(name), "kind": kind,
                "type": type_, "mention_count": 1, "created_at": now, "updated_at": now,
            })
            return self.row("nodes", node_id)
        mentioned = 0 if self._touched_this_turn("nodes", node["id"]) else 1
        changes: Row = {"mention_count": node["mention_count"] + mentioned, "updated_at": now}
        if type_ and type_ != node["type"] and retype:
            changes["type"] = type_
        if node["deleted_at"] is not None and node["kind"] in ("entity", "state"):
            # Mentioned again: out of the trash, so a new fact never hangs on a node that
            # emptying the trash would remove.
            changes["deleted_at"] = None
        return self.update("nodes", node["id"], changes)

    def _touched_this_turn(self, table: str, row_id: int) -> bool:
        """Whether the model's current turn already wrote this row: a fact said once and
        stored twice in one turn (a model repeating its call) counts as one mention."""
        change = self._change
        if change is None or change.turn_id is None:
            return False
        if any(op.get("id") == row_id and op["table"] == table for op in change.ops):
            return True
        return self.query_one(
            "SELECT 1 AS yes FROM change_rows r JOIN change_log c ON c.id = r.change_id"
            " WHERE r.tbl = ? AND r.row_id = ? AND c.turn_id = ? LIMIT 1",
            (table, row_id, change.turn_id)) is not None

    def persona_node(self) -> Row:
        node = self.find_node(PERSONA_NODE)
        if node is None:
            now = self.clock()
            node_id = self.insert("nodes", {
                "name": PERSONA_NODE, "norm_name": normalize_name(PERSONA_NODE),
                "kind": "persona", "type": "Assistant", "mention_count": 1,
                "created_at": now, "updated_at": now,
            })
            node = self.row("nodes", node_id)
        return node

    def active_edge(self, source_id: int, relation: str, target_id: int) -> Row | None:
        return self.query_one(
            "SELECT * FROM edges WHERE source_id = ? AND norm_relation = ? AND target_id = ?"
            " AND status = 'active'", (source_id, normalize_name(relation), target_id),
        )

    def add_edge(self, source_id: int, relation: str, target_id: int, *, category: str,
                 confidence: float = 1.0, temporal_tag: str | None = None) -> tuple[Row, bool]:
        """Add the edge, or reinforce the same active one; returns (edge, created)."""
        if not normalize_name(relation):
            raise StoreError(f"the relation {relation!r} has no visible character",
                             ErrorCode.INVALID)
        now = self.clock()
        existing = self.active_edge(source_id, relation, target_id)
        if existing:
            again = 0 if self._touched_this_turn("edges", existing["id"]) else 1
            changes: Row = {
                "mention_count": existing["mention_count"] + again,
                "confidence": max(existing["confidence"], confidence),
                "updated_at": now,
            }
            if temporal_tag:
                changes["temporal_tag"] = temporal_tag
            return self.update("edges", existing["id"], changes), False
        turn = self._change.turn_id if self._change else None
        edge_id = self.insert("edges", {
            "source_id": source_id, "target_id": target_id, "relation": display_name(relation),
            "norm_relation": normalize_name(relation), "confidence": confidence,
            "status": "active", "category": category, "valid_from": now,
            "source_message": turn, "temporal_tag": temporal_tag,
            "created_at": now, "updated_at": now,
        })
        return self.row("edges", edge_id), True

    def set_edge_status(self, edge: Row, status: str, **extra: Any) -> Row:
        return self.update("edges", edge["id"], {"status": status, "updated_at": self.clock(),
                                                  **extra})

    def hard_delete_edge(self, edge_id: int) -> None:
        """Remove an edge for good, first unlinking edges that name it as their successor."""
        for ref in self.query("SELECT id FROM edges WHERE superseded_by = ?", (edge_id,)):
            self.update("edges", ref["id"], {"superseded_by": None})
        self.delete("edges", edge_id)

    # -- undo ----------------------------------------------------------------------------

    def change(self, change_id: int) -> Row | None:
        return self.row("change_log", change_id)

    def _undoable(self, change_id: int) -> Row:
        """The logged change, when undo may take it back: it exists, is not undone, and
        was made on this device."""
        entry = self.change(change_id)
        if entry is None:
            raise StoreError(N_("that change is not in the change log"),
                             ErrorCode.NOT_FOUND, change=change_id)
        if entry["undone_by"] is not None:
            raise StoreError(N_("“{summary}” was undone already"), ErrorCode.NOTHING_TO_DO,
                             change=change_id, summary=self.change_words(entry))
        elsewhere = self.made_elsewhere(entry)
        if elsewhere is not None:
            raise StoreError(N_("“{summary}” was made on {device}: undo it there"),
                             ErrorCode.INVALID, change=change_id, device=elsewhere,
                             summary=self.change_words(entry))
        return entry

    def made_elsewhere(self, entry: Row) -> str | None:
        """The name of the device a logged change was made on, when it is not this one
        (a change that arrived by sync); None for this device's own."""
        device = entry.get("device")
        if device is None:
            return None
        row = self.query_one("SELECT (SELECT device FROM sync_self) AS me, (SELECT name FROM"
                             " sync_devices WHERE device = ?) AS name, EXISTS (SELECT 1 FROM"
                             " sync_former WHERE device = ?) AS former", (device, device))
        if row is None or row["me"] is None or row["me"] == device or row["former"]:
            return None
        return row["name"] or device

    def undo(self, change_id: int, turn_id: str | None = None, actor: str = "user") -> int:
        """Put back the rows `change_id` touched; returns the id of the undo's own change.

        Compared column by column (see `core.store.takeback`): what a later change only
        counted again stays counted, and a row a later change rewrote or removed is left
        as that change left it and listed as `kept` in the undo's arguments (see
        `kept_by_undo`). Refused only when nothing at all could be taken back.
        """
        return self.undo_changes([change_id], "undo", {"change_id": change_id}, turn_id, actor)

    def undo_turn(self, turn_id: str, actor: str = "user",
                  later: Sequence[str] = ()) -> tuple[int, list[int]]:
        """Take back every change one turn made (and the `later` turns', when an earlier
        message is edited), newest first, as one change.

        Answers the undo's change id and the ids it undid; all or nothing.
        """
        turns = [turn_id, *later]
        places = ", ".join("?" * len(turns))
        rows = self.query(f"SELECT id FROM change_log WHERE turn_id IN ({places}) AND"
                          " undo_of IS NULL AND undone_by IS NULL AND tool NOT IN ('undo',"
                          " 'undo_turn', 'redo') ORDER BY id", turns)
        ids = [r["id"] for r in rows]
        if not ids:
            raise StoreError(N_("this turn changed nothing that is not undone already"),
                             ErrorCode.NOTHING_TO_DO)
        arguments: dict[str, Any] = {"turn_id": turn_id, "change_ids": ids}
        if later:
            arguments["later_turns"] = list(later)
        undo_id = self.undo_changes(ids, "undo_turn", arguments, None, actor)
        return undo_id, ids

    def undo_changes(self, change_ids: list[int], tool: str, arguments: Any,
                     turn_id: str | None = None, actor: str = "user") -> int:
        """Undo `change_ids` (newest first) in one transaction; see `undo`."""
        entries = [self._undoable(change_id)
                   for change_id in sorted(change_ids, reverse=True)]
        if not any(decode_ops(e["ops"]) for e in entries):
            raise StoreError(N_("that change changed nothing") if len(entries) == 1
                             else N_("those changes changed nothing"), ErrorCode.NOTHING_TO_DO,
                             change=change_ids[0])
        kept: list[dict[str, Any]] = []
        try:
            with self.write(tool, arguments, turn_id, actor) as change:
                for entry in entries:
                    for op in reversed(decode_ops(entry["ops"])):
                        if "id" not in op:
                            self._undo_bulk(entry["id"], op)
                            continue
                        why = self._take_back(op)
                        if why:
                            kept.append({"change": entry["id"], "table": op["table"],
                                         "row_id": op["id"], "why": why,
                                         "row": self.row_words(op["table"], op["id"])})
                if kept and not change.ops:  # every part was rewritten later: say which
                    first = kept[0]
                    raise self._changed_later(self.change(first["change"]), first["table"],
                                              first["row_id"])
                if not change.ops:
                    raise StoreError(N_("that change changed nothing that is still there"),
                                     ErrorCode.NOTHING_TO_DO, change=change_ids[0])
                if kept:
                    change.arguments = {**(arguments if isinstance(arguments, dict) else
                                           {"arguments": arguments}), "kept": kept}
                names = ", ".join(f"{e['id']} ({e['tool']})" for e in entries[:5])
                more = f" and {len(entries) - 5} more" if len(entries) > 5 else ""
                verb = "redid: took back undo" if tool == "redo" else "undid change"
                change.summary = f"{verb}{'s' if len(entries) > 1 else ''} {names}{more}"
                change.undo_of = entries[0]["id"]
                change.undoes = [e["id"] for e in entries]
        except sqlite3.IntegrityError as error:
            raise StoreError(N_("“{summary}” cannot be undone: what it would bring back "
                                "is there again from a later change"), ErrorCode.CONFLICT,
                             change=change_ids[0], summary=self.change_words(entries[-1]),
                             detail=str(error)) from error
        return change.id

    def kept_by_undo(self, undo_id: int) -> list[dict[str, Any]]:
        """The rows an undo left as later changes had rewritten or removed them."""
        entry = self.change(undo_id)
        try:
            arguments = json.loads(entry["arguments"]) if entry else None
        except (TypeError, ValueError):
            return []
        kept = arguments.get("kept") if isinstance(arguments, dict) else None
        return kept if isinstance(kept, list) else []

    def _take_back(self, op: dict[str, Any]) -> str:
        """Undo one logged row change as far as later changes allow; answers why a part
        stayed ("changed", "gone") or "" when it was taken back or is theirs now."""
        table, row_id = op["table"], op["id"]
        now = self.row(table, row_id)
        plan = takeback.step(op["before"], op["after"], now)
        if plan.action == "delete":
            if self._attempt(lambda: self.delete(table, row_id)):
                return ""
            # a later fact stands on this row (a node this change made): it stays theirs,
            # less what this change counted
            plan = takeback.Step("keep", takeback.counts_back(op["after"], now, floor=1),
                                 "again")
        if plan.action == "insert":
            done = self._attempt(lambda: self._restore(table, row_id, plan.values))
            return "" if done else "changed"
        if plan.action == "update":
            done = not plan.values or self._attempt(
                lambda: self._restore(table, row_id, {**now, **plan.values}))
            return "" if done else "changed"
        if plan.values:  # kept as stated again later: only this change's mentions go
            values = {k: v for k, v in plan.values.items() if now.get(k) != v}
            if values:
                self.update(table, row_id, values)
                self._require_change().ops[-1]["merged"] = True
        return "" if plan.why == "again" else plan.why

    def _attempt(self, write: Callable[[], None]) -> bool:
        """Run one part of an undo, or leave it out when SQLite refuses it (a later row
        depends on it, or holds its name): the rest goes on."""
        change = self._require_change()
        mark = len(change.ops)
        self.conn.execute("SAVEPOINT take_back")
        try:
            write()
        except sqlite3.IntegrityError:
            self.conn.execute("ROLLBACK TO take_back")
            self.conn.execute("RELEASE take_back")
            del change.ops[mark:]
            return False
        self.conn.execute("RELEASE take_back")
        return True

    def _undo_bulk(self, change_id: int, op: dict[str, Any]) -> None:
        """Remove rows a bulk import added, unless a later change touched one of them."""
        table = op["table"]
        if "removed" in op:
            rows = sum(last - first + 1 for first, last in op["removed"])
            raise StoreError(N_("that change took back an import ({rows} rows); import the "
                                "file again to bring them back"), ErrorCode.CONFLICT,
                             change=change_id, rows=f"{rows:,}")
        for first, last in op["inserted"]:
            self._check_unchanged_since(change_id, table, first, last)
        for first, last in op["inserted"]:
            self._raise_floor(table, last)
            self.conn.execute(f"DELETE FROM {table} WHERE id BETWEEN ? AND ?", (first, last))
        self._require_change().ops.append(
            {"table": table, "removed": op["inserted"], "of": change_id})

    def _check_unchanged_since(self, change_id: int, table: str, first: int,
                               last: int) -> None:
        """Rows `first`..`last` of `table` are as change `change_id` left them: each row a
        later change touched must be back to the image that change found (later changes
        undone since, for instance)."""
        touched = self.conn.execute(
            "SELECT row_id, min(change_id) FROM change_rows WHERE tbl = ? AND row_id BETWEEN"
            " ? AND ? AND change_id > ? GROUP BY row_id", (table, first, last, change_id))
        found: dict[int, list[dict[str, Any]]] = {}
        for row_id, later in touched.fetchall():
            if later not in found:
                found[later] = decode_ops(self.change(later)["ops"])
            image = next(op["before"] for op in found[later]
                         if op.get("id") == row_id and op["table"] == table)
            if not same_image(self.row(table, row_id), image):
                raise self._changed_later(self.change(change_id), table, row_id, later)

    def _changed_later(self, entry: Row, table: str, row_id: int,
                       later: int | None = None) -> StoreError:
        """Undo out of order would throw a later change away: say which row, in words."""
        return StoreError(N_("“{summary}” cannot be undone: {row} was changed again later; "
                             "undo the later change first"), ErrorCode.CONFLICT,
                          change=entry["id"], summary=self.change_words(entry),
                          row=self.row_words(table, row_id), table=table, row_id=row_id,
                          later=later)

    def change_words(self, entry: Row) -> str:
        """A logged change as the person knows it, in their language: what it did to its
        first fact or name, not core's English summary or its number (see
        `core.store.describe.change_words`, which the store package installs)."""
        return CHANGE_WORDS[0](self, entry)

    def row_words(self, table: str, row_id: int) -> str:
        """A node or edge as a person knows it: its name, or "source —relation→ target"."""
        if table == "nodes":
            node = self.row("nodes", row_id)
            return f"“{node['name']}”" if node else "a node"
        found = self.query_one(
            "SELECT s.name AS source, e.relation, t.name AS target FROM edges e "
            "JOIN nodes s ON s.id = e.source_id JOIN nodes t ON t.id = e.target_id "
            "WHERE e.id = ?", (row_id,))
        return (f"“{found['source']} —{found['relation']}→ {found['target']}”" if found
                else "a fact")

    def _restore(self, table: str, row_id: int, image: Row | None) -> None:
        if table == "edges" and image is not None and image["status"] == "active":
            twin = self.query_one(
                "SELECT * FROM edges WHERE source_id = ? AND norm_relation = ? AND"
                " target_id = ? AND status = 'active' AND id != ?",
                (image["source_id"], image["norm_relation"], image["target_id"], row_id))
            if twin is not None:
                self._fold_into(twin, image)
                return
        if image is None:
            self.delete(table, row_id)
        elif self.row(table, row_id) is None:
            self.insert(table, image)
        else:
            self.update(table, row_id, {k: v for k, v in image.items()
                                        if k != "id" and k not in UNLOGGED_COLUMNS})

    def _fold_into(self, twin: Row, image: Row) -> None:
        """Undo would bring back a fact that has been stated again since: one active copy
        is allowed, so the restated one stays, and it takes over the older one's mentions
        and its first date (the older row keeps its own history, as it is)."""
        earliest = [t for t in (twin["created_at"], image["created_at"]) if t is not None]
        self.update("edges", twin["id"], {
            "mention_count": (twin["mention_count"] or 0) + (image["mention_count"] or 0),
            "created_at": min(earliest) if earliest else None})
        self._require_change().ops[-1]["merged"] = True  # its line: "kept, said again since"

    def integrity_problems(self) -> list[str]:
        """What `integrity_check` and `foreign_key_check` report; empty when the file is sound."""
        problems = [r[0] for r in self.conn.execute("PRAGMA integrity_check") if r[0] != "ok"]
        problems += [str(tuple(r)) for r in self.conn.execute("PRAGMA foreign_key_check")]
        return problems


