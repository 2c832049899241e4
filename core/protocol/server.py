"""BackendServer: hosts the backend and its dispatcher on one worker thread fed by a
queue (headless use).

A caller told "failed" can trust it. A packet's timeout (30 s by default; a turn's time
limit plus a grace for a turn; none for the other long work, an import or an undo, which
the caller can CANCEL) either finds it still queued, and then it never runs, or finds it
running, and then it is stopped and its own answer awaited: "stopped, nothing changed",
or its result if it finished first. Reads are answered on the read lane while long work
runs (see `core.protocol.read_lane`).
"""

from __future__ import annotations

import queue
import threading
from pathlib import Path
from typing import Any

from core.backend.backend import Backend, Progress
from core.errors import ErrorCode
from core.i18n import tr
from core.paths import config_path, data_home, database_path
from core.protocol.dispatcher import Dispatcher
from core.protocol.handlers.table import runs_long
from core.protocol.packets import Packet, PacketResponse, PacketType
from core.protocol.read_lane import ReadLane, overtakes

DEFAULT_TIMEOUT = 30.0
TURN_GRACE = 10.0  # seconds beyond the turn time limit before the caller stops waiting
# How long a stopped packet may take to stop: an import stops within a SQLite progress
# step, a turn at its next chunk; an undo cannot stop and is waited for this long.
STOP_GRACE = 120.0
# How often an idle worker looks for other programs' writes (one PRAGMA when there are
# none): their memory_changed events reach headless clients as they reach the window.
OUTSIDE_CHANGES_EVERY = 0.5


class BackendServer:
    """The seed's API: `start()`, `send(packet)`, `shutdown()`; packets answered in order."""

    def __init__(self, db_path: str | Path | None = None, use_embedded_db: bool = True,
                 config_file: str | Path | None = None, home: str | Path | None = None,
                 progress: Progress | None = None) -> None:
        folder = data_home(home)
        self.backend = Backend(Path(db_path) if db_path else database_path(folder),
                               Path(config_file) if config_file else config_path(folder),
                               use_embedded_db, home=None if db_path and config_file else folder)
        self.dispatcher = Dispatcher(self.backend)
        self.progress = progress
        if progress is not None:
            self.backend.events = progress  # the indexer's progress, from its thread
        self._queue: queue.Queue[Packet | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._started = threading.Event()
        self._lock = threading.Lock()
        # Which packet the worker is on, and which queued ones their callers gave up on:
        # a timeout stops its own packet only, and a packet given up on never runs later.
        self._packets_lock = threading.Lock()
        self._current: str | None = None
        self._abandoned: set[str] = set()
        self._ahead: dict[str, Packet] = {}  # sent to the worker, not answered, in order
        self._between = threading.Event()  # the worker is on the work between packets
        self.reads = ReadLane(self.dispatcher)

    @property
    def unanswered(self) -> int:
        """Packets sent to the worker and not yet answered (the read lane's not counted)."""
        with self._packets_lock:
            return len(self._ahead)

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
        self.backend.open(api_key, base_url, model)  # the store is made on this thread
        self._started.set()
        while True:
            try:
                # background work (building the memory from imported conversations) runs
                # a piece at a time while no packet waits
                packet = self._queue.get(block=self.backend.work.builder is None,
                                         timeout=OUTSIDE_CHANGES_EVERY)
            except queue.Empty:
                self.backend.notice_outside_changes()
                self.backend.background_step()
                continue
            if packet is None:
                break
            with self._packets_lock:
                if packet.id in self._abandoned:
                    self._abandoned.discard(packet.id)
                    continue
                self._current = packet.id
                self.backend.reset_cancel()
            response = self.dispatcher.handle(packet, self.progress or _quiet)
            with self._packets_lock:
                self._current = None
                self._ahead.pop(packet.id, None)
                self._between.set()  # reads asked from now on need not wait for it
            if packet.response_queue is not None:
                packet.response_queue.put(response)
            if packet.type is PacketType.SHUTDOWN:
                break
            self.backend.between_packets(packet.type.value)
            self._between.clear()
        self.reads.stop()
        self.backend.close()

    def default_timeout(self, packet_type: PacketType) -> float | None:
        """How long `send` waits when the caller names no timeout (see the docstring)."""
        if packet_type is PacketType.PROCESS_MESSAGE:
            # The dispatcher stops a turn at its time limit and answers with what arrived;
            # waiting a little longer lets that answer, not a bare "timeout", come back.
            return self.backend.config.turn_timeout + TURN_GRACE
        return None if runs_long(packet_type) else DEFAULT_TIMEOUT

    def send(self, packet: Packet, timeout: float | None = None) -> PacketResponse:
        """Queue `packet` (or hand a read to the read lane) and wait for its answer; see
        the module docstring for what a timeout does."""
        if packet.type is PacketType.CANCEL:  # must not wait behind the turn it cancels
            self.backend.cancel()
            return PacketResponse.ok(packet.id, {"status": "cancelled"})
        if not self.running:
            return PacketResponse.fail(packet.id, tr("the backend is not running"),
                                       ErrorCode.NOT_RUNNING)
        if packet.response_queue is None:
            packet.response_queue = queue.Queue()
        if timeout is None:
            timeout = self.default_timeout(packet.type)
        with self._packets_lock:
            to_lane = overtakes(packet, list(self._ahead.values()), self._between.is_set())
            if not to_lane:
                self._ahead[packet.id] = packet
                self._queue.put(packet)
        if to_lane:
            self.reads.submit(packet, packet.response_queue.put)
        try:
            return packet.response_queue.get(timeout=timeout)
        except queue.Empty:
            return self._timed_out(packet, timeout, to_lane)

    def _timed_out(self, packet: Packet, waited: float, on_lane: bool) -> PacketResponse:
        """A queued packet is given up (it never runs); a running one is stopped and
        its own answer awaited, so the answer says what happened."""
        with self._packets_lock:
            queued = not on_lane and self._current != packet.id and packet.id in self._ahead
            if queued:
                self._abandoned.add(packet.id)
                self._ahead.pop(packet.id, None)
                return PacketResponse.fail(
                    packet.id, tr("timeout: it waited {seconds} s behind other work and was"
                                  " not run", seconds=round(waited, 1)), ErrorCode.TIMEOUT)
            if not on_lane and self._current == packet.id:
                self.backend.cancel()
        try:
            answer = packet.response_queue.get(timeout=STOP_GRACE)
        except queue.Empty:
            return PacketResponse.fail(
                packet.id, tr("timeout: still running after {seconds} s and it could not be"
                              " stopped yet; it may still finish",
                              seconds=round(waited + STOP_GRACE)),
                ErrorCode.TIMEOUT, data={"still_running": True})
        if answer.success or answer.code != ErrorCode.CANCELLED:
            return answer  # it finished, or failed on its own, before it could stop
        return PacketResponse.fail(packet.id, tr("timeout: stopped after {seconds} s",
                                                 seconds=round(waited, 1)),
                                   ErrorCode.TIMEOUT, {"stopped": True}, answer.data)

    def shutdown(self, timeout: float = 10.0) -> dict[str, Any]:
        """Stop a running turn, then the worker; waits for the thread to end."""
        thread = self._thread
        if thread is None or not thread.is_alive():
            return {"success": True, "data": {"status": "shutdown"}}
        self.backend.cancel()
        self._queue.put(None)
        thread.join(timeout)
        return {"success": not thread.is_alive(), "data": {"status": "shutdown"},
                "error": None if not thread.is_alive() else "the backend did not stop in time"}


def _quiet(_event: str, _data: dict[str, Any]) -> None:
    return None
