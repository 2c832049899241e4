"""Recall by meaning for one memory file: a background indexer and the search it serves.

A commit returns at once: the store tells this object which facts a change touched, and
a thread of its own embeds them, stores the vectors in SQLite (its own connection, one
short transaction per batch) and adds them to the in-memory index. On start it finds
every fact without a current vector, newest first, so an old memory or a large import is
caught up in the background while recall keeps working on words and on what is indexed.

Several programs can hold one memory at once (the window and MCP servers, `core.share`).
One of them, the keeper, holds a lock beside the file: it alone embeds facts, stores
their vectors and saves the index file. The others follow: they load the index, add the
vectors the keeper stores (`edge_vectors.seq` says which are new) and drop facts that
left, and whichever asks first after the keeper quits takes its place. Every program
finds the changes the others made in the change log (`core.store.outside`).
"""

from __future__ import annotations

import contextlib
import heapq
import json
import logging
import os
import queue
import sqlite3
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from core.events import Event
from core.meaning import engine as engines
from core.meaning.index import INDEX_SHAPE, VectorIndex
from core.meaning.turn_index import TurnIndex
from core.meaning.turns import newest_message
from core.meaning.vectors import (
    INDEXED_STATUSES,
    chunks,
    drop_orphans,
    fact_texts,
    facts_needing_vectors,
    indexed_ids,
    matrix_of,
    save_vectors,
    state_stamp,
    stored_vectors,
    vectors_of,
)
from core.paths import PRIVATE_FILE, make_private_file
from core.store.graph import sqlite_code
from core.store.outside import OutsideChanges

log = logging.getLogger(__name__)

BATCH = 32  # facts embedded per transaction: about 0.4 s of one core
REPORT_EVERY = 1.0  # seconds between progress events while indexing
# The index is saved when the indexer has caught up, at most this often (100,000 facts
# are an 85 MB file), and when it stops.
SAVE_EVERY = 300.0
BUSY_TIMEOUT = 10.0
RETRY_AFTER = 5.0  # seconds before a batch is stored again when the file was locked
NICENESS = 10  # the indexer yields the CPU to the turn and the window (Linux only)
# Building the index from stored vectors at start (no saved index, or a stale one) uses
# both cores of a small machine: recall waits for it, by words meanwhile.
BUILD_THREADS = 2
# How often an idle indexer looks for changes other programs made, and a follower for
# the vectors its keeper stored: the window shows another program's change within 1 s.
LOOK_EVERY = 0.5
Report = Callable[[str, dict[str, Any]], None]


def _quiet(_event: str, _data: dict[str, Any]) -> None:
    pass


