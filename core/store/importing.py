"""Import a memory export of any size in bounded memory, with progress and cancel.

The file is read once (`json_members`), each row checked as it arrives and put in a
staging database beside the memory file; nothing in the memory changes until the whole
file has passed every check, which then run as SQL on the staging tables (duplicate ids
and names, references, repeated facts). The rows go in with a few INSERT … SELECT
statements in one logged change, which records the new rows as id ranges, so undo takes
the whole import back in one step. Into an empty memory the file's ids are kept, which
makes export → import → export give the same bytes; into a memory with memories, nodes
match by their normalised name and a fact already known is reinforced.

Memory use stays at one read buffer, one batch of rows and SQLite's page caches; the
staging file is private to the owner and removed afterwards, whatever happens.
"""

from __future__ import annotations

import io
import os
import sqlite3
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, BinaryIO

from core.errors import ErrorCode
from core.i18n import N_, tr
from core.paths import PRIVATE_FILE
from core.store import exchange_format, one_copy
from core.store.exchange_format import (
    EDGE_COLUMNS,
    FORMAT,
    MAX_ROWS,
    NODE_COLUMNS,
    VERSION,
    ExchangeError,
    ImportCancelled,
    row_problem,
)
from core.store.graph import GraphStore, sqlite_code
from core.store.json_members import NotAnObject, NotJSON, members
from core.store.text import normalize_name

Report = Callable[[str, float], None]  # phase, fraction of the whole import done
BATCH = 5000
READ_SHARE = 0.6  # of the progress bar: reading and checking rows; the rest is writing
STAGED_NODE = (*NODE_COLUMNS, "norm_name")
STAGED_EDGE = (*EDGE_COLUMNS, "norm_relation")
STAGING_DDL = (
    f"CREATE TABLE staging.nodes (seq INTEGER PRIMARY KEY, {', '.join(STAGED_NODE)})",
    f"CREATE TABLE staging.edges (seq INTEGER PRIMARY KEY, {', '.join(STAGED_EDGE)})",
)


def _nothing(_phase: str, _done: float) -> None:
    pass


def _never() -> bool:
    return False


def import_json(store: GraphStore, path: str | Path, report: Report = _nothing,
                cancelled: Callable[[], bool] = _never,
                max_bytes: int | None = None) -> dict[str, Any]:
    """Import the export at `path` as one change; raises ExchangeError (ImportCancelled
    when `cancelled()` turned true) with the memory unchanged."""
    if store.read_only:
        raise ExchangeError(store.read_only)
    path = Path(path)
    limit = exchange_format.MAX_FILE_BYTES if max_bytes is None else max_bytes
    with _staging(store, cancelled) as conn:
        with _open_export(path, limit) as (stream, size):
            _Stager(conn, path.name, report, cancelled).stage(stream, size)
        report("checking", READ_SHARE)
        _check_references(conn, path.name)
        # The file's own ids are kept only in a memory that never had a row: they could
        # otherwise name rows the change history still speaks of.
        # A memory that syncs merges: the file's ids may lie in another device's range.
        empty = (not store.id_base() and store.next_id("nodes") == 1
                 and store.next_id("edges") == 1)
        with store.write("user_import", {"file": path.name}, actor="user") as change:
            result = _load_exact(store, report) if empty else _merge(store, report)
            change.summary = result.pop("logged")  # the change log keeps the English
        report("done", 1.0)
    with suppress(sqlite3.Error):
        conn.execute("PRAGMA main.wal_checkpoint(TRUNCATE)")  # give the disk back
    return {**result, "change_id": change.id}


# -- the file ----------------------------------------------------------------------------

class _CountingReader(io.RawIOBase):
    """Counts the bytes read and refuses past `limit`: the cap holds for a file that grows
    or lies about its size while it is read."""

    def __init__(self, raw: BinaryIO, limit: int, name: str) -> None:
        self.raw, self.limit, self.name, self.count = raw, limit, name, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            n = self.raw.readinto(buffer)
        except OSError as error:  # a file regular by stat that cannot be read (/proc/…/mem)
            raise ExchangeError(tr("cannot read {name}: {error}", name=self.name,
                                   error=error.strerror or type(error).__name__)) from None
        self.count += n or 0
        if self.count > self.limit:
            raise ExchangeError(tr("{name} is too large: the most TrulyMEM imports is "
                                   "{megabytes} MB", name=self.name,
                                   megabytes=f"{self.limit / 1e6:,.0f}"))
        return n


