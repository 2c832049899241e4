"""Backs the memory up when it changed and the last backup is old enough (see the policy
in `core.store.backups`). The hosts call it between packets, after the answer went out,
so a backup never holds up an answer; failures are kept for the status, never raised."""

from __future__ import annotations

import logging
import sqlite3
import time
from pathlib import Path

from core.config import Config
from core.i18n import tr
from core.store import GraphStore, backups

log = logging.getLogger(__name__)


class BackupSchedule:
    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path
        self.folder = backups.backup_folder(db_path)
        self.warning: str | None = None
        # The store connection's change counter when the memory last matched a backup
        # (None: it does not), and when that backup was made.
        self._changes_at_backup: int | None = None
        self._last_at: float | None = None

    def opened(self, store: GraphStore | None) -> None:
        """A store was opened: does the newest backup already hold what it holds?"""
        saved = backups.backup_files(self.folder)
        self._last_at = backups.made_at(saved[0]) if saved else None
        self._changes_at_backup = None
        if saved and store is not None and not store.read_only and \
                backups.state_of(saved[0]) == backups.state(store.conn):
            self._changes_at_backup = store.conn.total_changes

    def maybe_backup(self, store: GraphStore | None, config: Config,
                     at_exit: bool = False) -> None:
        """Back up when the memory changed since the last backup and the last is older
        than the policy's interval (at exit: whenever it changed)."""
        if store is None or store.read_only:
            return
        try:
            changes = store.conn.total_changes  # a counter in memory: free per packet
            if changes == self._changes_at_backup:
                return
            policy = backups.BackupPolicy(config.backup_every_hours, config.backups_kept,
                                          config.weekly_backups_kept)
            now = time.time()
            if self._last_at is not None and not at_exit and \
                    now - self._last_at < policy.every_hours * 3600:
                return
            backups.make_backup(store.conn, self.folder, now)
            backups.prune(self.folder, now, policy)
            self._changes_at_backup, self._last_at = changes, now
            self.warning = None
        except (OSError, sqlite3.Error) as error:
            log.warning("backup failed: %s", error)
            self.warning = tr("the last backup failed ({error})", error=error)
