"""The vectors in memory: searched exactly while few, by usearch's HNSW graph beyond.

Brute force was measured first (bench/store_bench.py): a float32 matrix product over
100,000 vectors takes 16 ms on one core, 138 ms at 1,000,000, on top of the 13 ms the
query's own embedding takes. The HNSW graph answers in about 1 ms at either size. The
embedding model's vectors crowd into a narrow cone (every similarity is 0.75 to 0.9), which
the graph's defaults handle badly: with usearch's defaults, 77 % of the true 60 nearest were
found over 20,000 facts, and none at all for some queries; with 32 links per node and a
search breadth of 512, 97 % and never under 82 %, in about 1 ms.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
from usearch.index import Index

from core.meaning.engine import DIMENSIONS

CONNECTIVITY = 32
EXPANSION_ADD = 128
EXPANSION_SEARCH = 512
INDEX_SHAPE = f"hnsw-{CONNECTIVITY}-{EXPANSION_ADD}"  # a saved index of another is rebuilt
# Below this many vectors the search is exact: about 4 ms at the most, one core.
EXACT_BELOW = 20_000


class VectorIndex:
    """Fact id -> vector, searched by cosine similarity; safe to use from two threads."""

    def __init__(self) -> None:
        self._index = Index(ndim=DIMENSIONS, metric="cos", dtype="f16",
                            connectivity=CONNECTIVITY, expansion_add=EXPANSION_ADD,
                            expansion_search=EXPANSION_SEARCH)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._index)

    def put(self, ids: np.ndarray, vectors: np.ndarray, threads: int = 1) -> None:
        """Add vectors, replacing those the ids had. One thread, unless building the whole
        index at start (nothing searches it until it is done)."""
        if not len(ids):
            return
        with self._lock:
            known = ids[self._index.contains(ids)]
            if len(known):
                self._index.remove(known)
            self._index.add(ids, vectors, threads=threads)

    def ids(self) -> np.ndarray:
        with self._lock:
            return np.asarray(self._index.keys, dtype=np.int64)

    def drop(self, ids: list[int]) -> None:
        with self._lock:
            self._index.remove(np.asarray(ids, dtype=np.int64))

    def nearest(self, vector: np.ndarray, count: int) -> list[tuple[int, float]]:
        """(fact id, cosine similarity), most similar first."""
        with self._lock:
            if not len(self._index):
                return []
            matches = self._index.search(vector, count, threads=1,
                                         exact=len(self._index) < EXACT_BELOW)
        return [(int(k), 1.0 - float(d)) for k, d in zip(matches.keys, matches.distances,
                                                          strict=True)]

    def among(self, vector: np.ndarray, ids: list[int]) -> list[tuple[int, float]]:
        """(fact id, cosine similarity) of `ids` only, most similar first: exact, for a
        few hundred facts (the person's own) that the graph search could bury."""
        with self._lock:
            found = self._index.get(np.asarray(ids, dtype=np.int64))
        pairs = [(i, v) for i, v in zip(ids, found, strict=True) if v is not None]
        if not pairs:
            return []
        matrix = np.asarray([v for _, v in pairs], dtype=np.float32)
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-9)
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        similarity = matrix @ (query / max(float(np.linalg.norm(query)), 1e-9))
        order = np.argsort(-similarity)
        return [(int(pairs[k][0]), float(similarity[k])) for k in order]

    def save(self, path: Path) -> None:
        with self._lock:
            self._index.save(str(path))

    @classmethod
    def load(cls, path: Path) -> VectorIndex | None:
        """A saved index, or None when the file is missing or unreadable."""
        loaded = cls()
        try:
            loaded._index.load(str(path))
        except (OSError, RuntimeError, ValueError):
            return None
        return loaded
