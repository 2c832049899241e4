"""How fast the model reads a prompt, and so how much earlier conversation a question is
shown.

The evidence recall puts before a question is what the person waits for: a local model
reads every word of it before the first word of the answer. A 1.5B model on 2 cores read
50 to 60 prompt tokens a second on one machine and about 80 on another, so the same 520
tokens of evidence were a 12 s answer on the first and an 8 s one on the second. The
budget is what this model, as measured on this machine, reads in READING_SECONDS, within
[FLOOR, the recall's own budget]: a cloud model reads thousands a second and gets the
whole budget, a slow machine fewer turns and an answer in time.

The pace comes from the server's own count where it gives one (llama.cpp's `timings`:
the prompt tokens it read and in how long), else from the wait for the first chunk and
the prompt tokens the reply's usage counts as new (less those a cache held).

The readings are kept per model and endpoint in the data folder (`PACE_FILE`): without
them the first question of every start got the whole budget, a 12 s answer on a machine
that reads 50 tokens a second. The folder is this machine's, as the pace is; it is a hint,
so a file that cannot be read or written only means starting without one.
"""

from __future__ import annotations

import contextlib
import json
import math
import statistics
import threading
from collections import deque
from pathlib import Path
from typing import Any

from core.store.exchange import write_text_atomically

READING_SECONDS = 6.0  # of a 10 s answer: the question, its instructions and the answer
FLOOR = 240  # a few turns, however slow the machine
LEAST_READ = 64  # tokens: a reading shorter than this says more of latency than of pace
KEPT = 5  # the latest readings; their median is the pace
PACE_FILE = "reading_pace.json"  # {"model @ endpoint": [tokens a second, ...]}
ENDPOINTS_KEPT = 20  # the models and endpoints whose readings the file keeps, latest last


class ReadingPace:
    """The latest readings of one endpoint and model, in tokens a second. `kept_at`: the
    file the readings are kept in under `key` (the model and endpoint), read at once."""

    def __init__(self, kept_at: Path | None = None, key: str = "") -> None:
        self._kept_at, self._key = kept_at, key
        self._rates: deque[float] = deque(_read(kept_at).get(key, []), maxlen=KEPT)
        self._lock = threading.Lock()

    def heard(self, usage: dict[str, Any] | None, timings: dict[str, Any] | None,
              waited: float | None) -> None:
        """One reply's reading. `usage`: the reply's usage as the API sent it;
        `timings`: llama.cpp's, when it sent them; `waited`: seconds from the request to
        the first chunk."""
        rate = _from_timings(timings) or _from_wait(usage, waited)
        if rate is not None:
            with self._lock:
                self._rates.append(rate)
                rates = list(self._rates)
            _keep(self._kept_at, self._key, rates)

    def tokens_per_second(self) -> float | None:
        with self._lock:
            return statistics.median(self._rates) if self._rates else None

    def budget(self, ceiling: int) -> int:
        """The evidence budget, in estimated tokens: `ceiling` until a reading says
        the model is slower than that."""
        rate = self.tokens_per_second()
        if rate is None:
            return ceiling
        return max(min(FLOOR, ceiling), min(ceiling, int(rate * READING_SECONDS)))


def pace_key(model: str, endpoint: str) -> str:
    """Whose readings they are: the same model at another endpoint reads at its pace."""
    return f"{model} @ {endpoint}"


def _read(path: Path | None) -> dict[str, list[float]]:
    """The kept readings: whatever of the file is well formed (a hint, never an error)."""
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    kept = {key: [r for r in map(_kept_rate, value) if r is not None][-KEPT:]
            for key, value in data.items() if isinstance(key, str) and isinstance(value, list)}
    return {key: rates for key, rates in kept.items() if rates}


def _kept_rate(value: Any) -> float | None:
    """A rate as the file keeps it: a positive, finite number of tokens a second."""
    try:
        rate = _number(value)
    except OverflowError:  # an integer too large for a float
        return None
    return rate if rate is not None and math.isfinite(rate) and rate > 0 else None


def _keep(path: Path | None, key: str, rates: list[float]) -> None:
    """The readings of `key` saved beside the others', written whole or not at all."""
    if path is None:
        return
    kept = _read(path)
    kept.pop(key, None)
    kept[key] = rates
    kept = dict(list(kept.items())[-ENDPOINTS_KEPT:])
    with contextlib.suppress(OSError):
        write_text_atomically(path, json.dumps(kept, indent=1) + "\n")


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else None


def _from_timings(timings: dict[str, Any] | None) -> float | None:
    if not isinstance(timings, dict):
        return None
    read, millis = _number(timings.get("prompt_n")), _number(timings.get("prompt_ms"))
    if read is None or millis is None or read < LEAST_READ or millis <= 0:
        return None
    return read / (millis / 1000)


def _from_wait(usage: dict[str, Any] | None, waited: float | None) -> float | None:
    if not isinstance(usage, dict) or waited is None or waited <= 0:
        return None
    prompt = _number(usage.get("prompt_tokens"))
    if prompt is None:
        return None
    details = usage.get("prompt_tokens_details")
    cached = _number(details.get("cached_tokens")) if isinstance(details, dict) else None
    cached = cached or _number(usage.get("prompt_cache_hit_tokens")) or 0.0  # DeepSeek's
    new = prompt - cached
    return new / waited if new >= LEAST_READ else None
