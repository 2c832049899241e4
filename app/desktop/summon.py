"""Reaching the window already running on a data folder, without Qt: `trulymem`,
`trulymem --toggle` and `trulymem --ask TEXT` try this first, so a key bound to them
answers in milliseconds and a second window never opens on the same memory.

Who is the window is decided by a lock file in the data folder, which the kernel releases
when its holder dies, so a crash leaves no false "already running". The window listens on a
socket named after the folder (`app.desktop.single_instance`); the others send one JSON line to it
and read "ok" back."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import stat
import struct
import tempfile
import time
from pathlib import Path
from typing import Any

LOCK_NAME = ".window.lock"
WISHES = ("show", "toggle", "ask")


def socket_path(home: Path) -> str:
    """Where the running window listens for `home`: in a folder only this user can write
    (the desktop's runtime folder, else one of its own in the temporary folder), so no
    other local user can make the socket first and read what `--ask` sends. "" when no
    such folder can be had: the window is then not summoned, and nothing is sent."""
    folder = private_folder()
    if not folder:
        return ""
    digest = hashlib.sha256(str(home.resolve()).encode("utf-8")).hexdigest()[:16]
    return os.path.join(folder, f"trulymem-{digest}.sock")


def _only_mine(path: str) -> bool:
    """`path` is a real folder (not a link) of this user's that no one else may write."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == _uid() and \
        not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _uid() -> int:
    return os.getuid() if hasattr(os, "getuid") else 0


def private_folder() -> str:
    """$XDG_RUNTIME_DIR when it is this user's, else tmp/trulymem-UID made 0700 and
    checked to be this user's ("" when someone else made it first)."""
    if not hasattr(os, "getuid"):  # Windows: Qt's named pipes are per user already
        return tempfile.gettempdir()
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and _only_mine(runtime):
        return runtime
    folder = os.path.join(tempfile.gettempdir(), f"trulymem-{_uid()}")
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder, 0o700)
    return folder if _only_mine(folder) else ""


def peer_is_me(connection: socket.socket) -> bool:
    """The process at the other end of a local socket runs as this user (Linux's
    SO_PEERCRED; elsewhere the folder's rights are the guard)."""
    if not hasattr(socket, "SO_PEERCRED"):
        return True
    credentials = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                        struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", credentials)
    return uid == _uid()


def wish(action: str, text: str = "") -> dict[str, Any]:
    return {"action": action, "text": text}


def send(home: Path, message: dict[str, Any], wait: float = 0.0) -> bool:
    """Hand `message` to the window running on `home`; False when none answers (within
    `wait` seconds, for a window that is still starting)."""
    deadline = time.monotonic() + wait
    while True:
        if _send_once(socket_path(home), message):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)


def _send_once(path: str, message: dict[str, Any]) -> bool:
    if not path:
        return False
    line = (json.dumps(message, ensure_ascii=False) + "\n").encode("utf-8")
    if not hasattr(socket, "AF_UNIX"):
        return _send_with_qt(path, line)
    try:
        if os.lstat(path).st_uid != _uid():
            return False  # someone else's socket: never told what the person typed
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(5)
            connection.connect(path)
            if not peer_is_me(connection):
                return False
            connection.sendall(line)
            return connection.makefile("rb").readline().strip() == b"ok"
    except OSError:
        return False


def _send_with_qt(name: str, line: bytes) -> bool:
    """Where Qt's local sockets are not Unix sockets (named pipes on Windows)."""
    from PySide6.QtNetwork import QLocalSocket  # noqa: PLC0415  (only where needed)

    connection = QLocalSocket()
    connection.connectToServer(name)
    if not connection.waitForConnected(2000):
        return False
    connection.write(line)
    connection.waitForBytesWritten(2000)
    answered = connection.waitForReadyRead(5000) and \
        bytes(connection.readLine()).strip() == b"ok"
    connection.disconnectFromServer()
    return answered


class WindowLock:
    """An exclusive lock on a file, released by the kernel when the process ends."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.handle: Any = None

    def take(self) -> bool:
        handle = open(self.path, "a+b")  # noqa: SIM115  (held for the life of the window)
        try:
            if os.name == "nt":
                import msvcrt  # noqa: PLC0415  (Windows only)

                msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
            else:
                import fcntl  # noqa: PLC0415  (POSIX only)

                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            return False
        self.handle = handle
        return True

    def release(self) -> None:
        if self.handle is not None:
            self.handle.close()
            self.handle = None