@contextmanager
def _open_export(path: Path, limit: int) -> Iterator[tuple[io.TextIOBase, int]]:
    """The file as text, and its size; a device (/dev/zero behind a link), a pipe or a
    folder is refused before reading, and opening without blocking keeps a FIFO with no
    writer from hanging the backend."""
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise ExchangeError(N_("there is no file {name} in {folder}"), ErrorCode.NOT_FOUND,
                            name=path.name, folder=str(path.parent)) from None
    except OSError as error:
        raise ExchangeError(tr("cannot read {name}: {error}", name=path.name,
                               error=error.strerror)) from None
    # Checked on the descriptor before it is wrapped: fdopen raises for a folder, and the
    # descriptor then leaked (one per try: a 64-descriptor limit failed after 57).
    info = os.fstat(descriptor)
    if not stat.S_ISREG(info.st_mode):
        os.close(descriptor)
        raise ExchangeError(tr("{name} is not a regular file (it is a device, a pipe or "
                               "a folder); choose an export file", name=path.name))
    with os.fdopen(descriptor, "rb", buffering=0) as raw:
        counting = _CountingReader(raw, limit, path.name)
        text = io.TextIOWrapper(io.BufferedReader(counting, 1 << 20), encoding="utf-8")
        text.counting = counting  # type: ignore[attr-defined]
        yield text, max(info.st_size, 1)


# -- staging -----------------------------------------------------------------------------

@contextmanager
def _staging(store: GraphStore, cancelled: Callable[[], bool]) -> Iterator[sqlite3.Connection]:
    """The store's connection with a private, empty staging database attached, and a
    progress handler that aborts any statement once the import is cancelled."""
    conn = store.conn
    path = Path(f"{store.path}.import-staging")
    path.unlink(missing_ok=True)
    os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, PRIVATE_FILE))
    conn.execute("ATTACH DATABASE ? AS staging", (str(path),))
    conn.set_progress_handler(lambda: 1 if cancelled() else 0, 100_000)
    try:
        conn.execute("PRAGMA staging.journal_mode = OFF")
        conn.execute("PRAGMA staging.synchronous = OFF")
        conn.execute("PRAGMA staging.cache_size = -32768")  # 32 MB, enough to index fast
        for statement in STAGING_DDL:
            conn.execute(statement)
        yield conn
    except sqlite3.OperationalError as error:
        if cancelled() and sqlite_code(error) == sqlite3.SQLITE_INTERRUPT:
            raise ImportCancelled(tr("the import was cancelled; nothing was changed")) \
                from None
        raise
    finally:
        conn.set_progress_handler(None, 0)
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.execute("DETACH DATABASE staging")
        path.unlink(missing_ok=True)


TOP_LEVEL = ("format", "version", "nodes", "edges")
# What an import did: the change log keeps the English, the person reads it translated.
INTO_EMPTY = N_("imported {nodes} nodes and {edges} edges into an empty memory")
MERGED = N_("merged an export: {added} nodes added, {matched} matched by name; "
            "{edges_added} edges added, {merged} known facts reinforced, {known} already there")


