"""Putting a backup (or a copy a restore kept aside) in place of the memory, so that a
crash at any moment leaves a whole memory file where the app looks for it.

The swap is one rename over the live file. Before it, the chosen copy is written whole
beside the memory, the live file gets a second name (a hard link: the copy kept aside),
and a small journal says what is under way; the next start finishes a restore the
journal names (see `finish_interrupted`). The live file is checkpointed first, so no
write of its WAL is left behind in a side file that would no longer match it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any

from core.i18n import tr
from core.paths import make_private_file
from core.store.backups import BackupError, check_backup

KEPT_ASIDE = re.compile(r"^(.+)\.before-restore-\d{8}-\d{6}$")
SIDE_FILES = ("-wal", "-shm", "-journal")


def _stamp(moment: float) -> str:
    return time.strftime("%Y%m%d-%H%M%S", time.localtime(moment))


def journal_path(db_path: Path) -> Path:
    return db_path.with_name(f".{db_path.name}.restore-journal")


def partial_path(db_path: Path) -> Path:
    return db_path.with_name(f".{db_path.name}.restoring")


def kept_aside(db_path: Path, name: Any) -> Path | None:
    """The file a restore kept aside, by its name (never a path elsewhere), or None."""
    if not isinstance(name, str):
        return None
    candidate = db_path.with_name(Path(name).name)
    if name not in (candidate.name, str(candidate)):  # a path into another folder
        return None
    match = KEPT_ASIDE.match(candidate.name)
    if match is None or match.group(1) != db_path.name:
        return None
    return candidate if candidate.is_file() else None


def kept_aside_files(db_path: Path) -> list[Path]:
    """The copies restores kept aside, newest first."""
    try:
        found = [p for p in db_path.parent.glob(f"{db_path.name}.before-restore-*")
                 if kept_aside(db_path, p.name) is not None]
    except OSError:
        return []
    return sorted(found, key=lambda p: p.name, reverse=True)


def _sync(path: Path) -> None:
    with contextlib.suppress(OSError):
        descriptor = os.open(path, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def _checkpoint(db_path: Path) -> None:
    """Fold the live file's WAL into it, so the file alone is the whole memory; refused
    while another program holds it open mid-write."""
    if not db_path.exists():
        return
    conn = sqlite3.connect(str(db_path), timeout=5)
    try:
        busy, _log, _done = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    finally:
        conn.close()
    if busy:
        raise BackupError(tr("another program is writing to the memory; try the restore "
                             "again in a moment"))


def _copy_whole(source_path: Path, target: Path) -> None:
    """`source_path` copied, consistent, into `target` as one self-contained file."""
    descriptor = os.open(target, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
    os.close(descriptor)
    source = sqlite3.connect(f"file:{source_path}?mode=ro", uri=True)
    try:
        copy = sqlite3.connect(str(target))
        try:
            source.backup(copy)
            copy.execute("PRAGMA journal_mode = DELETE")
        finally:
            copy.close()
    finally:
        source.close()
    _sync(target)


def _aside_name(db_path: Path, now: float) -> Path:
    aside = db_path.with_name(f"{db_path.name}.before-restore-{_stamp(now)}")
    while aside.exists():  # restored and taken back within one second: keep both
        now += 1
        aside = db_path.with_name(f"{db_path.name}.before-restore-{_stamp(now)}")
    return aside


def _keep_aside(db_path: Path, aside: Path) -> None:
    """Give the live file its kept-aside name too, leaving it where it is."""
    if aside.exists() or not db_path.exists():
        return
    try:
        os.link(db_path, aside)
    except OSError:  # a file system without hard links: a copy, made durable
        shutil.copy2(db_path, aside)
        _sync(aside)
    make_private_file(aside)


def _swap(db_path: Path, partial: Path) -> None:
    """The one rename: the memory is the old file until it, the restored one after."""
    for suffix in SIDE_FILES:  # empty after the checkpoint; they belong to the old file
        with contextlib.suppress(FileNotFoundError):
            Path(f"{db_path}{suffix}").unlink()
    os.replace(partial, db_path)
    make_private_file(db_path)
    _sync(db_path.parent)


def restore(db_path: Path, backup: Path, now: float | None = None) -> Path:
    """Put `backup` in place of the (closed) database; answers where the current file was
    kept. Nothing is deleted, and a crash at any step leaves a whole memory file or a
    journal the next start finishes."""
    check_backup(backup)
    now = time.time() if now is None else now
    _checkpoint(db_path)
    partial, journal = partial_path(db_path), journal_path(db_path)
    try:
        _copy_whole(backup, partial)
    except BaseException:
        with contextlib.suppress(OSError):
            partial.unlink()
        raise
    aside = _aside_name(db_path, now)
    _write_journal(journal, {"partial": partial.name, "aside": aside.name,
                             "from": backup.name})
    _keep_aside(db_path, aside)
    _swap(db_path, partial)
    journal.unlink()
    _sync(db_path.parent)
    return aside


def _write_journal(journal: Path, entry: dict[str, str]) -> None:
    temporary = journal.with_name(journal.name + ".new")
    descriptor = os.open(temporary, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(entry, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, journal)
    _sync(journal.parent)


def _read_journal(journal: Path) -> dict[str, str] | None:
    try:
        entry = json.loads(journal.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or not all(
            isinstance(entry.get(k), str) for k in ("partial", "aside")):
        return None
    return entry


def finish_interrupted(db_path: Path) -> str | None:
    """A restore the app was stopped in the middle of: finished now, as the person
    asked, and said. A restore copy without a journal (from a version that moved the
    memory away first) is put in place only where the memory file is missing and the
    copy is whole. Answers what to tell the person, or None."""
    journal, partial = journal_path(db_path), partial_path(db_path)
    entry = _read_journal(journal) if journal.exists() else None
    if journal.exists() and entry is None:
        with contextlib.suppress(OSError):
            journal.unlink()  # written half: the swap had not begun
    if entry is None:
        return _finish_old_kind(db_path, partial)
    aside = db_path.with_name(Path(entry["aside"]).name)
    partial = db_path.with_name(Path(entry["partial"]).name)
    told = None
    if partial.exists():
        try:
            check_backup(partial)
        except BackupError:  # the copy is not whole: the memory stays as it was
            with contextlib.suppress(OSError):
                partial.unlink()
            journal.unlink()
            return tr("A restore was stopped before its copy was complete; your memory is "
                      "as it was before it.")
        _keep_aside(db_path, aside)
        _swap(db_path, partial)
        told = tr("A restore was stopped in the middle (the app was closed or the computer "
                  "went off); it was finished now. What you had before it is kept as "
                  "{aside}.", aside=aside.name)
    journal.unlink()
    _sync(db_path.parent)
    return told


def _finish_old_kind(db_path: Path, partial: Path) -> str | None:
    if db_path.exists() or not partial.exists():
        return None
    try:
        check_backup(partial)
    except BackupError:
        return None
    _swap(db_path, partial)
    return tr("A restore was stopped in the middle (the app was closed or the computer went "
              "off); it was finished now.")
