"""Backups: the list, and putting one in place of the memory."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import ErrorCode
from core.i18n import N_
from core.protocol.handlers.table import Refusal, handles
from core.protocol.packets import PacketType
from core.store import backups, restoring

if TYPE_CHECKING:
    from core.protocol.backend_interface import HandlerBackend


@handles(PacketType.LIST_BACKUPS, {}, reads=True)
def list_backups(backend: HandlerBackend, _body: dict[str, Any]) -> dict[str, Any]:
    """The backups, the copies restores kept aside (UNDO_RESTORE brings one back), and
    what the memory holds now: a restore replaces all of it."""
    folder = backups.backup_folder(backend.db_path)
    current = backups.describe(backend.db_path) if backend.db_path.exists() else None
    return {"folder": str(folder), "current": current,
            "backups": [backups.describe(p) for p in backups.backup_files(folder)],
            "kept_aside": [backups.describe(p) for p in
                           restoring.kept_aside_files(backend.db_path)]}


@handles(PacketType.RESTORE_BACKUP, {"name": {"type": "string"}}, long_running=True)
def restore_backup(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    """Put a backup in place of the memory; the current file is kept aside first."""
    name = body.get("name")
    folder = backups.backup_folder(backend.db_path)
    chosen = next((p for p in backups.backup_files(folder) if p.name == name), None)
    if chosen is None:
        raise Refusal(N_("there is no backup called {name} in {folder}"), ErrorCode.NOT_FOUND,
                      name=repr(name), folder=str(folder))
    return _put_in_place(backend, chosen)


@handles(PacketType.UNDO_RESTORE, {"kept_aside": {"type": "string"}}, long_running=True)
def undo_restore(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    """Take a restore back: the file it kept aside returns, and what the restore brought
    is kept aside in its turn (nothing is deleted either way)."""
    chosen = restoring.kept_aside(backend.db_path, body.get("kept_aside"))
    if chosen is None:
        raise Refusal(N_("there is no memory kept aside by a restore called {name}"),
                      ErrorCode.NOT_FOUND, name=repr(body.get("kept_aside")))
    return _put_in_place(backend, chosen)


def _put_in_place(backend: HandlerBackend, chosen: Path) -> dict[str, Any]:
    """`chosen` in place of the memory, the current file kept aside; answers both."""
    backend.close_store()
    try:
        aside = restoring.restore(backend.db_path, chosen)  # checks the backup first
    except backups.BackupError:
        backend.open_store()
        raise
    except (OSError, sqlite3.Error) as error:
        backend.open_store()
        raise Refusal(N_("the backup could not be restored ({error}); the memory is as "
                         "it was"), ErrorCode.STORE, error=str(error)) from None
    backend.open_store()
    now = backups.describe(backend.db_path)
    return {"restored": chosen.name, "kept_aside": str(aside), "facts": now["facts"],
            "conversations": now["conversations"],
            "store_error": backend.store_error, "store_warning": backend.store_warning}