class _Stager:
    """Reads the file once, checking each row and putting it in the staging tables."""

    def __init__(self, conn: sqlite3.Connection, name: str, report: Report,
                 cancelled: Callable[[], bool]) -> None:
        self.conn, self.name, self.report, self.cancelled = conn, name, report, cancelled
        self.counts = {"nodes": 0, "edges": 0}
        self.batches: dict[str, list[tuple]] = {"nodes": [], "edges": []}
        self.seen: dict[str, Any] = {}

    def stage(self, stream: io.TextIOBase, size: int) -> None:
        counting = stream.counting  # type: ignore[attr-defined]
        self.conn.execute("BEGIN")
        try:
            for event, key, value in members(stream):
                if event == "item":
                    self._row(key, value)
                    if len(self.batches[key]) >= BATCH:
                        self._flush(key)
                        self.report("reading", READ_SHARE * min(counting.count / size, 1.0))
                else:
                    self._member(event, key, value)
            self._flush("nodes")
            self._flush("edges")
            missing = [k for k in TOP_LEVEL if k not in self.seen]
            if missing:
                self._refuse(tr("the top level"),
                             tr("missing {names}", names=", ".join(missing)))
            self.conn.execute("COMMIT")
        except NotAnObject as error:
            raise ExchangeError(tr("{name} is not a TrulyMEM memory export: {error}",
                                   name=self.name, error=error)) from None
        except NotJSON as error:
            raise ExchangeError(tr("{name} is not valid JSON ({error})", name=self.name,
                                   error=error)) from None
        except UnicodeDecodeError:
            raise ExchangeError(tr("{name} is not UTF-8 text", name=self.name)) from None

    def _refuse(self, where: str, problem: str) -> None:
        raise ExchangeError(tr("{name} is not a TrulyMEM memory export: at {where}: "
                               "{problem}", name=self.name, where=where, problem=problem))

    def _row(self, table: str, row: Any) -> None:
        n = self.counts[table]
        problem = row_problem(table, row)
        if problem:
            field, reason = problem
            self._refuse(f"{table}/{n}" + (f"/{field}" if field else ""), reason)
        if n >= MAX_ROWS[table]:
            self._refuse(table, tr("more than {n} rows", n=f"{MAX_ROWS[table]:,}"))
        self.counts[table] = n + 1
        self.batches[table].append(_node_row(row) if table == "nodes" else _edge_row(row))

    def _member(self, event: str, key: str, value: Any) -> None:
        """A top-level member: the format and version, or the start of a row list."""
        if key in self.seen:
            self._refuse(key, tr("appears twice"))
        self.seen[key] = value
        if key not in TOP_LEVEL:
            self._refuse(tr("the top level"), tr("unknown field {name}", name=repr(key[:40])))
        is_list = key in ("nodes", "edges")
        if (event == "array") != is_list:
            self._refuse(key, tr("must be a list") if is_list else tr("must not be a list"))
        if key == "format" and value != FORMAT:
            self._refuse("format", tr("must be {value}", value=repr(FORMAT)))
        if key == "version" and value != VERSION:
            self._refuse("version", tr("must be {version} (this file says {value}; it may "
                                       "come from a newer TrulyMEM)", version=VERSION,
                                       value=repr(value)))

    def _flush(self, table: str) -> None:
        rows = self.batches[table]
        if rows:
            columns = STAGED_NODE if table == "nodes" else STAGED_EDGE
            self.conn.executemany(f"INSERT INTO staging.{table} ({', '.join(columns)})"
                                  f" VALUES ({', '.join('?' * len(columns))})", rows)
            rows.clear()
        if self.cancelled():
            raise ImportCancelled(tr("the import was cancelled; nothing was changed"))


def _node_row(node: dict[str, Any]) -> tuple:
    values = [node.get(c) for c in NODE_COLUMNS]
    values[NODE_COLUMNS.index("mention_count")] = node.get("mention_count", 1)
    return (*values, normalize_name(node["name"]))


_EDGE_DEFAULTS = {"confidence": 1.0, "category": "general", "mention_count": 1}


def _edge_row(edge: dict[str, Any]) -> tuple:
    values = [edge.get(c, _EDGE_DEFAULTS.get(c)) for c in EDGE_COLUMNS]
    return (*values, normalize_name(edge["relation"]))


def _check_references(conn: sqlite3.Connection, name: str) -> None:
    """The file's own consistency, as SQL on the staging tables (each an index or a join,
    never a Python set of millions of ids)."""
    def first(sql: str) -> tuple | None:
        return conn.execute(sql).fetchone()

    def unique_index(table: str, columns: str, duplicate_sql: str,
                     message: Callable[[Any], str]) -> None:
        try:
            conn.execute(f"CREATE UNIQUE INDEX staging.{table}_{columns.replace(', ', '_')}"
                         f" ON {table} ({columns})")
        except sqlite3.IntegrityError:
            found = first(duplicate_sql)
            raise ExchangeError(f"{name}: " + message(found[0])) from None

    unique_index("nodes", "id", "SELECT id FROM staging.nodes GROUP BY id HAVING count(*)"
                 " > 1 LIMIT 1", lambda found: tr("node id {id} appears twice", id=found))
    unique_index("nodes", "norm_name", "SELECT min(name) FROM staging.nodes GROUP BY"
                 " norm_name HAVING count(*) > 1 LIMIT 1",
                 lambda found: tr("two nodes have the same name {name}", name=repr(found)))
    unique_index("edges", "id", "SELECT id FROM staging.edges GROUP BY id HAVING count(*)"
                 " > 1 LIMIT 1", lambda found: tr("edge id {id} appears twice", id=found))
    for end in ("source_id", "target_id"):
        found = first(f"SELECT e.id, e.{end} FROM staging.edges e WHERE NOT EXISTS (SELECT 1"
                      f" FROM staging.nodes n WHERE n.id = e.{end}) LIMIT 1")
        if found:
            raise ExchangeError(f"{name}: " + tr("edge {edge} points at node {node}, which "
                                                 "the file does not have", edge=found[0],
                                                 node=found[1]))
    found = first("SELECT e.id FROM staging.edges e WHERE e.superseded_by IS NOT NULL AND NOT"
                  " EXISTS (SELECT 1 FROM staging.edges s WHERE s.id = e.superseded_by)"
                  " LIMIT 1")
    if found:
        raise ExchangeError(f"{name}: " + tr("edge {edge} is superseded by an edge the file "
                                             "does not have", edge=found[0]))
    found = first("SELECT max(id) FROM staging.edges WHERE status = 'active' GROUP BY"
                  " source_id, norm_relation, target_id HAVING count(*) > 1 LIMIT 1")
    if found:
        raise ExchangeError(f"{name}: " + tr("edge {edge} repeats an active fact",
                                             edge=found[0]))