class Meaning:
    """Owns the vector index of one memory file and the thread that keeps it current."""

    def __init__(self, db_path: Path, report: Report = _quiet,
                 writable: bool = True) -> None:
        self.db_path = Path(db_path)
        self.index_path = Path(f"{self.db_path}.vectors")
        self.report = report
        self.writable = writable
        self.model = engines.model_id() or ""
        self._index: VectorIndex | None = None  # None until loaded
        self._waiting: set[int] = set()
        self._inbox: queue.SimpleQueue[dict[str, Any] | None] = queue.SimpleQueue()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._dirty = False  # the index has vectors its saved file lacks
        self._reported = 0.0  # when progress was last reported
        self._scanned = False  # the facts needing vectors have been found
        self._saved_at = time.monotonic()
        self.failure: str | None = None
        self.embedded = 0  # facts embedded by this run
        # A question is embedded here while the caller searches by words (both release
        # the GIL): 13 ms of embedding overlaps the full-text search instead of adding.
        self._asker = ThreadPoolExecutor(1, thread_name_prefix="trulymem-meaning-query")
        # Changes told and changes looked at, for `wait_idle`.
        self._settled = threading.Condition()
        self._posted = 0
        self._done = 0
        self.keeper = False  # this program embeds and saves; the others follow it
        self._lock_file: int | None = None
        self._seq = 0  # the newest stored vector this index holds (for following)
        self._outside: OutsideChanges | None = None
        self.turns = TurnIndex(self.model)  # the messages' vectors, after the facts'

    # -- the backend thread's side -----------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="trulymem-meaning",
                                        daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Finish the batch under way, save the index, and end the thread."""
        self._stop.set()
        self._inbox.put(None)
        self._asker.shutdown(wait=True)
        if self._thread is not None:
            self._thread.join(timeout)
        if self._lock_file is not None:
            os.close(self._lock_file)  # another program may keep the index now
            self._lock_file = None

    def changed(self, touched: dict[str, Any]) -> None:
        """A committed change (`Change.touched()`): its facts and nodes are looked at again."""
        with self._settled:
            self._posted += 1
            self._inbox.put(touched)

    def wait_idle(self, timeout: float) -> bool:
        """Wait until every fact told so far is indexed (or the indexer stopped); False on
        timeout. For a command-line run, a benchmark or a test: recall never needs it."""
        newest = self._newest_message()

        def idle() -> bool:
            return bool(self.failure or self._stop.is_set() or (
                self._scanned and not self._waiting and self._done >= self._posted
                and (self.turns.index is None or not self.keeper or (
                    not self.turns.waiting and self.turns.mark >= newest))))

        with self._settled:
            return self._settled.wait_for(idle, timeout)

    def _newest_message(self) -> int:
        try:
            conn = sqlite3.connect(str(self.db_path), timeout=BUSY_TIMEOUT)
            try:
                return newest_message(conn)
            finally:
                conn.close()
        except sqlite3.Error:
            return 0

    def _notify(self, changes_done: int = 0) -> None:
        with self._settled:
            self._done += changes_done
            self._settled.notify_all()

    def similar_soon(self, text: str, count: int) -> Future[list[tuple[int, float]]]:
        """`similar`, computed on another thread: take `.result()` when it is needed."""
        return self._soon(self.similar, text, count)

    def _soon(self, search: Callable[[str, int], list[tuple[int, float]]], text: str,
              count: int) -> Future[list[tuple[int, float]]]:
        if self._stop.is_set():
            done: Future[list[tuple[int, float]]] = Future()
            done.set_result([])
            return done
        future = self._asker.submit(search, text, count)
        # Hand over the GIL so the embedding is under way (in C, without the GIL) before
        # the caller's own Python work: otherwise the worker may wait a whole switch
        # interval (5 ms) and nothing overlaps (16.1 ms for both, against 13.6 ms).
        time.sleep(0)
        return future

    def similar(self, text: str, count: int) -> list[tuple[int, float]]:
        """Facts nearest to `text` in meaning, as (id, similarity); empty while the index
        is still loading or the engine is missing, so recall falls back to words."""
        return self._ask(text, lambda index, vector: index.nearest(vector, count))

    def similar_turns(self, text: str, count: int) -> list[tuple[int, float]]:
        """Messages nearest to `text` in meaning, as (message id, similarity): the turns
        that say what a question asks when no fact was kept of it."""
        return self._ask(text, lambda _index, vector: self.turns.nearest(vector, count))

    def similar_turns_soon(self, text: str, count: int) -> Future[list[tuple[int, float]]]:
        """`similar_turns`, computed on another thread (see `similar_soon`)."""
        return self._soon(self.similar_turns, text, count)

    def similar_turns_among(self, text: str, ids: list[int]) -> list[tuple[int, float]]:
        """`similar_turns`, among `ids` only (the turns said in the time a question names,
        however far down the whole conversation's ranking they fall)."""
        if not ids:
            return []
        return self._ask(text, lambda _index, vector: self.turns.among(vector, ids))

    def similar_among(self, text: str, ids: list[int]) -> list[tuple[int, float]]:
        """`similar`, among `ids` only (the person's own facts)."""
        if not ids:
            return []
        return self._ask(text, lambda index, vector: index.among(vector, ids))

    def _ask(self, text: str, search: Any) -> list[tuple[int, float]]:
        index = self._index
        if index is None or not text.strip():
            return []
        try:
            query_engine = engines.engine("query")
            if query_engine is None:
                return []
            return search(index, query_engine.query(text))
        except (RuntimeError, ValueError, OSError) as error:  # recall goes on by words
            log.warning("recall by meaning failed: %s", error)
            return []

    def status(self) -> dict[str, Any]:
        """What the status bar shows: `state` is loading, indexing or ready."""
        index = self._index
        indexed = len(index) if index is not None else 0
        state = ("loading" if index is None
                 else "indexing" if self._waiting or not self._scanned else "ready")
        if self.failure:
            state = "failed"
        return {"state": state, "indexed": indexed, "waiting": len(self._waiting),
                "problem": self.failure, "keeper": self.keeper, **self.turns.status()}

    # -- the indexer thread ------------------------------------------------------------

    def _run(self) -> None:
        if sys.platform == "linux":  # a thread's own priority: the chat comes first
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICENESS)
        conn = None
        try:
            conn = sqlite3.connect(str(self.db_path), timeout=BUSY_TIMEOUT,
                                   check_same_thread=False)
            # Vectors are derived: a batch lost to a power cut is embedded again, so the
            # indexer's commits skip the fsync the memory's own writes wait for.
            conn.execute("PRAGMA synchronous = NORMAL")
            self._outside = OutsideChanges(conn)
            self.keeper = self._claim()
            self._load(conn)
            if self._stop.is_set():
                return
            if self.keeper:
                self._waiting = set(facts_needing_vectors(conn, self.model))
            self.turns.load(conn, self.keeper)
            self._scanned = True
            self._notify()
            self.report(Event.MEANING, self.status())
            while not self._stop.is_set():
                if not self._waiting:
                    self._save()  # caught up: a good moment to keep the index
                self._take_changes(conn, block=not (self._waiting or self.turns.waiting))
                self._take_outside_changes()
                if not self.keeper:
                    self._follow(conn)
                self.turns.look(conn, self.keeper)
                if self._waiting and not self._stop.is_set():
                    self._index_batch(conn)
                elif self.turns.waiting and self.keeper and not self._stop.is_set():
                    self._index_turns(conn)
        except Exception as error:  # the memory, not the index, is what must go on
            self.failure = f"recall by meaning stopped: {error}"
            log.exception("the indexer stopped")
            self.report(Event.MEANING, self.status())
        finally:
            if conn is not None:
                self._save(now=True)
                conn.close()
            self._notify()

    def _claim(self) -> bool:
        """Become the keeper if no other program is (a lock held while this one runs)."""
        if not self.writable:
            return False
        try:
            import fcntl  # noqa: PLC0415  (POSIX; recall by meaning runs nowhere else)
        except ImportError:
            return True
        try:
            descriptor = os.open(f"{self.index_path}.lock", os.O_CREAT | os.O_RDWR,
                                 PRIVATE_FILE)
        except OSError as error:
            log.warning("the index lock cannot be made (%s): following another program",
                        error)
            return False
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(descriptor)
            return False
        self._lock_file = descriptor
        return True

    def _follow(self, conn: sqlite3.Connection) -> None:
        """Add the vectors the keeper stored since the last look; take its place if it
        has gone."""
        if self._claim():
            self.keeper = True
            self._waiting = set(facts_needing_vectors(conn, self.model))
            self.turns.take_over(conn)
            self.report(Event.MEANING, self.status())
            return
        rows = conn.execute(
            "SELECT v.edge_id, v.vector, v.seq FROM edge_vectors v JOIN edges e ON e.id ="
            f" v.edge_id WHERE v.model = ? AND v.seq > ? AND e.status IN {INDEXED_STATUSES}"
            " ORDER BY v.seq", (self.model, self._seq)).fetchall()
        if rows:
            self._index.put(np.fromiter((r[0] for r in rows), dtype=np.int64,
                                        count=len(rows)), matrix_of([r[1] for r in rows]))
            self._seq = rows[-1][2]

    def _take_outside_changes(self) -> None:
        """Changes other programs committed are looked at like this program's own."""
        try:
            changes = self._outside.poll() if self._outside is not None else []
        except sqlite3.Error as error:
            log.info("the indexer could not read the change log: %s", error)
            return
        for change in changes:
            with self._settled:
                self._posted += 1
                self._inbox.put(change.touched())

    def _load(self, conn: sqlite3.Connection) -> None:
        """The saved index when its stamp matches the stored vectors, else one built from
        them; either way reconciled with the facts recall can show now."""
        if self.keeper:
            drop_orphans(conn)
        stamp = list(state_stamp(conn, self.model))
        self._seq = stamp[1]
        saved = self._saved_stamp()
        index = VectorIndex.load(self.index_path) if saved == self._stamp(stamp) else None
        if index is None:
            index = VectorIndex()
            for ids, matrix in stored_vectors(conn, self.model):
                index.put(ids, matrix, threads=BUILD_THREADS)
                if self._stop.is_set():
                    return
            self._dirty = True
        self._index = index
        self._reconcile(conn)

    def _reconcile(self, conn: sqlite3.Connection) -> None:
        """Make the index hold exactly the shown facts with a current vector: a saved index
        can predate deletions (a restored backup, changes made while this was off), and a
        bulk change (an import undone) names no facts."""
        wanted = indexed_ids(conn, self.model)
        held = self._index.ids()
        extra = np.setdiff1d(held, wanted, assume_unique=True)
        missing = np.setdiff1d(wanted, held, assume_unique=True)
        if len(extra):
            self._index.drop(extra.tolist())
        if len(missing):
            ids, matrix = vectors_of(conn, self.model, missing.tolist())
            self._index.put(ids, matrix, threads=BUILD_THREADS)
        self._dirty = self._dirty or bool(len(extra) or len(missing))

    def _stamp(self, vectors: tuple[int, int] | list[int]) -> list:
        """What a saved index was made from: the model, the graph's shape, the vectors."""
        return [self.model, INDEX_SHAPE, *vectors]

    def _saved_stamp(self) -> list | None:
        try:
            return json.loads(Path(f"{self.index_path}.json").read_text("utf-8"))
        except (OSError, ValueError):
            return None

    def _save(self, now: bool = False) -> None:
        """Keep the index for the next start: loading 100,000 vectors into a new graph
        takes far longer than reading the graph back (bench/store_bench.py)."""
        if not self._dirty or self._index is None or not self.keeper or self.failure:
            return
        if not now and time.monotonic() - self._saved_at < SAVE_EVERY:
            return
        self._saved_at = time.monotonic()
        try:
            conn = sqlite3.connect(str(self.db_path), timeout=BUSY_TIMEOUT)
            try:
                stamp = self._stamp(state_stamp(conn, self.model))
            finally:
                conn.close()
            stamp_file = Path(f"{self.index_path}.json")
            stamp_file.unlink(missing_ok=True)  # no stamp while the index is rewritten
            partial = Path(f"{self.index_path}.partial")
            self._index.save(partial)
            make_private_file(partial)
            os.replace(partial, self.index_path)
            partial_stamp = Path(f"{stamp_file}.partial")
            partial_stamp.write_text(json.dumps(stamp), "utf-8")
            make_private_file(partial_stamp)
            os.replace(partial_stamp, stamp_file)
            self._dirty = False
        except (OSError, RuntimeError, sqlite3.Error) as error:
            log.warning("the vector index was not saved: %s", error)

    def _take_changes(self, conn: sqlite3.Connection, block: bool) -> None:
        """Look again at what the changes so far touched (waiting for one when idle)."""
        try:
            touched = self._inbox.get(timeout=LOOK_EVERY if block else 0)
        except queue.Empty:
            return
        edges: set[int] = set()
        nodes: set[int] = set()
        taken = 0
        while touched is not None:
            taken += 1
            if touched.get("bulk"):
                if self.keeper:
                    self._waiting = set(facts_needing_vectors(conn, self.model))
                self._reconcile(conn)
            edges.update(touched.get("edges", ()))
            nodes.update(touched.get("nodes", ()))  # a rename changes the facts around it
            try:
                touched = self._inbox.get_nowait()
            except queue.Empty:
                break
        if (edges or nodes) and self.keeper:
            self._waiting.update(facts_needing_vectors(conn, self.model, edges=edges,
                                                       nodes=nodes))
        if edges:
            self._sync_touched(conn, edges)
        self._notify(taken)

    def _sync_touched(self, conn: sqlite3.Connection, edges: set[int]) -> None:
        """Facts deleted or superseded leave the index; their vectors stay in the file, so
        an undo puts them back without embedding them again."""
        shown: dict[int, bytes | None] = {}
        for group in chunks(edges):
            shown.update(conn.execute(
                "SELECT e.id, v.vector FROM edges e LEFT JOIN edge_vectors v ON v.edge_id ="
                f" e.id AND v.model = ? WHERE e.id IN ({', '.join('?' * len(group))})"
                f" AND e.status IN {INDEXED_STATUSES}", [self.model, *group]).fetchall())
        gone = [e for e in edges if e not in shown]
        back = {e: v for e, v in shown.items() if v is not None and e not in self._waiting}
        if gone:
            self._index.drop(gone)
            self._waiting.difference_update(gone)
        if back:
            self._index.put(np.fromiter(back, dtype=np.int64, count=len(back)),
                            matrix_of(list(back.values())))
        self._dirty = self._dirty or bool(gone or back)

    def _index_batch(self, conn: sqlite3.Connection) -> None:
        """Embed, store and index the newest waiting facts; they stop waiting only once
        they are in the index, so the status never says ready too early."""
        batch = heapq.nlargest(BATCH, self._waiting)  # newest facts first
        texts = fact_texts(conn, batch)
        if texts:
            index_engine = engines.engine("index")
            if index_engine is None:
                self.failure = engines.problem()
                self._waiting.clear()
                return
            vectors = index_engine.passages(list(texts.values()))
            self.embedded += len(texts)
            if self.writable:
                try:
                    save_vectors(conn, self.model, texts, vectors)
                except sqlite3.OperationalError as error:
                    if sqlite_code(error) not in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                        raise
                    # another writer holds the file (a long import): the batch waits
                    log.info("the indexer waits for the database: %s", error)
                    self._stop.wait(RETRY_AFTER)
                    return
            self._index.put(np.fromiter(texts, dtype=np.int64, count=len(texts)), vectors)
            self._dirty = True
        self._waiting.difference_update(batch)
        self._notify()
        now = time.monotonic()
        if not self._waiting or now - self._reported >= REPORT_EVERY:
            self._reported = now
            self.report(Event.MEANING, self.status())

    def _index_turns(self, conn: sqlite3.Connection) -> None:
        """Embed a batch of messages, once every fact has its vector."""
        index_engine = engines.engine("index")
        if index_engine is None:
            self.turns.waiting.clear()
            return
        if not self.turns.embed_batch(conn, index_engine, self.writable):
            self._stop.wait(RETRY_AFTER)
            return
        self._notify()
        now = time.monotonic()
        if not self.turns.waiting or now - self._reported >= REPORT_EVERY:
            self._reported = now
            self.report(Event.MEANING, self.status())
