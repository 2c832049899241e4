"""Sync for one data folder: start a set, join one, and sync now (write this device's
changes, then apply what the others wrote, in order per device, each file once).

`DeviceSync` answers dicts; failures are raised as `SyncError` with a message for the
person, and leave the memory as it was: each file is applied in one transaction, and a
file is written before the transaction that empties the record of what it carries
commits.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import socket
import sqlite3
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import CodedError, ErrorCode
from core.i18n import N_, tr
from core.paths import PRIVATE_FILE
from core.store import backups
from core.store.graph import GraphStore
from core.store.schema import SYNCED_SCHEMA
from core.sync import folder as layout
from core.sync import slots
from core.sync.conflict_words import in_words
from core.sync.hlc import MOST_AHEAD_MS, ClockAhead, HybridClock, millis_of
from core.sync.incoming import Applied, Seen, apply_changes
from core.sync.outgoing import collect, everything, keep_clocks, snapshot
from core.sync.renumber import move_into_range
from core.sync.sealed import (
    SealError,
    SetKey,
    new_code,
    new_signing_key,
    peek_header,
    public_key,
    read_header,
    seal,
    unseal,
)

log = logging.getLogger(__name__)

KEY_FILE = "sync.key"
SLOTS = 4095  # ids stay below 2**52, exact in any JSON reader
PRUNE_AGE = 30 * 86400  # seconds: a file older than this goes, a snapshot standing in
PRUNE_BATCH = 100  # files every device applied are removed a hundred at a time


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


@dataclass(frozen=True)
class _File:
    """An opened file of another device: its number (None: its snapshot) and contents."""

    device: str
    seq: int | None
    path: Path
    header: dict[str, Any]
    changes: Iterable[Any]  # read from the file as they are applied


class _Refused(Exception):
    """A file that is not applied, with the reason kept for the person."""


def me(store: GraphStore) -> dict[str, Any] | None:
    return store.query_one("SELECT * FROM sync_self")


class DeviceSync:
    """Sync for the memory in `store`, whose data folder is `home`."""

    def __init__(self, store: GraphStore, home: Path) -> None:
        self.store, self.home = store, Path(home)
        self.prune_age = PRUNE_AGE
        self.wall = time.time  # this device's clock (a test sets it years ahead)
        self._clock_refused: dict[str, int] = {}  # device → how far ahead its clock was

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
        """The newest conflicts, each with what it was about in words (`about`: the
        node's name, the fact, the conversation's title) and as one line (`words`)."""
        rows = self.store.query(
            "SELECT c.id, c.tbl, c.row_id, c.col, c.kept_device, c.lost_device, c.at,"
            " c.kept_at, c.lost_at, CASE"
            " WHEN c.tbl = 'nodes' THEN (SELECT name FROM nodes WHERE id = c.row_id)"
            " WHEN c.tbl = 'edges' AND c.col = 'slot' THEN (SELECT s.name || ' · ' ||"
            "  e.relation FROM edges e JOIN nodes s ON s.id = e.source_id WHERE e.id ="
            "  c.row_id)"
            " WHEN c.tbl = 'edges' THEN (SELECT s.name || ' ' || e.relation || ' ' || t.name"
            "  FROM edges e JOIN nodes s ON s.id = e.source_id JOIN nodes t ON t.id ="
            "  e.target_id WHERE e.id = c.row_id)"
            " WHEN c.tbl = 'conversations' THEN (SELECT title FROM conversations WHERE id ="
            "  c.row_id)"
            " END AS about,"
            " CASE WHEN c.col IN ('source_id', 'target_id') THEN (SELECT name FROM nodes"
            "  WHERE id = CAST(c.kept AS INTEGER)) ELSE c.kept END AS kept,"
            " CASE WHEN c.col IN ('source_id', 'target_id') THEN (SELECT name FROM nodes"
            "  WHERE id = CAST(c.lost AS INTEGER)) ELSE c.lost END AS lost"
            " FROM sync_conflicts c ORDER BY c.id DESC LIMIT ?", (limit,))
        names = {r["device"]: r["name"] for r in self.store.query(
            "SELECT device, name FROM sync_devices UNION ALL SELECT device, name FROM"
            " sync_self")}
        return [{**row, "words": in_words(row, names)} for row in rows]

    def start(self, folder: Path, name: str | None = None) -> dict[str, Any]:
        """Make this device the first of a new set in `folder`; answers the pairing code
        the other devices type."""
        folder = Path(folder).expanduser().resolve()
        self._refuse_if_member()
        if layout.read_set_id(folder) is not None:
            raise SyncError(N_("{folder} already holds a sync set: join it with the code "
                               "shown on the device that started it"), folder=str(folder))
        kept = Secrets(new_code(), new_signing_key())
        try:
            layout.write_set_id(folder, kept.key.set_id)
        except OSError as error:
            raise SyncError(N_("the folder {folder} cannot be used for sync: {error}"),
                            folder=str(folder), error=error.strerror or str(error)) from None
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

    def leave(self) -> dict[str, Any]:
        """This device stops syncing: its memory stays as it is, its files stay in the
        folder for the others, and what it knew of the set (its key included) goes. It
        may join again later, with the code."""
        self_row = self._member()
        with self.store.transaction():
            for table in ("sync_self", "sync_outbox", "sync_devices", "sync_rows",
                          "sync_alias", "sync_parked", "sync_rewritten", "sync_refused",
                          "sync_conflicts"):
                self.store.conn.execute(f"DELETE FROM {table}")
            self.store.conn.execute("UPDATE sync_capture SET on_ = 0")
            # new rows stay in this device's range (the others may hold rows numbered
            # anywhere above it), and its changes stay its own should it join again
            self.store.conn.execute("INSERT OR REPLACE INTO sync_former VALUES (?, ?, ?)",
                                    (self_row["device"], self_row["slot"], time.time()))
        self.key_path.unlink(missing_ok=True)
        return {"left": self_row["folder"]}

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
        taken |= {row["slot"] for row in store.query("SELECT slot FROM sync_former")}
        slot = secrets.choice([s for s in range(1, SLOTS + 1) if s not in taken])
        device = secrets.token_hex(8)
        with store.transaction():
            store.conn.execute("PRAGMA defer_foreign_keys = ON")
            move_into_range(store.conn, slot)
            store.conn.execute(
                "INSERT INTO sync_self(id, device, name, slot, set_id, folder, joined_at)"
                " VALUES (1, ?, ?, ?, ?, ?, ?)",
                (device, name or default_name(device), slot, kept.key.set_id,
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
        """Write what changed here since the last file as the next numbered file; first,
        what the folder lost of this device's files is written again (see `_mend`)."""
        self_row, kept = self._member(), self._secrets()
        folder, store = Path(self_row["folder"]), self.store
        with store.transaction():
            mended = {} if first else {**self._mend_clock(folder, kept, self_row),
                                       **self._mend(folder, kept, self_row)}
            self_row = self._member()
            clock = HybridClock(self_row["device"], self_row["clock"], wall=self.wall)
            changes = everything(store.conn, clock) if first else collect(store.conn, clock)
            if not changes:
                return {"wrote": 0, "file": None, **mended}
            layout.remove_partials(folder, self_row["device"])
            present = layout.numbered_files(folder, self_row["device"])
            # A file numbered past what the memory remembers (a crash after the file was
            # written, a backup restored): that number is never written again.
            seq = max([self_row["seq"], *present]) + 1
            path = layout.change_file(folder, self_row["device"], seq)
            header = {**self._header(kept, self_row, seq), "clock": clock.last}
            self._seal_into(path, kept, header, changes)
            store.conn.execute("UPDATE sync_self SET seq = ?, clock = ?, last_sync = ?",
                               (seq, clock.last, self.wall()))
            self._prune(folder, kept, {**self_row, "seq": seq})
        return {"wrote": len(changes), "file": path.name, "bytes": path.stat().st_size,
                **mended}

    def _mend(self, folder: Path, kept: Secrets, self_row: dict[str, Any]) -> dict[str, Any]:
        """The shared folder lost and made again (a share re-created, a drive back
        empty), or files of this device gone from it: the set's file is written again,
        and a snapshot of this memory stands in for the missing files, so every fact this
        device wrote reaches the others still. A folder that now holds another set is
        told, and nothing is written into it."""
        found = layout.read_set_id(folder)
        mended: dict[str, Any] = {}
        if found is None:
            self._write_set(folder, kept)
            mended["set_file_written_again"] = True
        elif found != kept.key.set_id:
            raise SyncError(N_("{folder} now holds another sync set than the one this "
                               "device joined: nothing was written into it. Leave and join "
                               "that set with its code, or start this one again in an empty "
                               "folder"), folder=str(folder))
        seq, device = self_row["seq"], self_row["device"]
        files = layout.numbered_files(folder, device)
        missing = [n for n in range(1, seq + 1) if n not in files]
        if missing and self._own_snapshot_seq(folder, kept, device) < missing[-1]:
            header = {**self._header(kept, self_row, seq), "snapshot": True}
            self._seal_into(layout.snapshot_file(folder, device), kept, header,
                            snapshot(self.store.conn))
            mended["files_written_again"] = len(missing)
            log.warning("sync: %d of this device's files were gone from %s; a snapshot "
                        "stands in for them", len(missing), folder)
        return mended

    def _write_set(self, folder: Path, kept: Secrets) -> None:
        try:
            layout.write_set_id(folder, kept.key.set_id)
        except OSError as error:
            raise SyncError(N_("the folder {folder} cannot be used for sync: {error}"),
                            folder=str(folder), error=error.strerror or str(error)) from None

    @staticmethod
    def _own_snapshot_seq(folder: Path, kept: Secrets, device: str) -> int:
        """The number of this device's snapshot in the folder (0: none of its own)."""
        try:
            header = peek_header(layout.read_head(layout.snapshot_file(folder, device)))
        except (OSError, SealError, layout.FolderError):
            return 0
        own = header.get("pub") == public_key(kept.signing) and header.get("snapshot")
        seq = header.get("seq")
        return seq if own and isinstance(seq, int) and not isinstance(seq, bool) else 0

    @staticmethod
    def _own_clock_at(folder: Path, device: str, seq: int) -> str | None:
        """The clock of this device's file `seq` (its last stamp): what a device that
        applied it had seen of this one's edits; "" for none, None when not known."""
        if seq == 0:
            return ""
        try:
            clock = peek_header(layout.read_head(layout.change_file(folder, device, seq))
                                ).get("clock")
        except (OSError, SealError, layout.FolderError):
            return None
        return clock if isinstance(clock, str) else None

    def _header(self, kept: Secrets, self_row: dict[str, Any], seq: int) -> dict[str, Any]:
        return {"set": kept.key.set_id, "device": self_row["device"], "seq": seq,
                "slot": self_row["slot"], "name": self_row["name"],
                "schema": SYNCED_SCHEMA, "at": round(self.wall(), 3),
                "seen": {row["device"]: row["seq"] for row in
                         self.store.query("SELECT device, seq FROM sync_devices")}}

    def _seal_into(self, path: Path, kept: Secrets, header: dict[str, Any],
                   changes: list[Any]) -> None:
        try:
            layout.write_whole(path, seal(kept.key, header, {"device": header["device"],
                                                             "changes": changes},
                                          kept.signing))
        except OSError as error:
            raise SyncError(N_("the sync folder cannot be written ({error}); the changes "
                               "wait for the next sync"), error=str(error)) from None

    def _tell_seen(self, folder: Path, kept: Secrets, self_row: dict[str, Any]) -> None:
        """Rewrite this device's `seen` file: how far it applied the others' files."""
        header = {**self._header(kept, self_row, self_row["seq"]), "ack": True,
                  "clock_ahead": dict(self._clock_refused)}
        try:
            self._seal_into(layout.seen_file(folder, self_row["device"]), kept, header, [])
        except SyncError as error:  # the next sync says it again
            log.warning("%s", error)

    def _acked(self, folder: Path, kept: Secrets, me_: str) -> int:
        """How far every other device known here applied this device's files: from
        their change files' headers and their `seen` files."""
        acked: dict[str, int] = {row["device"]: row["acked"] for row in self.store.query(
            "SELECT device, acked FROM sync_devices")}
        for device in layout.devices(folder):  # one with nothing written yet
            if device != me_ and layout.seen_file(folder, device).exists():
                acked.setdefault(device, 0)
        for device, known in list(acked.items()):
            path = layout.seen_file(folder, device)
            try:
                header, _changes = self._opened(kept, device, None, path, ack=True)
            except (_Refused, OSError):
                continue
            count = (header.get("seen") or {}).get(me_, 0)
            if isinstance(count, int):
                acked[device] = max(known, count)
        return min(acked.values(), default=0)

    def _prune(self, folder: Path, kept: Secrets, self_row: dict[str, Any]) -> int:
        """Remove this device's files every other device has applied (a hundred at a
        time) and those older than `PRUNE_AGE`, after writing the snapshot that stands in
        for them: the folder does not grow without end. Answers how many went."""
        device, seq = self_row["device"], self_row["seq"]
        files = layout.numbered_files(folder, device)
        acked = self._acked(folder, kept, device)
        old_before = time.time() - self.prune_age
        going = [n for n, path in files.items() if n < seq and (
            n <= acked or _modified(path) < old_before)]
        if not going or (len(going) < PRUNE_BATCH and
                         all(_modified(files[n]) >= old_before for n in going)):
            return 0
        header = {**self._header(kept, self_row, seq), "snapshot": True}
        self._seal_into(layout.snapshot_file(folder, device), kept, header,
                        snapshot(self.store.conn))
        for n in going:
            files[n].unlink(missing_ok=True)
        return len(going)

    # -- applying ------------------------------------------------------------------------

    def apply_all(self) -> dict[str, Any]:
        """Apply every file that arrived and can be applied: each device's in order, a
        file only once every file it had seen is applied here."""
        self_row, kept = self._member(), self._secrets()
        folder = Path(self_row["folder"])
        totals, files, refused = Applied(), 0, []
        self._clock_refused = {}
        progress = True
        while progress:
            progress = False
            for device in layout.devices(folder):
                if device == self_row["device"]:
                    continue
                numbered = layout.numbered_files(folder, device)
                done = self._applied_seq(device)
                if done + 1 not in numbered and self._behind(folder, device, numbered,
                                                             done):
                    try:
                        if self._apply_snapshot(kept, self_row, device, totals):
                            files += 1
                            progress = True
                    except _Refused as refusal:
                        snapshot_path = layout.snapshot_file(folder, device)
                        if all(r["file"] != str(snapshot_path.relative_to(folder))
                               for r in refused):
                            refused.append(self._refuse(folder, snapshot_path, str(refusal)))
                    done = self._applied_seq(device)
                while done + 1 in numbered:
                    path = numbered[done + 1]
                    try:
                        if not self._apply_file(kept, self_row, (device, done + 1, path),
                                                totals):
                            break  # it waits for another device's files
                    except _Refused as refusal:
                        if all(r["file"] != str(path.relative_to(folder)) for r in refused):
                            refused.append(self._refuse(folder, path, str(refusal)))
                        break
                    files += 1
                    done += 1
                    progress = True
        self.store.conn.execute("UPDATE sync_self SET last_sync = ?", (time.time(),))
        self._forget_refusals_of_files_gone(folder)
        if files or self._clock_refused:
            self._tell_seen(folder, kept, self_row)
        return {"applied_files": files, "applied_rows": totals.rows,
                "conflicts": totals.conflicts, "merged": totals.merged,
                "refused": refused, **self._clock_told(folder, kept, self_row)}

    def _forget_refusals_of_files_gone(self, folder: Path) -> None:
        """A refused file its writer took back (written again after its clock was set
        right) is no longer listed."""
        for row in self.store.query("SELECT file FROM sync_refused"):
            if not (folder / row["file"]).exists():
                self.store.conn.execute("DELETE FROM sync_refused WHERE file = ?",
                                        (row["file"],))

    def _clock_told(self, folder: Path, kept: Secrets, self_row: dict[str, Any]
                    ) -> dict[str, Any]:
        """What the other devices said of this device's clock (their `seen` files): how
        far ahead of theirs it was when they refused its files, by their names."""
        told: dict[str, str] = {}
        for device in layout.devices(folder):
            if device == self_row["device"]:
                continue
            try:
                header, _ = self._opened(kept, device, None, layout.seen_file(folder, device),
                                         ack=True)
            except (_Refused, OSError):
                continue
            ahead = (header.get("clock_ahead") or {}).get(self_row["device"])
            if isinstance(ahead, int) and not isinstance(ahead, bool):
                told[str(header.get("name") or device)[:100]] = _duration(ahead)
        if not told:
            return {}
        return {"clock_ahead": told, "clock_words": tr(
            "Other devices refused this device's files: its clock was ahead of theirs "
            "({devices}). Set this computer's date and time right; what changed here is "
            "kept and sent at the next sync after that.",
            devices=", ".join(f"{name}: {ahead}" for name, ahead in sorted(told.items())))}

    def _mend_clock(self, folder: Path, kept: Secrets, self_row: dict[str, Any]
                    ) -> dict[str, Any]:
        """This device's clock was set ahead and is right again: its hybrid clock is
        set back to now, every stamp it made in the future is made again, the files it
        wrote then (which the others refused) are taken back, and a snapshot stands in
        for them, so every change made meanwhile still arrives."""
        now = int(self.wall() * 1000)
        bound = now + MOST_AHEAD_MS
        if millis_of(self_row["clock"]) <= bound:
            return {}
        clock = HybridClock(self_row["device"], None, wall=self.wall)
        conn = self.store.conn
        for table, row_id, clocks, removed in conn.execute(
                "SELECT tbl, row_id, clocks, removed FROM sync_rows").fetchall():
            stamps = json.loads(clocks)
            again = {k: clock.tick() if millis_of(v) > bound else v for k, v in stamps.items()}
            gone = clock.tick() if removed and millis_of(removed) > bound else removed
            if again != stamps or gone != removed:
                keep_clocks(conn, table, row_id, again, gone)
        for from_id, stamp in conn.execute(
                "SELECT from_id, stamp FROM sync_alias WHERE tbl = 'nodes'").fetchall():
            if stamp and millis_of(stamp) > bound:
                conn.execute("UPDATE sync_alias SET stamp = ? WHERE tbl = 'nodes' AND"
                             " from_id = ?", (clock.tick(), from_id))
        taken_back = 0
        for path in layout.numbered_files(folder, self_row["device"]).values():
            try:
                at = peek_header(layout.read_head(path)).get("at")
            except (OSError, SealError, layout.FolderError):
                continue
            if isinstance(at, int | float) and at * 1000 > bound:
                path.unlink(missing_ok=True)
                taken_back += 1
        conn.execute("UPDATE sync_self SET clock = ?", (clock.last,))
        header = {**self._header(kept, self_row, self_row["seq"]), "snapshot": True}
        self._seal_into(layout.snapshot_file(folder, self_row["device"]), kept, header,
                        snapshot(conn))
        log.warning("sync: this device's clock was set ahead; %d files written again",
                    taken_back)
        return {"clock_set_back": True, "files_written_again": taken_back}

    @staticmethod
    def _behind(folder: Path, device: str, numbered: dict[int, Path], done: int) -> bool:
        """The device's next file for this one is gone (pruned, taken back, the folder
        lost) while later ones, or its snapshot of later, are there."""
        if any(n > done + 1 for n in numbered):
            return True
        try:
            seq = peek_header(layout.read_head(layout.snapshot_file(folder, device))).get("seq")
        except (OSError, SealError, layout.FolderError):
            return False
        return isinstance(seq, int) and seq > done

    def _apply_snapshot(self, kept: Secrets, self_row: dict[str, Any], device: str,
                        totals: Applied) -> bool:
        """Apply the device's snapshot in place of the files it removed; every device's
        files it covers count as applied. A backup first."""
        folder = Path(self_row["folder"])
        path = layout.snapshot_file(folder, device)
        if not path.exists():
            return False
        header, changes = self._opened(kept, device, None, path)
        if not header.get("snapshot") or not isinstance(header.get("seq"), int) or \
                header["seq"] <= self._applied_seq(device):
            return False
        backups.make_backup(self.store.conn, backups.backup_folder(self.store.path))
        # Only the device's own files count as applied: what a snapshot claims of the
        # others' (a forged "seen 1,000,000 of A's") never makes this device skip a file
        # of theirs that is there; applying one twice changes nothing.
        self._apply_changes(self_row, _File(device, None, path, header, changes), totals)
        return True

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

    def _opened(self, kept: Secrets, device: str, seq: int | None, path: Path,
                ack: bool = False) -> tuple[dict[str, Any], list[Any]]:
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
        if (seq is not None and header.get("seq") != seq) or \
                header.get("set") != kept.key.set_id or (seq is None) != bool(
                    header.get("snapshot") or header.get("ack")) or \
                bool(header.get("ack")) != ack:
            raise _Refused(tr("the file's number or set is not its name's (a copy of "
                              "another file)"))
        if not isinstance(header.get("schema"), int) or header["schema"] > SYNCED_SCHEMA:
            raise _Refused(tr("written by a newer TrulyMEM: update TrulyMEM on this "
                              "device"))
        changes = payload.get("changes")  # read as they are applied (see `sealed`)
        if not isinstance(changes, list | Iterator) or \
                not isinstance(header.get("seen", {}), dict):
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
        self._apply_changes(self_row, _File(device, seq, path, header, changes), totals)
        return True

    def _apply_changes(self, self_row: dict[str, Any], file: _File, totals: Applied) -> None:
        """One file's changes in one transaction, with the device's place in its files
        (`seq`; a snapshot's: its own number) and its key."""
        device, header, changes, path, seq = (file.device, file.header, file.changes,
                                              file.path, file.seq)
        store = self.store
        clock = HybridClock(self_row["device"], me(store)["clock"], wall=self.wall)
        mine = (header.get("seen") or {}).get(self_row["device"], 0)
        try:
            with store.transaction():
                store.conn.execute("PRAGMA defer_foreign_keys = ON")
                seen = Seen(self_row["device"], self._own_clock_at(
                    Path(self_row["folder"]), self_row["device"], _whole(mine)))
                applied = apply_changes(store.conn, clock, device, changes, self.wall(),
                                        seen=seen)
                applied.conflicts += slots.settle(store, applied.edges, self.wall())
                store.conn.execute(
                    "INSERT INTO sync_devices(device, name, seq, last_seen, public_key,"
                    " acked) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (device) DO UPDATE SET"
                    " name = excluded.name, seq = max(seq, excluded.seq),"
                    " last_seen = excluded.last_seen, public_key = excluded.public_key,"
                    " acked = max(acked, excluded.acked)",
                    (device, str(header.get("name") or "")[:100],
                     header["seq"] if seq is None else seq, time.time(), header.get("pub"),
                     _whole(mine)))
                store.conn.execute("UPDATE sync_self SET clock = ?", (clock.last,))
                store.conn.execute("DELETE FROM sync_refused WHERE file = ?",
                                   (str(path.relative_to(self_row["folder"])),))
        except ClockAhead as ahead:
            self._clock_refused[device] = ahead.ahead_ms
            raise _Refused(tr("written by a device whose clock is {ahead} ahead of this "
                              "one's: nothing of it is applied until its clock is set right "
                              "(its changes are kept on it, and sent again then)",
                              ahead=_duration(ahead.ahead_ms))) from None
        except SealError as error:  # found damaged while read
            raise _Refused(error.said()) from None
        except (ValueError, TypeError, KeyError, AttributeError, sqlite3.Error) as error:
            raise _Refused(tr("its changes cannot be applied: {error}",
                              error=str(error)[:300])) from None
        totals.rows += applied.rows
        totals.conflicts += applied.conflicts
        totals.merged += applied.merged

    def sync_now(self) -> dict[str, Any]:
        """Write this device's changes, then apply the others'."""
        return {**self.write(), **self.apply_all()}


def default_name(device: str) -> str:
    """A device's name when the person gives none: the computer's, and four letters of
    its id, so two laptops both called "vm" are told apart ("vm · 3fa2")."""
    return f"{socket.gethostname() or 'device'} · {device[:4]}"


def _duration(millis: int) -> str:
    """A clock's lead in words a person reads at a glance: "3 hours", "10 years"."""
    seconds = millis / 1000
    for size, unit in ((365 * 86400, N_("{n} years")), (86400, N_("{n} days")),
                       (3600, N_("{n} hours")), (60, N_("{n} minutes"))):
        if seconds >= size:
            return tr(unit, n=round(seconds / size))
    return tr("{n} seconds", n=round(seconds))


def _modified(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return time.time()


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
