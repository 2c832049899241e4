"""BackendServer: hosts the dispatcher on one worker thread fed by a queue (headless use)."""

from __future__ import annotations

import queue
import threading
from pathlib import Path
from typing import Any

from core.errors import ErrorCode
from core.i18n import tr
from core.paths import config_path, data_home, database_path
from core.protocol.dispatcher import Dispatcher, Progress
from core.protocol.packets import Packet, PacketResponse, PacketType

DEFAULT_TIMEOUT = 30.0
TURN_GRACE = 10.0  # seconds beyond the turn time limit before the caller stops waiting


class BackendServer:
    """The seed's API: `start()`, `send(packet)`, `shutdown()`; packets answered in order."""

    def __init__(self, db_path: str | Path | None = None, use_embedded_db: bool = True,
                 config_file: str | Path | None = None, home: str | Path | None = None,
                 progress: Progress | None = None) -> None:
        folder = data_home(home)
        self.dispatcher = Dispatcher(Path(db_path) if db_path else database_path(folder),
                                     Path(config_file) if config_file else config_path(folder),
                                     use_embedded_db,
                                     home=None if db_path and config_file else folder)
        self.progress = progress
        if progress is not None:
            self.dispatcher.events = progress  # the indexer's progress, from its thread
        self._queue: queue.Queue[Packet | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._started = threading.Event()
        self._lock = threading.Lock()
        # Which packet the worker is on, and which queued ones their callers gave up on:
        # a timeout stops its own packet only, and a packet given up on never runs later.
        self._packets_lock = threading.Lock()
        self._current: str | None = None
        self._abandoned: set[str] = set()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, api_key: str | None = None, base_url: str | None = None,
              model: str | None = None) -> dict[str, Any]:
        with self._lock:
            if self.running:
                return {"success": True, "data": {"status": "already_running"}}
            self._started.clear()
            self._thread = threading.Thread(target=self._serve, args=(api_key, base_url, model),
                                            name="trulymem-backend", daemon=True)
            self._thread.start()
        self._started.wait()
        return {"success": True, "data": {"status": "started"}}

    def _serve(self, api_key: str | None, base_url: str | None, model: str | None) -> None:
        self.dispatcher.open(api_key, base_url, model)  # the store is made on this thread
        self._started.set()
        while True:
            packet = self._queue.get()
            if packet is None:
                break
            with self._packets_lock:
                if packet.id in self._abandoned:
                    self._abandoned.discard(packet.id)
                    continue
                self._current = packet.id
                self.dispatcher.reset_cancel()
            response = self.dispatcher.handle(packet, self.progress or _quiet)
            with self._packets_lock:
                self._current = None
            if packet.response_queue is not None:
                packet.response_queue.put(response)
            if packet.type is PacketType.SHUTDOWN:
                break
            self.dispatcher.between_packets(packet)
        self.dispatcher.close()

    def send(self, packet: Packet, timeout: float | None = None) -> PacketResponse:
        """Queue `packet` and wait for its answer; a timeout answers `timeout` and stops
        the turn it was waiting for."""
        if packet.type is PacketType.CANCEL:  # must not wait behind the turn it cancels
            self.dispatcher.cancel()
            return PacketResponse.ok(packet.id, {"status": "cancelled"})
        if not self.running:
            return PacketResponse.fail(packet.id, tr("the backend is not running"),
                                       ErrorCode.NOT_RUNNING)
        if packet.response_queue is None:
            packet.response_queue = queue.Queue()
        if timeout is None:
            # The dispatcher stops a turn at its time limit and answers with what arrived;
            # waiting a little longer lets that answer, not a bare "timeout", come back.
            timeout = (self.dispatcher.config.turn_timeout + TURN_GRACE
                       if packet.type is PacketType.PROCESS_MESSAGE else DEFAULT_TIMEOUT)
        self._queue.put(packet)
        try:
            return packet.response_queue.get(timeout=timeout)
        except queue.Empty:
            with self._packets_lock:
                if self._current == packet.id:
                    if packet.type is PacketType.PROCESS_MESSAGE:
                        self.dispatcher.cancel()
                else:
                    self._abandoned.add(packet.id)
            return PacketResponse.fail(packet.id, tr("timeout"), ErrorCode.TIMEOUT)

    def shutdown(self, timeout: float = 10.0) -> dict[str, Any]:
        """Stop a running turn, then the worker; waits for the thread to end."""
        thread = self._thread
        if thread is None or not thread.is_alive():
            return {"success": True, "data": {"status": "shutdown"}}
        self.dispatcher.cancel()
        self._queue.put(None)
        thread.join(timeout)
        return {"success": not thread.is_alive(), "data": {"status": "shutdown"},
                "error": None if not thread.is_alive() else "the backend did not stop in time"}


def _quiet(_event: str, _data: dict[str, Any]) -> None:
    return None