# -- writing -----------------------------------------------------------------------------

def _id_ranges(conn: sqlite3.Connection, sql: str) -> list[list[int]]:
    """Runs of consecutive ids in the result of `sql` (one `id` column), as [first, last]."""
    return [list(r) for r in conn.execute(
        f"SELECT min(id), max(id) FROM (SELECT id, id - row_number() OVER (ORDER BY id) AS"
        f" run FROM ({sql})) GROUP BY run ORDER BY 1")]


def _load_exact(store: GraphStore, report: Report) -> dict[str, Any]:
    """Into an empty memory: every row as it was, ids included."""
    conn = store.conn
    nodes = conn.execute(f"INSERT INTO main.nodes ({', '.join(STAGED_NODE)}) SELECT"
                         f" {', '.join(STAGED_NODE)} FROM staging.nodes ORDER BY id").rowcount
    store.record_inserted("nodes", _id_ranges(conn, "SELECT id FROM staging.nodes"))
    report("writing", READ_SHARE + (1 - READ_SHARE) * 0.4)
    edges = conn.execute(f"INSERT INTO main.edges ({', '.join(STAGED_EDGE)}) SELECT"
                         f" {', '.join(STAGED_EDGE)} FROM staging.edges ORDER BY id").rowcount
    store.record_inserted("edges", _id_ranges(conn, "SELECT id FROM staging.edges"))
    report("writing", READ_SHARE + (1 - READ_SHARE) * 0.8)
    counts = {"nodes": f"{nodes:,}", "edges": f"{edges:,}"}
    return {"nodes_added": nodes, "nodes_matched": 0, "edges_added": edges,
            "edges_merged": 0,
            "summary": tr(INTO_EMPTY, **counts), "logged": INTO_EMPTY.format(**counts)}


