"""When sync runs inside the app: soon after the memory opens, after each packet that
changed the memory (a turn, a correction, an import), every few minutes, and on quit.
The hosts call it between packets, so a sync never holds up an answer; failures are kept
for the status and told as an event, never raised."""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.errors import CodedError
from core.events import Event
from core.store import GraphStore
from core.sync.service import DeviceSync, me

log = logging.getLogger(__name__)

SYNC_SCHEMA = 17
APPLY_EVERY = 120.0  # seconds between looks for other devices' files

Tell = Callable[[str, dict[str, Any]], None]


class SyncSchedule:
    def __init__(self, home: Path, clock: Callable[[], float] = time.monotonic,
                 automatic: bool = True) -> None:
        """`automatic`: sync by itself (the window); a command (`trulymem sync --status`,
        an import) syncs only when asked."""
        self.home, self.clock, self.automatic = Path(home), clock, automatic
        self.error: str | None = None
        self.last: dict[str, Any] = {}
        self._due = 0.0  # when to look for other devices' files next (0: at once)
        # Told whenever other devices' changes were applied, however the sync began: the
        # one place that has the window told of them (the backend's announcer).
        self.arrived: Callable[[], None] = lambda: None

    def opened(self) -> None:
        self._due = 0.0

    @staticmethod
    def joined(store: GraphStore | None) -> bool:
        try:
            return store is not None and not store.read_only and \
                store.schema_version() >= SYNC_SCHEMA and me(store) is not None
        except sqlite3.Error:
            return False

    def after_packet(self, store: GraphStore | None, tell: Tell) -> bool:
        """Write this device's changes, if there are any; answers whether it ran."""
        if not self.automatic or not self.joined(store) or not store.query_one(
                "SELECT 1 AS yes FROM sync_outbox LIMIT 1"):
            return False
        self._run(store, "write", tell)
        return True

    def maybe_apply(self, store: GraphStore | None, tell: Tell) -> dict[str, Any] | None:
        """Sync now when the last look is old enough (soon after the start, then every
        `APPLY_EVERY` seconds)."""
        if not self.automatic or self.clock() < self._due:
            return None
        if not self.joined(store):
            self._due = self.clock() + APPLY_EVERY
            return None
        return self._run(store, "sync_now", tell)

    def sync_now(self, store: GraphStore, tell: Tell) -> dict[str, Any]:
        """Sync now, asked for by the person (the answer is the packet's)."""
        return self._run(store, "sync_now", tell, raising=True)

    def join(self, store: GraphStore, folder: Path, code: str, name: str | None
             ) -> dict[str, Any]:
        """Join the set in `folder`: the other devices' memory arrives with it."""
        result = DeviceSync(store, self.home).join(folder, code, name)
        self.arrived()
        return result

    def at_exit(self, store: GraphStore | None) -> None:
        if self.automatic and self.joined(store):
            self._run(store, "write", lambda _event, _data: None)

    def _run(self, store: GraphStore, what: str, tell: Tell,
             raising: bool = False) -> dict[str, Any]:
        self._due = self.clock() + APPLY_EVERY
        sync = DeviceSync(store, self.home)
        try:
            result = getattr(sync, what)()
            self.error = None
        except (CodedError, OSError, sqlite3.Error) as error:
            self.error = error.said() if isinstance(error, CodedError) else str(error)
            result = {"error": self.error}
            if raising:  # the one who asked says it
                tell(Event.SYNC, self.state(store))
                raise
            log.warning("sync failed: %s", error)
        self.last = result
        if result.get("applied_rows"):
            self.arrived()
        tell(Event.SYNC, self.state(store))
        return result

    def state(self, store: GraphStore | None) -> dict[str, Any]:
        """What the status bar shows: the set, the last sync and what it did."""
        if not self.joined(store):
            return {"joined": False}
        status = DeviceSync(store, self.home).status()
        return {**status, "error": self.error,
                "arrived": self.last.get("applied_rows", 0),
                "refused_now": len(self.last.get("refused") or [])}
