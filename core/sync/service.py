"""Sync for one data folder: start a set, join one, and sync now (write this device's
changes, then apply what the others wrote, in order per device, each file once).

`DeviceSync` answers dicts; failures are raised as `SyncError` with a message for the
person, and leave the memory as it was: each file is applied in one transaction, and a
file is written before the transaction that empties the record of what it carries
commits.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import CodedError, ErrorCode
from core.i18n import N_, tr
from core.paths import PRIVATE_FILE
from core.store import backups
from core.store.graph import GraphStore
from core.store.schema import LATEST_VERSION
from core.sync import folder as layout
from core.sync.hlc import HybridClock
from core.sync.incoming import Applied, apply_changes
from core.sync.outgoing import collect, everything
from core.sync.renumber import move_into_range
from core.sync.sealed import (
    SealError,
    SetKey,
    new_code,
    new_signing_key,
    read_header,
    seal,
    unseal,
)

KEY_FILE = "sync.key"
SLOTS = 4095  # ids stay below 2**52, exact in any JSON reader


class SyncError(CodedError):
    code = ErrorCode.INVALID


@dataclass(frozen=True)
class Secrets:
    """What only this device knows: the set's code (its key) and its signing key."""

    code: str
    signing: str

    @property
    def key(self) -> SetKey:
        return SetKey.from_code(self.code)


class _Refused(Exception):
    """A file that is not applied, with the reason kept for the person."""


def me(store: GraphStore) -> dict[str, Any] | None:
    return store.query_one("SELECT * FROM sync_self")


