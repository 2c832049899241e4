"""Model downloads that run beside the chat: each on its own thread, so a gigabyte on a
slow line never holds up a turn, told as `model_download` events on the backend's own
channel (which is thread-safe: the meaning indexer tells its progress the same way)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from core.events import Event
from core.models import download
from core.models.catalogue import Model, models_folder

Sink = Callable[[str, dict[str, Any]], None]
TELL_EVERY = 0.25  # seconds between progress events: often enough for a moving bar


class Fetcher:
    """The downloads running now, one per model; `sink()` answers where events go."""

    def __init__(self, sink: Callable[[], Sink]) -> None:
        self._sink = sink
        self._running: dict[str, _Fetch] = {}
        self._lock = threading.Lock()

    def start(self, model: Model) -> dict[str, Any]:
        """Begin fetching `model` (nothing if it is being fetched already): answers what
        is there now."""
        with self._lock:
            fetch = self._running.get(model.id)
            if fetch is None:
                fetch = self._running[model.id] = _Fetch(model, self._tell, self._ended)
                fetch.thread.start()
            return {"model": model.id, "have": fetch.have, "total": model.size}

    def cancel(self, model_id: str | None = None) -> bool:
        """Stop one download (or all): its part stays for the next attempt. Answers
        whether any was running."""
        with self._lock:
            stopping = [f for k, f in self._running.items() if model_id in (None, k)]
        for fetch in stopping:
            fetch.cancelled.set()
        return bool(stopping)

    def running(self) -> dict[str, dict[str, Any]]:
        """What each running download has: {"have", "total"}."""
        with self._lock:
            return {k: {"have": f.have, "total": f.model.size} for k, f in self._running.items()}

    def wait(self, timeout: float) -> None:
        """Until every download ended (after `cancel`, at most one chunk away), or timeout."""
        with self._lock:
            threads = [f.thread for f in self._running.values()]
        deadline = time.monotonic() + timeout
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def _tell(self, data: dict[str, Any]) -> None:
        self._sink()(Event.MODEL_DOWNLOAD, data)

    def _ended(self, model_id: str) -> None:
        with self._lock:
            self._running.pop(model_id, None)


class _Fetch:
    """One download on its own thread (daemon: a quitting app does not wait for it; the
    part on disk is what the next attempt goes on from)."""

    def __init__(self, model: Model, tell: Callable[[dict[str, Any]], None],
                 ended: Callable[[str], None]) -> None:
        self.model, self._tell, self._ended = model, tell, ended
        self.have = download.state(model, models_folder())["bytes"]
        self.cancelled = threading.Event()
        self.thread = threading.Thread(target=self._run, name=f"fetch {model.id}",
                                       daemon=True)
        self._started = time.monotonic()
        self._first = self.have
        self._told = 0.0

    def _run(self) -> None:
        try:
            done = download.download(self.model, models_folder(), self._progress,
                                     self.cancelled.is_set)
        except Exception as error:
            done = {"success": False, "error": str(error) or type(error).__name__}
        self._ended(self.model.id)
        phase = "done" if done["success"] else \
            "cancelled" if done.get("code") == "cancelled" else "failed"
        have = download.state(self.model, models_folder())["bytes"]
        self._tell({"model": self.model.id, "phase": phase, "have": have,
                    "total": self.model.size, **({} if done["success"] else
                                                 {"error": done["error"]})})

    def _progress(self, have: int, total: int) -> None:
        self.have = have
        now = time.monotonic()
        if now - self._told < TELL_EVERY:
            return
        self._told = now
        speed = (have - self._first) / max(now - self._started, 1e-3)
        left = (total - have) / speed if speed > 0 else None
        self._tell({"model": self.model.id, "phase": "fetching", "have": have,
                    "total": total, "seconds_left": None if left is None else round(left)})
