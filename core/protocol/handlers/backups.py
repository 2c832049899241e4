"""Backups: the list, and putting one in place of the memory."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from core.errors import ErrorCode
from core.i18n import N_
from core.protocol.handlers.table import Refusal, handles
from core.protocol.packets import PacketType
from core.store import backups

if TYPE_CHECKING:
    from core.protocol.dispatcher import Dispatcher


@handles(PacketType.LIST_BACKUPS, {}, reads=True)
def list_backups(backend: Dispatcher, _body: dict[str, Any]) -> dict[str, Any]:
    folder = backups.backup_folder(backend.db_path)
    return {"folder": str(folder),
            "backups": [backups.describe(p) for p in backups.backup_files(folder)]}


@handles(PacketType.RESTORE_BACKUP, {"name": {"type": "string"}}, long_running=True)
def restore_backup(backend: Dispatcher, body: dict[str, Any]) -> dict[str, Any]:
    """Put a backup in place of the memory; the current file is kept aside first."""
    name = body.get("name")
    folder = backups.backup_folder(backend.db_path)
    chosen = next((p for p in backups.backup_files(folder) if p.name == name), None)
    if chosen is None:
        raise Refusal(N_("there is no backup called {name} in {folder}"), ErrorCode.NOT_FOUND,
                      name=repr(name), folder=str(folder))
    backend.close_store()
    try:
        aside = backups.restore(backend.db_path, chosen)  # checks the backup first
    except backups.BackupError:
        backend.open_store()
        raise
    except (OSError, sqlite3.Error) as error:
        backend.open_store()
        raise Refusal(N_("the backup could not be restored ({error}); the memory is as "
                         "it was"), ErrorCode.STORE, error=str(error)) from None
    backend.open_store()
    return {"restored": chosen.name, "kept_aside": str(aside),
            "facts": backups.describe(backend.db_path)["facts"],
            "store_error": backend.store_error, "store_warning": backend.store_warning}
