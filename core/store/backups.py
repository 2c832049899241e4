"""Rolling backups of the memory with SQLite's online backup API, and restoring one.

A backup is a whole, consistent copy taken while the store stays open (the backup API
copies pages under SQLite's own locking), written under a temporary name and renamed, so
a crash never leaves half a backup that looks whole. Backups live in `backups/` beside
the database, private to the owner like the database itself. Which are kept: the newest
`keep_last`, plus the newest of each of the last `keep_weeks` weeks.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import CodedError
from core.i18n import tr
from core.paths import PRIVATE_FOLDER, make_private_file
from core.store.counts import FACTS_SQL

FOLDER = "backups"
NAME = re.compile(r"^graph_memory-(\d{8}-\d{6})\.db$")
WEEK = 7 * 86400.0
PAGES_PER_STEP = 4096  # copy in steps so other connections are not locked out for long


@dataclass(frozen=True)
class BackupPolicy:
    every_hours: float = 1.0  # at most one backup per this much time of use
    keep_last: int = 7
    keep_weeks: int = 4


class BackupError(CodedError):
    """A backup that cannot be made, listed or restored; the message says why."""


def backup_folder(db_path: Path) -> Path:
    return db_path.parent / FOLDER


def _stamp(moment: float) -> str:
    return time.strftime("%Y%m%d-%H%M%S", time.localtime(moment))


def make_backup(conn: sqlite3.Connection, folder: Path, now: float | None = None) -> Path:
    """Copy the database behind `conn` into `folder`; answers the new file."""
    now = time.time() if now is None else now
    folder.mkdir(mode=PRIVATE_FOLDER, parents=True, exist_ok=True)
    target = folder / f"graph_memory-{_stamp(now)}.db"
    while target.exists():  # two backups in one second: keep both
        now += 1
        target = folder / f"graph_memory-{_stamp(now)}.db"
    partial = folder / f".{target.name}.partial"
    descriptor = os.open(partial, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
    os.close(descriptor)
    try:
        copy = sqlite3.connect(str(partial))
        try:
            conn.backup(copy, pages=PAGES_PER_STEP)
            copy.execute("PRAGMA journal_mode = DELETE")  # one self-contained file
        finally:
            copy.close()
        with open(partial, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(partial, target)
    except BaseException:
        with contextlib.suppress(OSError):
            partial.unlink()
        raise
    make_private_file(target)
    return target


def made_at(path: Path) -> float:
    """When a backup was made: from its name, which survives copying, else its mtime."""
    match = NAME.match(path.name)
    if match:
        with contextlib.suppress(ValueError):
            return time.mktime(time.strptime(match.group(1), "%Y%m%d-%H%M%S"))
    return path.stat().st_mtime


def backup_files(folder: Path) -> list[Path]:
    """Backups in `folder`, newest first."""
    try:
        if not folder.is_dir():
            return []
        files = [p for p in folder.iterdir() if NAME.match(p.name) and p.is_file()]
    except OSError:  # a folder we may not read has no backups we could restore
        return []
    return sorted(files, key=lambda p: (made_at(p), p.name), reverse=True)


# What a restore replaces, told before it is asked for: the conversations (not deleted,
# not empty), their messages, and when the newest was written. A file older than
# conversations has no such table: its messages count as one conversation's.
CHATS_SQL = ("SELECT (SELECT count(DISTINCT conversation_id) FROM messages WHERE"
             " conversation_id IN (SELECT id FROM conversations WHERE deleted_at IS NULL)),"
             " (SELECT count(*) FROM messages), (SELECT max(created_at) FROM messages)")
OLD_CHATS_SQL = ("SELECT min(count(*), 1), count(*), max(created_at) FROM messages")


def describe(path: Path) -> dict[str, Any]:
    """Date, size, and what one backup (or the memory file itself) holds: facts,
    conversations, messages and the newest message's time; read without changing it."""
    info: dict[str, Any] = {"name": path.name, "created_at": made_at(path),
                            "bytes": path.stat().st_size, "facts": None,
                            "conversations": None, "messages": None, "last_message_at": None,
                            "problem": None}
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            info["facts"] = conn.execute(FACTS_SQL).fetchone()[0]
            try:
                chats = conn.execute(CHATS_SQL).fetchone()
            except sqlite3.OperationalError:  # made before conversations existed
                chats = conn.execute(OLD_CHATS_SQL).fetchone()
            info["conversations"], info["messages"], info["last_message_at"] = chats
        finally:
            conn.close()
    except sqlite3.Error as error:
        info["problem"] = str(error)
    return info


# max + count: grows with every new row, whichever device's range its id lies in
STATE_SQL = ("SELECT (SELECT coalesce(max(id), 0) + count(*) FROM change_log),"
             " (SELECT coalesce(max(id), 0) + count(*) FROM messages)")


def state(conn: sqlite3.Connection) -> tuple[int, int]:
    """Where the memory and the chat stand now: a backup is due only when this moved."""
    row = conn.execute(STATE_SQL).fetchone()
    return row[0], row[1]


def state_of(path: Path) -> tuple[int, int] | None:
    """Where the memory and the chat stood in a backup (see `STATE_SQL`), or None."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = conn.execute(STATE_SQL).fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    return row[0], row[1]


def to_prune(files: list[Path], now: float, policy: BackupPolicy) -> list[Path]:
    """Which of `files` (newest first) the policy no longer keeps."""
    keep = set(files[:policy.keep_last])
    for week in range(policy.keep_weeks):
        start, end = now - (week + 1) * WEEK, now - week * WEEK
        newest = next((p for p in files if start < made_at(p) <= end), None)
        if newest is not None:
            keep.add(newest)
    return [p for p in files if p not in keep]


def prune(folder: Path, now: float, policy: BackupPolicy) -> list[Path]:
    removed = to_prune(backup_files(folder), now, policy)
    for path in removed:
        with contextlib.suppress(OSError):
            path.unlink()
    return removed


def check_backup(path: Path) -> None:
    """Refuse a backup that is not a sound TrulyMEM database."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            result = conn.execute("PRAGMA quick_check").fetchone()[0]
            conn.execute("SELECT count(*) FROM edges").fetchone()
        finally:
            conn.close()
    except sqlite3.Error as error:
        raise BackupError(tr("the backup {name} cannot be read ({error})", name=path.name,
                             error=error)) from None
    if result != "ok":
        raise BackupError(tr("the backup {name} is damaged ({problem})", name=path.name,
                             problem=result))