def _merge(store: GraphStore, report: Report) -> dict[str, Any]:
    """Into a memory with memories: nodes match by normalised name, a known active fact is
    reinforced, everything else is added with new ids after the highest in use."""
    conn = store.conn
    conn.execute("CREATE TABLE staging.node_map (old INTEGER PRIMARY KEY, new INTEGER,"
                 " matched INTEGER)")
    conn.execute("INSERT INTO staging.node_map SELECT s.id, n.id, 1 FROM staging.nodes s"
                 " JOIN main.nodes n ON n.norm_name = s.norm_name")
    matched = conn.execute("SELECT count(*) FROM staging.node_map").fetchone()[0]
    # A node created at the same moment is the same node (the file is an export of this
    # memory, or of a copy): it is there already, and its mentions are not counted twice.
    for new, mentions, updated in _rows(conn, "SELECT m.new, s.mention_count, s.updated_at"
                                        " FROM staging.node_map m JOIN staging.nodes s ON"
                                        " s.id = m.old JOIN main.nodes n ON n.id = m.new"
                                        " WHERE s.created_at != n.created_at ORDER BY m.new"):
        existing = store.row("nodes", new)
        store.update("nodes", new, {"mention_count": existing["mention_count"] + mentions,
                                    "updated_at": max(existing["updated_at"], updated)})
    base = store.next_id("nodes") - 1  # above every id the memory ever used
    conn.execute("INSERT INTO staging.node_map SELECT id, ? + row_number() OVER (ORDER BY"
                 " id), 0 FROM staging.nodes WHERE id NOT IN (SELECT old FROM"
                 " staging.node_map)", (base,))
    columns = [c for c in STAGED_NODE if c != "id"]
    added = conn.execute(f"INSERT INTO main.nodes (id, {', '.join(columns)}) SELECT m.new,"
                         f" {', '.join('s.' + c for c in columns)} FROM staging.nodes s JOIN"
                         " staging.node_map m ON m.old = s.id WHERE m.matched = 0 ORDER BY"
                         " m.new").rowcount
    if added:
        store.record_inserted("nodes", [[base + 1, base + added]])
    report("writing", READ_SHARE + (1 - READ_SHARE) * 0.4)

    conn.execute("CREATE TABLE staging.edge_map (old INTEGER PRIMARY KEY, new INTEGER,"
                 " twin INTEGER)")
    # The same fact (same ends, relation and moment it was first stored) is already
    # there: nothing changes (twin 2). Another record of a known active fact reinforces
    # it (twin 1).
    conn.execute("INSERT OR IGNORE INTO staging.edge_map SELECT s.id, e.id, 2 FROM"
                 " staging.edges s JOIN staging.node_map a ON a.old = s.source_id JOIN"
                 " staging.node_map b ON b.old = s.target_id JOIN main.edges e ON"
                 " e.source_id = a.new AND e.norm_relation = s.norm_relation AND"
                 " e.target_id = b.new AND e.created_at = s.created_at")
    conn.execute("INSERT OR IGNORE INTO staging.edge_map SELECT s.id, e.id, 1 FROM"
                 " staging.edges s JOIN staging.node_map a ON a.old = s.source_id JOIN"
                 " staging.node_map b ON b.old = s.target_id JOIN main.edges e ON"
                 " e.source_id = a.new AND e.norm_relation = s.norm_relation AND"
                 " e.target_id = b.new AND e.status = 'active' WHERE s.status = 'active'")
    known = conn.execute("SELECT count(*) FROM staging.edge_map WHERE twin = 2").fetchone()[0]
    merged = 0
    for new, mentions, confidence in _rows(conn, "SELECT m.new, s.mention_count,"
                                           " s.confidence FROM staging.edge_map m JOIN"
                                           " staging.edges s ON s.id = m.old WHERE m.twin = 1"
                                           " ORDER BY m.new"):
        twin = store.row("edges", new)
        store.update("edges", new, one_copy.folded(
            twin, {"mention_count": mentions, "confidence": confidence}))
        merged += 1
    base = store.next_id("edges") - 1
    conn.execute("INSERT INTO staging.edge_map SELECT id, ? + row_number() OVER (ORDER BY"
                 " id), 0 FROM staging.edges WHERE id NOT IN (SELECT old FROM"
                 " staging.edge_map)", (base,))
    plain = [c for c in STAGED_EDGE if c not in ("id", "source_id", "target_id",
                                                  "superseded_by")]
    # A fact the file marks as replaced keeps its link to what replaced it.
    successor = ("CASE WHEN s.status != 'active' THEN nullif((SELECT x.new FROM"
                 " staging.edge_map x WHERE x.old = s.superseded_by), m.new) END")
    edges_added = conn.execute(
        f"INSERT INTO main.edges (id, source_id, target_id, superseded_by, {', '.join(plain)})"
        f" SELECT m.new, a.new, b.new, {successor}, {', '.join('s.' + c for c in plain)}"
        " FROM staging.edges s JOIN staging.edge_map m ON m.old = s.id AND m.twin = 0"
        " JOIN staging.node_map a ON a.old = s.source_id JOIN staging.node_map b ON"
        " b.old = s.target_id ORDER BY m.new").rowcount
    if edges_added:
        store.record_inserted("edges", [[base + 1, base + edges_added]])
    report("writing", READ_SHARE + (1 - READ_SHARE) * 0.8)
    counts = {"added": f"{added:,}", "matched": f"{matched:,}",
              "edges_added": f"{edges_added:,}", "merged": f"{merged:,}", "known": f"{known:,}"}
    return {"nodes_added": added, "nodes_matched": matched, "edges_added": edges_added,
            "edges_merged": merged, "edges_known": known, "summary": tr(MERGED, **counts),
            "logged": MERGED.format(**counts)}


def _rows(conn: sqlite3.Connection, sql: str) -> Iterator[tuple]:
    """Rows of `sql` fetched a batch at a time, so millions never sit in a list."""
    cursor = conn.execute(sql)
    while batch := cursor.fetchmany(BATCH):
        yield from batch
