"""The work done between packets, in one place and one order.

After an answer went out: the memory writing the turn left (so the person waited for the
reply only), this device's changes written for the sync folder, then a backup when one is
due. When no packet waits: one piece of the memory built from imported conversations, so
a message is answered after one piece at most. The host calls `between_packets()` and
`step()` from the worker thread; nothing here runs on any other.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from core.backend.backup_schedule import BackupSchedule
from core.config import Config
from core.store import GraphStore
from core.sync.schedule import SyncSchedule

log = logging.getLogger(__name__)

Sink = Callable[[str, dict[str, Any]], None]
Job = Callable[[Sink], None]


class Work:
    def __init__(self, backups: BackupSchedule, sync: SyncSchedule) -> None:
        self.backups = backups
        self.sync = sync
        self._after_answer: Job | None = None
        # `core.history_import.building.Builder` while a build runs
        self.builder: Any = None

    def after_answer(self, job: Job | None) -> None:
        """Run `job` once the answer went out (the memory writing of a turn)."""
        self._after_answer = job

    def between_packets(self, store: GraphStore | None, config: Config, events: Sink,
                        back_up: bool = True) -> None:
        job, self._after_answer = self._after_answer, None
        if job is not None:
            try:
                job(events)
            except Exception:  # the reply is out; a bug here must not kill the worker
                log.exception("writing the memory after the answer failed")
        self.sync.after_packet(store, events)  # this device's changes, written
        if back_up:
            self.backups.maybe_backup(store, config)

    def start_building(self, builder: Any) -> None:
        self.builder = builder

    def stop_building(self) -> bool:
        """Stop the build once its conversation is remembered; False when none runs."""
        if self.builder is None:
            return False
        self.builder.stop_after_conversation()
        return True

    def drop_building(self, import_id: int) -> None:
        """The import `import_id` goes away: a build of it (or of all) ends now."""
        builder = self.builder
        if builder is not None and builder.import_id in (None, import_id):
            builder.stop_after_conversation()
            self.builder = None

    def step(self, store: GraphStore | None, can_build: bool) -> bool:
        """One piece of the build; answers whether more is waiting. `can_build` is False
        when the memory or the endpoint changed under the build, which then ends."""
        builder = self.builder
        if builder is None:
            return False
        if builder.store is not store or not can_build:
            self.builder = None
            return False
        try:
            more = builder.step()
        except Exception:  # a bug must not kill the backend thread; the build stops
            log.exception("building the memory from imported conversations failed")
            more = False
        if not more and self.builder is builder:
            self.builder = None
        return more
