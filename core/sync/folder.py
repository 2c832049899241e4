"""The sync folder's layout: one file naming the set, and one folder per device holding
its numbered change files. A device only ever writes into its own folder, and writes each
file whole under a temporary name first, so a syncing engine never carries half a file."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
from pathlib import Path

from core.errors import CodedError, ErrorCode
from core.i18n import N_

SET_FILE = "trulymem-sync.json"
SUFFIX = ".tmsync"
MAX_FILE = 256 << 20  # bytes: a larger file is refused before it is read
_NUMBERED = re.compile(r"^(\d{10})\.tmsync$")
_DEVICE = re.compile(r"^[0-9a-f]{16}$")


class FolderError(CodedError):
    code = ErrorCode.INVALID


SET_FILE_MOST = 64 << 10  # bytes: the set file is a line of JSON


def read_set_id(folder: Path) -> str | None:
    try:
        data = json.loads(read_regular(folder / SET_FILE, SET_FILE_MOST).decode("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, FolderError) as error:
        raise FolderError(N_("the sync folder's {file} cannot be read: {error}"),
                          file=SET_FILE, error=str(error)) from None
    return data.get("set") if isinstance(data, dict) else None


def write_set_id(folder: Path, set_id: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    write_whole(folder / SET_FILE, json.dumps({"set": set_id, "format": 1}).encode())


def write_whole(path: Path, data: bytes) -> None:
    """Write `data` under a temporary name, flush it to disk, then rename it in place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    with contextlib.suppress(FileNotFoundError):
        partial.unlink()  # whatever lies there (a link, a pipe someone made) is not opened
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                         | os.O_CLOEXEC, 0o600)
    with os.fdopen(descriptor, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    os.replace(partial, path)


def change_file(folder: Path, device: str, seq: int) -> Path:
    return folder / device / f"{seq:010d}{SUFFIX}"


SNAPSHOT = "snapshot.tmsync"


def snapshot_file(folder: Path, device: str) -> Path:
    """The device's whole memory as of one of its files, for a device that missed files
    the device has since removed (a device back after months, one that joins later)."""
    return folder / device / SNAPSHOT


SEEN = "seen.tmsync"


def seen_file(folder: Path, device: str) -> Path:
    """How far the device applied each other device's files: a sealed header that it
    rewrites after applying, so a device with nothing to send still tells the others
    which of their files it no longer needs."""
    return folder / device / SEEN


def remove_partials(folder: Path, device: str) -> None:
    """Half-written files a stopped write left in this device's folder."""
    for path in (folder / device).glob(".*.partial"):
        path.unlink(missing_ok=True)


def devices(folder: Path) -> list[str]:
    """The device folders present (other names, a syncing engine's own, are left alone)."""
    try:
        return sorted(p.name for p in folder.iterdir()
                      if _DEVICE.match(p.name) and stat.S_ISDIR(p.lstat().st_mode))
    except OSError:
        return []


def numbered_files(folder: Path, device: str) -> dict[int, Path]:
    try:
        entries = list((folder / device).iterdir())
    except OSError:
        return {}
    found = {}
    for path in entries:
        match = _NUMBERED.match(path.name)
        if match:
            found[int(match.group(1))] = path
    return found


def read_file(path: Path) -> bytes:
    """A change file's bytes; FolderError when it is too large to be one, or not a file."""
    return read_regular(path, MAX_FILE)


HEAD = (64 << 10) + 64  # bytes: a file's magic, header length and header fit in these


def read_head(path: Path) -> bytes:
    """The first bytes of a file, where its header is (the rest may be megabytes)."""
    return read_regular(path, MAX_FILE, upto=HEAD)


def read_regular(path: Path, most: int, upto: int | None = None) -> bytes:
    """The bytes of the regular file at `path`, at most `most` of them: anyone with the
    folder can put a pipe, a link to /dev/zero or a device there under a file's name, and
    none is followed, waited on or read past `most` (FolderError says what it was)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise FolderError(N_("{name} is a link, not a file: it is not followed"),
                              name=path.name) from None
        raise
    info = os.fstat(descriptor)
    if not stat.S_ISREG(info.st_mode):
        os.close(descriptor)
        raise FolderError(N_("{name} is not a regular file (a pipe, a device or a "
                             "folder): it is not read"), name=path.name)
    with os.fdopen(descriptor, "rb") as source:
        if info.st_size > most:
            raise FolderError(N_("the file is {size} MB, larger than a change file can be "
                                 "({most} MB)"), size=info.st_size >> 20, most=most >> 20)
        # (read(n) sets n bytes aside first: never more than the file holds)
        data = source.read(min(most, info.st_size) + 1 if upto is None else upto)
    if len(data) > most:  # it grew while read
        raise FolderError(N_("the file is {size} MB, larger than a change file can be "
                             "({most} MB)"), size=len(data) >> 20, most=most >> 20)
    return data
