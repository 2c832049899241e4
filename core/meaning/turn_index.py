"""The turns' side of the indexer: which messages wait for a vector, embedding them after
the facts, and the in-memory index recall searches (see `core.meaning.turns`).

It lives on the indexer's thread (`core.meaning.indexer.Meaning`) and uses its connection;
only `nearest` is called from other threads. The keeper embeds and stores; a follower
adds what the keeper stored. It is not saved to a file of its own: it is built from the
stored vectors at start (3,000 turns in well under a second).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from typing import Any

import numpy as np

from core.meaning import turns
from core.meaning.index import VectorIndex

log = logging.getLogger(__name__)

BATCH = 16  # messages embedded per transaction: longer than facts, about 0.4 s of one core
BUILD_THREADS = 2


class TurnIndex:
    """Message id -> vector, kept current with the messages of the file."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.index: VectorIndex | None = None  # None until loaded (or no table)
        self.waiting: set[int] = set()
        self.mark = 0  # the largest message id looked at
        self.seq = 0  # the newest stored vector this index holds
        self.embedded = 0
        self._lock = threading.Lock()

    def load(self, conn: sqlite3.Connection, keeper: bool) -> None:
        """The index from the stored vectors; as keeper, the messages still to embed."""
        if not turns.has_table(conn):
            return
        if keeper:
            turns.drop_orphans(conn)
        index = VectorIndex()
        for ids, matrix, seq in turns.stored(conn, self.model):
            index.put(ids, matrix, threads=BUILD_THREADS)
            self.seq = seq
        self.index = index
        if keeper:
            self.take_over(conn)

    def take_over(self, conn: sqlite3.Connection) -> None:
        """This program embeds now: every message without a current vector waits."""
        if self.index is None:
            return
        waiting, self.mark = turns.needing_vectors(conn, self.model, 0)
        self.waiting = set(waiting)

    def look(self, conn: sqlite3.Connection, keeper: bool) -> None:
        """New messages wait for a vector (keeper); a follower adds the keeper's."""
        if self.index is None:
            return
        if keeper:
            if turns.newest_message(conn) > self.mark:
                waiting, self.mark = turns.needing_vectors(conn, self.model, self.mark)
                self.waiting.update(waiting)
            return
        for ids, matrix, seq in turns.stored(conn, self.model, self.seq):
            self.index.put(ids, matrix)
            self.seq = seq

    def embed_batch(self, conn: sqlite3.Connection, engine: Any, writable: bool) -> bool:
        """Embed, store and index the newest waiting messages; False when the file was
        busy (the batch waits)."""
        batch = turns.newest_first(self.waiting, BATCH)
        texts = turns.texts_of(conn, batch)
        if texts and self.index is not None:
            vectors = engine.passages(list(texts.values()))
            if writable:
                try:
                    turns.save(conn, self.model, texts, vectors)
                except sqlite3.OperationalError as error:
                    log.info("the indexer waits for the database: %s", error)
                    return False
            self.index.put(np.fromiter(texts, dtype=np.int64, count=len(texts)), vectors)
            self.embedded += len(texts)
        self.waiting.difference_update(batch)
        return True

    def nearest(self, vector: np.ndarray, count: int) -> list[tuple[int, float]]:
        index = self.index
        return index.nearest(vector, count) if index is not None else []

    def among(self, vector: np.ndarray, ids: list[int]) -> list[tuple[int, float]]:
        index = self.index
        return index.among(vector, ids) if index is not None else []

    def status(self) -> dict[str, int]:
        index = self.index
        return {"turns_indexed": len(index) if index is not None else 0,
                "turns_waiting": len(self.waiting)}
