"""One window per memory: the first `trulymem` on a data folder takes its lock and listens
for the wishes (show, toggle, ask) of those started after it (`app.desktop.summon` sends them), so
two backends never write the same store."""

from __future__ import annotations

import contextlib
import json
import os
import socket
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from app.desktop.summon import LOCK_NAME, WISHES, WindowLock, peer_is_me, socket_path
from core.i18n import tr

MOST_BYTES = 256 * 1024  # a wish is small; a bigger one is not from TrulyMEM


class SingleInstance(QObject):
    """The first window's side: holds the lock, listens, and turns each wish that arrives
    into `wished`."""

    wished = Signal(dict)

    def __init__(self, home: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.home = home
        self.path = socket_path(home)
        self.lock = WindowLock(home / LOCK_NAME)
        self.server = QLocalServer(self)
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self.server.newConnection.connect(self._connected)
        self.error = ""

    def claim(self) -> bool:
        """True when this process is the window for `home` (and now listens); False when
        another one holds it."""
        if not self.lock.take():
            return False
        if not self.path:
            self.error = tr("no folder of this user's own to listen in: the window "
                            "cannot be summoned by trulymem --toggle or --ask")
            return True
        QLocalServer.removeServer(self.path)  # a socket file left by a crash
        if not self.server.listen(self.path):
            # still the only window: it just cannot be summoned (say why, go on)
            self.error = self.server.errorString()
        return True

    def close(self) -> None:
        self.server.close()
        self.lock.release()

    def _connected(self) -> None:
        while self.server.hasPendingConnections():
            connection = self.server.nextPendingConnection()
            connection.setParent(self)
            connection.readyRead.connect(lambda c=connection: self._read(c))
            connection.disconnected.connect(connection.deleteLater)

    @staticmethod
    def _from_this_user(connection: QLocalSocket) -> bool:
        """Only this user's own processes may summon the window or ask it anything."""
        if not hasattr(socket, "AF_UNIX"):  # Windows: a named pipe is the user's own
            return True
        descriptor = int(connection.socketDescriptor())
        if descriptor < 0:
            return False
        peer = socket.socket(fileno=os.dup(descriptor))
        try:
            return peer_is_me(peer)
        except OSError:
            return False
        finally:
            peer.close()

    def _read(self, connection: QLocalSocket) -> None:
        if not self._from_this_user(connection):
            connection.abort()
            return
        if connection.bytesAvailable() > MOST_BYTES:
            connection.abort()
            return
        if not connection.canReadLine():
            return
        line = bytes(connection.readLine())
        message = None
        with contextlib.suppress(ValueError):
            message = json.loads(line.decode("utf-8"))
        good = isinstance(message, dict) and message.get("action") in WISHES and \
            isinstance(message.get("text", ""), str)
        connection.write(b"ok\n" if good else b"no\n")
        connection.flush()
        connection.disconnectFromServer()
        if good:
            self.wished.emit(message)
