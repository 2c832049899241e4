"""Opening the memory at start: check it, and fall back to reading only when writing would
be wrong (a damaged file) or impossible (a folder that cannot be written).

Whatever is found, nothing is overwritten or deleted, and the person is told the way out.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from core.store import backups
from core.store.graph import GraphStore, StoreError, describe_sqlite_error

RESTORE = "Restore a backup to go on (File > Restore from backup…)"


@dataclass
class Opened:
    store: GraphStore | None
    warning: str | None = None  # opened, but read-only: why, and the way out
    detail: str | None = None  # what SQLite found, for those who ask
    error: str | None = None  # not opened at all: why, and the way out


def open_checked(db_path: Path, trash_days: int) -> Opened:
    saved = backups.backup_files(backups.backup_folder(db_path))
    if db_path.exists() and db_path.stat().st_size == 0 and saved:
        count = "1 backup exists" if len(saved) == 1 else f"{len(saved)} backups exist"
        return Opened(None, error=f"the memory file {db_path.name} is empty (0 bytes), but "
                                  f"{count}: restore one (File > Restore from backup…)")
    if db_path.exists() and not os.access(db_path.parent, os.W_OK):
        return _read_only(db_path, trash_days,
                          f"the data folder {db_path.parent} cannot be written",
                          "Make it writable again and restart; nothing is lost")
    try:
        store = GraphStore(db_path, trash_days=trash_days)
    except StoreError as error:
        return _read_only(db_path, trash_days, str(error), RESTORE)
    try:
        problems = store.quick_check()
    except sqlite3.Error as error:
        store.close()
        return _read_only(db_path, trash_days, describe_sqlite_error(error), RESTORE)
    if problems:
        store.close()
        opened = _read_only(db_path, trash_days, "the memory database is damaged", RESTORE)
        opened.detail = "; ".join(problems)
        return opened
    return Opened(store)


def _read_only(db_path: Path, trash_days: int, problem: str, way_out: str) -> Opened:
    reason = (f"{problem}. It was opened read-only: you can read it, but nothing new is "
              f"saved, and the file is kept as it is. {way_out}")
    try:
        return Opened(GraphStore(db_path, trash_days=trash_days, read_only=reason),
                      warning=reason)
    except StoreError as error:
        return Opened(None, error=f"{problem}; it cannot be read either ({error}). {way_out}")
