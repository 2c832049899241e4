"""Opening the memory at start: check it, and fall back to reading only when writing would
be wrong (a damaged file) or impossible (a folder that cannot be written).

Whatever is found, nothing is overwritten or deleted, and the person is told the way out.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from core.i18n import N_, tr
from core.paths import aside_path
from core.store import backups, restoring
from core.store.graph import GraphStore, StoreError, describe_sqlite_error

RESTORE = N_("Restore a backup to go on (File > Restore from backup…)")
# Below this much free space, a memory that fails to open failed for want of room: SQLite
# then says "disk I/O error" (it cannot make its WAL index), and restoring a backup, the
# usual way out, would fail too.
FULL_BELOW = 16 * 1024 * 1024


@dataclass
class Opened:
    store: GraphStore | None
    warning: str | None = None  # opened, but read-only: why, and the way out
    detail: str | None = None  # what SQLite found, for those who ask
    error: str | None = None  # not opened at all: why, and the way out
    notice: str | None = None  # opened, and all is well, but the person should know this


# A leftover untouched this long belongs to no running import or backup (an import of
# 1,000,000 facts writes its staging file for about two minutes, never pausing this long).
LEFTOVER_SECONDS = 600


def remove_leftovers(db_path: Path, now: float | None = None) -> list[str]:
    """Files a killed import, backup or restore left behind (77–231 MB of import staging,
    a 60 MB partial backup and their journals): removed at start; answers their names.
    Another program on the same folder may be writing one now, so only those untouched
    for LEFTOVER_SECONDS go."""
    now = time.time() if now is None else now
    folder = backups.backup_folder(db_path)
    found = [*db_path.parent.glob(f"{db_path.name}.import-staging*"),
             *db_path.parent.glob(f".{db_path.name}.restoring*"),
             *db_path.parent.glob(f".{db_path.name}.restore-journal.new"),
             *(folder.glob(".*.partial*") if folder.is_dir() else [])]
    removed = []
    for leftover in found:
        with contextlib.suppress(OSError):
            if now - leftover.stat().st_mtime > LEFTOVER_SECONDS and leftover.is_file():
                leftover.unlink()
                removed.append(leftover.name)
    return removed


def _finish_restore(db_path: Path) -> str | None:
    """A restore stopped in the middle, finished (see `core.store.restoring`)."""
    try:
        return restoring.finish_interrupted(db_path)
    except OSError as error:
        return tr("A restore was stopped in the middle and could not be finished ({error}); "
                  "nothing was deleted", error=error.strerror or error)


def _missing(db_path: Path) -> str | None:
    """No memory file where backups or kept copies say there was one: not a first start,
    so no new empty memory is made in its place without the person's word."""
    if db_path.exists():
        return None
    saved = backups.backup_files(backups.backup_folder(db_path))
    kept = restoring.kept_aside_files(db_path)
    if not saved and not kept:
        return None  # a first start
    found = []
    if saved:
        newest = time.strftime("%Y-%m-%d %H:%M", time.localtime(backups.made_at(saved[0])))
        found.append(tr("1 backup (made {when})", when=newest) if len(saved) == 1 else
                     tr("{n} backups (the newest made {when})", n=len(saved), when=newest))
    if kept:
        found.append(tr("1 copy kept aside by a restore") if len(kept) == 1 else
                     tr("{n} copies kept aside by restores", n=len(kept)))
    return tr("the memory file {name} is missing from {folder}, but {found} are there. "
              "No new memory was started in its place: restore one to go on (File > "
              "Restore from backup…). To start with an empty memory instead, move them "
              "out of that folder", name=db_path.name, folder=db_path.parent,
              found=tr(" and ").join(found))


def open_checked(db_path: Path, trash_days: int) -> Opened:
    finished = _finish_restore(db_path)
    missing = _missing(db_path)
    if missing:
        return Opened(None, error=missing)
    opened = _open(db_path, trash_days)
    if finished:
        opened.notice = f"{finished} {opened.notice}" if opened.notice else finished
    return opened


def _open(db_path: Path, trash_days: int) -> Opened:
    remove_leftovers(db_path)
    saved = backups.backup_files(backups.backup_folder(db_path))
    if db_path.exists() and db_path.stat().st_size == 0 and saved:
        count = tr("1 backup exists") if len(saved) == 1 else \
            tr("{n} backups exist", n=len(saved))
        return Opened(None, error=tr("the memory file {name} is empty (0 bytes), but "
                                     "{count}: restore one (File > Restore from backup…)",
                                     name=db_path.name, count=count))
    notice = None
    if db_path.exists() and db_path.stat().st_size == 0:
        # An empty file is an empty memory to SQLite, so it would silently start afresh.
        aside = aside_path(db_path, "empty")
        try:
            db_path.replace(aside)
        except OSError:
            aside = None
        notice = tr("The memory file {name} was empty (0 bytes) and there is no backup, so "
                    "a new, empty memory was started. {kept}", name=db_path.name,
                    kept=tr("The empty file is kept as {aside}.", aside=aside.name)
                    if aside else "")
    if db_path.exists() and not os.access(db_path.parent, os.W_OK):
        return _read_only(db_path, trash_days,
                          tr("the data folder {folder} cannot be written",
                             folder=db_path.parent),
                          tr("Make it writable again and restart; nothing is lost"))
    try:
        store = GraphStore(db_path, trash_days=trash_days)
    except StoreError as error:
        return _read_only(db_path, trash_days, *_why_not(db_path, str(error)))
    try:
        problems = store.quick_check()
    except sqlite3.Error as error:
        store.close()
        return _read_only(db_path, trash_days, *_why_not(db_path, describe_sqlite_error(error)))
    if problems:
        store.close()
        opened = _read_only(db_path, trash_days, tr("the memory database is damaged"),
                            tr(RESTORE))
        opened.detail = "; ".join(problems)
        return opened
    return Opened(store, notice=notice)


def _why_not(db_path: Path, problem: str) -> tuple[str, str]:
    """The problem and the way out when the memory would not open: a full disk is said as
    such (with what is left), anything else is the store's own words and a restore."""
    try:
        free = shutil.disk_usage(db_path.parent).free
    except OSError:
        free = None
    if free is not None and free < FULL_BELOW:
        return (tr("the disk that holds {folder} is full ({free} KB free)",
                   folder=db_path.parent, free=f"{free // 1024:,}"),
                tr("Free some space on it and start TrulyMEM again; nothing is lost"))
    return problem, tr(RESTORE)


def _read_only(db_path: Path, trash_days: int, problem: str, way_out: str) -> Opened:
    reason = tr("{problem}. It was opened read-only: you can read it, but nothing new is "
                "saved, and the file is kept as it is. {way_out}", problem=problem,
                way_out=way_out)
    try:
        return Opened(GraphStore(db_path, trash_days=trash_days, read_only=reason),
                      warning=reason)
    except StoreError as error:
        return Opened(None, error=tr("{problem}; it cannot be read either ({error}). "
                                     "{way_out}", problem=problem, error=error,
                                     way_out=way_out))
