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
"""

from __future__ import annotations

import statistics
import threading
from collections import deque
from typing import Any

READING_SECONDS = 6.0  # of a 10 s answer: the question, its instructions and the answer
FLOOR = 240  # a few turns, however slow the machine
LEAST_READ = 64  # tokens: a reading shorter than this says more of latency than of pace
KEPT = 5  # the latest readings; their median is the pace


class ReadingPace:
    """The latest readings of one endpoint and model, in tokens a second."""

    def __init__(self) -> None:
        self._rates: deque[float] = deque(maxlen=KEPT)
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