class DeviceSync:
    """Sync for the memory in `store`, whose data folder is `home`."""

    def __init__(self, store: GraphStore, home: Path) -> None:
        self.store, self.home = store, Path(home)

    # -- this device's secrets -----------------------------------------------------------

    @property
    def key_path(self) -> Path:
        return self.home / KEY_FILE

    def _save_secrets(self, kept: Secrets) -> None:
        descriptor = os.open(self.key_path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC,
                             PRIVATE_FILE)
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            json.dump({"code": kept.code, "signing": kept.signing}, out)

    def _secrets(self) -> Secrets:
        try:
            data = json.loads(self.key_path.read_text(encoding="utf-8"))
            kept = Secrets(str(data["code"]), str(data["signing"]))
            kept.key  # noqa: B018  (a damaged code is told here, not mid-sync)
            return kept
        except (OSError, ValueError, KeyError, TypeError, SealError) as error:
            raise SyncError(N_("this device's sync key ({path}) cannot be read: {error}"),
                            path=str(self.key_path), error=str(error)) from None

    # -- the set -------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """This device, the others, the conflicts and the refused files."""
        self_row = me(self.store)
        if self_row is None:
            return {"joined": False}
        count = self.store.query_one
        return {
            "joined": True, "device": self_row["device"], "name": self_row["name"],
            "folder": self_row["folder"], "set": self_row["set_id"],
            "seq": self_row["seq"], "last_sync": self_row["last_sync"],
            "devices": self.store.query("SELECT device, name, seq, last_seen FROM"
                                        " sync_devices ORDER BY name, device"),
            "conflicts": count("SELECT count(*) AS n FROM sync_conflicts")["n"],
            "refused": self.store.query("SELECT file, reason, at FROM sync_refused"
                                        " ORDER BY file"),
            "waiting": count("SELECT count(DISTINCT tbl || row_id) AS n FROM"
                             " sync_outbox")["n"],
        }

    def pairing_code(self) -> str:
        """The code another device types to join (the set's key: shown on request only)."""
        return self._secrets().code

    def conflicts(self, limit: int = 200) -> list[dict[str, Any]]:
        return self.store.query("SELECT * FROM sync_conflicts ORDER BY id DESC LIMIT ?",
                                (limit,))

    def start(self, folder: Path, name: str | None = None) -> dict[str, Any]:
        """Make this device the first of a new set in `folder`; answers the pairing code
        the other devices type."""
        folder = Path(folder).expanduser().resolve()
        self._refuse_if_member()
        if layout.read_set_id(folder) is not None:
            raise SyncError(N_("{folder} already holds a sync set: join it with the code "
                               "shown on the device that started it"), folder=str(folder))
        kept = Secrets(new_code(), new_signing_key())
        layout.write_set_id(folder, kept.key.set_id)
        self._become_member(folder, kept, name, taken=set())
        wrote = self.write(first=True)
        return {"code": kept.code, "set": kept.key.set_id,
                "device": me(self.store)["device"], **wrote}

    def join(self, folder: Path, code: str, name: str | None = None) -> dict[str, Any]:
        """Join the set in `folder` with the code shown on a device already in it: this
        memory's rows are numbered into this device's own range, sent whole, and the
        others' applied."""
        folder = Path(folder).expanduser().resolve()
        self._refuse_if_member()
        kept = Secrets(code.strip(), new_signing_key())
        set_id = kept.key.set_id
        found = layout.read_set_id(folder)
        if found is None:
            raise SyncError(N_("{folder} holds no sync set (no {file}): start one on the "
                               "first device, or choose the folder your syncing app "
                               "shares"), folder=str(folder), file=layout.SET_FILE)
        if found != set_id:
            raise SyncError(N_("this code is not the code of the sync set in {folder}"),
                            folder=str(folder))
        self._become_member(folder, kept, name, taken=_slots_in_use(folder))
        wrote = self.write(first=True)
        return {"set": set_id, "device": me(self.store)["device"], **wrote,
                **self.apply_all()}

    def _refuse_if_member(self) -> None:
        self_row = me(self.store)
        if self_row is not None:
            raise SyncError(N_("this memory already syncs through {folder}"),
                            folder=self_row["folder"])

    def _become_member(self, folder: Path, kept: Secrets, name: str | None,
                       taken: set[int]) -> None:
        """A backup first; then this device's id, name and range, its rows moved into
        that range, and recording on: all in one transaction."""
        store = self.store
        backups.make_backup(store.conn, backups.backup_folder(store.path))
        self._save_secrets(kept)
        slot = secrets.choice([s for s in range(1, SLOTS + 1) if s not in taken])
        device = secrets.token_hex(8)
        with store.transaction():
            store.conn.execute("PRAGMA defer_foreign_keys = ON")
            move_into_range(store.conn, slot)
            store.conn.execute(
                "INSERT INTO sync_self(id, device, name, slot, set_id, folder, joined_at)"
                " VALUES (1, ?, ?, ?, ?, ?, ?)",
                (device, name or socket.gethostname() or "device", slot, kept.key.set_id,
                 str(folder), time.time()))
            store.conn.execute("UPDATE change_log SET device = ? WHERE device IS NULL",
                               (device,))
            store.conn.execute("UPDATE sync_capture SET on_ = 1")

    def _member(self) -> dict[str, Any]:
        self_row = me(self.store)
        if self_row is None:
            raise SyncError(N_("this memory does not sync: start a set or join one first"))
        return self_row

    # -- writing -------------------------------------------------------------------------

    def write(self, first: bool = False) -> dict[str, Any]:
        """Write what changed here since the last file as the next numbered file."""
        self_row, kept = self._member(), self._secrets()
        folder, store = Path(self_row["folder"]), self.store
        with store.transaction():
            clock = HybridClock(self_row["device"], self_row["clock"])
            changes = everything(store.conn, clock) if first else collect(store.conn, clock)
            if not changes:
                return {"wrote": 0, "file": None}
            present = layout.numbered_files(folder, self_row["device"])
            # A file numbered past what the memory remembers (a crash after the file was
            # written, a backup restored): that number is never written again.
            seq = max([self_row["seq"], *present]) + 1
            header = {"set": kept.key.set_id, "device": self_row["device"], "seq": seq,
                      "slot": self_row["slot"], "name": self_row["name"],
                      "schema": LATEST_VERSION, "at": round(time.time(), 3),
                      "seen": {row["device"]: row["seq"] for row in
                               store.query("SELECT device, seq FROM sync_devices")}}
            path = layout.change_file(folder, self_row["device"], seq)
            try:
                layout.write_whole(path, seal(kept.key, header,
                                              {"device": self_row["device"],
                                               "changes": changes}, kept.signing))
            except OSError as error:
                raise SyncError(N_("the sync folder cannot be written ({error}); the "
                                   "changes wait for the next sync"),
                                error=str(error)) from None
            store.conn.execute("UPDATE sync_self SET seq = ?, clock = ?, last_sync = ?",
                               (seq, clock.last, time.time()))
        return {"wrote": len(changes), "file": path.name, "bytes": path.stat().st_size}

    # -- applying ------------------------------------------------------------------------

    def apply_all(self) -> dict[str, Any]:
        """Apply every file that arrived and can be applied: each device's in order, a
        file only once every file it had seen is applied here."""
        self_row, kept = self._member(), self._secrets()
        folder = Path(self_row["folder"])
        totals, files, refused = Applied(), 0, []
        progress = True
        while progress:
            progress = False
            for device in layout.devices(folder):
                if device == self_row["device"]:
                    continue
                numbered = layout.numbered_files(folder, device)
                done = self._applied_seq(device)
                while done + 1 in numbered:
                    path = numbered[done + 1]
                    try:
                        if not self._apply_file(kept, self_row, (device, done + 1, path),
                                                totals):
                            break  # it waits for another device's files
                    except _Refused as refusal:
                        refused.append(self._refuse(folder, path, str(refusal)))
                        break
                    files += 1
                    done += 1
                    progress = True
        self.store.conn.execute("UPDATE sync_self SET last_sync = ?", (time.time(),))
        return {"applied_files": files, "applied_rows": totals.rows,
                "conflicts": totals.conflicts, "merged": totals.merged,
                "refused": refused}

    def _applied_seq(self, device: str) -> int:
        row = self.store.query_one("SELECT seq FROM sync_devices WHERE device = ?",
                                   (device,))
        return row["seq"] if row else 0

    def _refuse(self, folder: Path, path: Path, reason: str) -> dict[str, str]:
        name = str(path.relative_to(folder))
        self.store.conn.execute(
            "INSERT INTO sync_refused VALUES (?, ?, ?) ON CONFLICT (file) DO UPDATE SET"
            " reason = excluded.reason, at = excluded.at", (name, reason, time.time()))
        return {"file": name, "reason": reason}

    def _opened(self, kept: Secrets, device: str, seq: int,
                path: Path) -> tuple[dict[str, Any], list[Any]]:
        """A file's header and changes, once every check passed; _Refused otherwise."""
        try:
            header, payload = unseal(kept.key, layout.read_file(path))
        except (SealError, layout.FolderError) as error:
            raise _Refused(error.said()) from None
        except OSError as error:
            raise _Refused(str(error)) from None
        if header.get("device") != device or payload.get("device") != device:
            raise _Refused(tr("the file names another device than the folder it lies in"))
        known = self.store.query_one("SELECT public_key FROM sync_devices WHERE device = ?",
                                     (device,))
        if known and known["public_key"] and known["public_key"] != header.get("pub"):
            raise _Refused(tr("the file is signed by another key than this device's "
                              "earlier files: written in its name by another device"))
        if header.get("seq") != seq or header.get("set") != kept.key.set_id:
            raise _Refused(tr("the file's number or set is not its name's (a copy of "
                              "another file)"))
        if not isinstance(header.get("schema"), int) or header["schema"] > LATEST_VERSION:
            raise _Refused(tr("written by a newer TrulyMEM: update TrulyMEM on this "
                              "device"))
        changes = payload.get("changes")
        if not isinstance(changes, list) or not isinstance(header.get("seen", {}), dict):
            raise _Refused(tr("the file's contents are damaged"))
        return header, changes

    def _apply_file(self, kept: Secrets, self_row: dict[str, Any],
                    file: tuple[str, int, Path], totals: Applied) -> bool:
        """Apply one file (its device, number and path) in one transaction; False when it
        waits for files of other devices it had seen."""
        device, seq, path = file
        header, changes = self._opened(kept, device, seq, path)
        for other, count in (header.get("seen") or {}).items():
            if other != self_row["device"] and self._applied_seq(other) < _whole(count):
                return False
        store = self.store
        clock = HybridClock(self_row["device"], me(store)["clock"])
        try:
            with store.transaction():
                store.conn.execute("PRAGMA defer_foreign_keys = ON")
                applied = apply_changes(store.conn, clock, device, changes, time.time())
                store.conn.execute(
                    "INSERT INTO sync_devices(device, name, seq, last_seen, public_key)"
                    " VALUES (?, ?, ?, ?, ?) ON CONFLICT (device) DO UPDATE SET"
                    " name = excluded.name, seq = excluded.seq,"
                    " last_seen = excluded.last_seen, public_key = excluded.public_key",
                    (device, str(header.get("name") or "")[:100], seq, time.time(),
                     header.get("pub")))
                store.conn.execute("UPDATE sync_self SET clock = ?", (clock.last,))
                store.conn.execute("DELETE FROM sync_refused WHERE file = ?",
                                   (str(path.relative_to(self_row["folder"])),))
        except (ValueError, TypeError, KeyError, AttributeError, sqlite3.Error) as error:
            raise _Refused(tr("its changes cannot be applied: {error}",
                              error=str(error)[:300])) from None
        totals.rows += applied.rows
        totals.conflicts += applied.conflicts
        totals.merged += applied.merged
        return True

    def sync_now(self) -> dict[str, Any]:
        """Write this device's changes, then apply the others'."""
        return {**self.write(), **self.apply_all()}


def _whole(count: Any) -> int:
    if isinstance(count, int) and not isinstance(count, bool):
        return count
    raise _Refused(tr("the file's contents are damaged"))


def _slots_in_use(folder: Path) -> set[int]:
    """The id ranges the set's devices number in (each file's header names its own)."""
    taken = set()
    for device in layout.devices(folder):
        for path in list(layout.numbered_files(folder, device).values())[:1]:
            try:
                header, _ = read_header(layout.read_file(path))
                taken.add(int(header.get("slot", 0)))
            except (OSError, SealError, layout.FolderError, ValueError, TypeError):
                continue
    return taken
