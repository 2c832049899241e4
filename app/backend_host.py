"""Hosts the core backend on a QThread so the window never waits on SQLite or the network.

The worker owns the backend (the store, the LLM client) and its dispatcher, and lives on
its own thread; the window talks to it only through queued signals carrying `Packet`s and
`PacketResponse`s, and learns when the worker is on the work between packets from its
`between` signal. `cancel()` is the one call made across threads directly: the backend
documents it as thread-safe, and it must not wait behind the turn it stops.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import shiboken6
from PySide6.QtCore import QObject, Qt, QThread, QTimer, Signal, Slot
from PySide6.QtWidgets import QMessageBox, QWidget

from core.backend import Backend
from core.errors import ErrorCode
from core.events import Event
from core.i18n import tr
from core.paths import config_path, database_path
from core.protocol.dispatcher import Dispatcher
from core.protocol.packets import Packet, PacketResponse, PacketType
from core.protocol.read_lane import ReadLane, overtakes

Answer = Callable[[dict[str, Any]], None]
# How often the backend looks for changes other programs (MCP servers) made to the memory:
# the window shows them within a second, at the cost of one PRAGMA per look.
OUTSIDE_CHANGES_MS = 250


def _owner_gone(callback: Answer) -> bool:
    """A widget's method whose widget was closed and deleted before its answer came (a
    dialog asks, the person closes it): nobody is there to show the answer to."""
    owner = getattr(callback, "__self__", None)
    return isinstance(owner, QObject) and not shiboken6.isValid(owner)


def shown_or_warned(parent: QWidget, title: str, show: Callable[[Any], None]) -> Answer:
    """An answer callback for a command that opens something: `show(data)` when the
    backend served it, else a warning titled `title` with the backend's words."""
    def answered(answer: dict[str, Any]) -> None:
        if answer["success"]:
            show(answer["data"])
        else:
            QMessageBox.warning(parent, title, answer["error"])
    return answered


class BackendWorker(QObject):
    """Lives on the backend thread; every slot runs there."""

    answered = Signal(object)  # PacketResponse
    progress = Signal(str, object)  # event name, event data
    ready = Signal(object)  # GET_STATUS data, once the store and config are open
    between = Signal(bool)  # on the work between packets (True), or done with it

    def __init__(self, dispatcher: Dispatcher) -> None:
        super().__init__()
        self.dispatcher = dispatcher
        self.backend: Backend = dispatcher.backend
        # The indexer reports from its own thread; a signal carries it to the window.
        self.backend.events = self._report
        # Made on the GUI thread with the worker as parent, it moves to the backend thread
        # with the worker and fires there, between packets. (Making Qt objects on a thread
        # that is just starting, while the GUI thread makes its own, is what PySide's lazy
        # type set-up handles worst.)
        self._outside_timer = QTimer(self)
        self._outside_timer.setInterval(OUTSIDE_CHANGES_MS)
        self._outside_timer.timeout.connect(self.backend.notice_outside_changes)
        # Background work (building the memory from imported conversations) runs a piece
        # per shot, when the event loop has no packet waiting.
        self._background = QTimer(self)
        self._background.setSingleShot(True)
        self._background.setInterval(0)
        self._background.timeout.connect(self._background_step)

    @Slot()
    def open(self) -> None:
        self.backend.open()
        self._outside_timer.start()
        self.ready.emit(self.dispatcher.handle(Packet.make(PacketType.GET_STATUS)).data)
        self._keep_working()

    @Slot(object)
    def handle(self, packet: Packet) -> None:
        self.backend.reset_cancel()
        response = self.dispatcher.handle(packet, self._report)
        # told before the answer, so the reads its callback asks for overtake the work
        self.between.emit(True)
        self.answered.emit(response)
        self.backend.between_packets(packet.type.value)
        self.between.emit(False)
        self._keep_working()

    def _keep_working(self) -> None:
        if self.backend.work.builder is not None and not self._background.isActive():
            self._background.start()

    @Slot()
    def _background_step(self) -> None:
        if self.backend.background_step():
            self._background.start()

    def _report(self, event: str, data: dict[str, Any]) -> None:
        self.progress.emit(event, data)

    @Slot()
    def stop(self) -> None:
        """Queued after every packet sent before it, so nothing is cut off half-done."""
        self._outside_timer.stop()
        self._background.stop()
        self.backend.close()
        self.thread().quit()


# One signal per declared event, named after it (`events.memory_changed`, `events.text`),
# each carrying the event's payload: a view connects to the events it shows.
HostEvents = type("HostEvents", (QObject,), {
    "__doc__": "The backend's events as typed signals, one per `core.events.Event`.",
    **{event.name.lower(): Signal(object) for event in Event}})


class BackendHost(QObject):
    """The window's handle on the backend: `send()` a packet, get the answer in a callback
    on the GUI thread; events arrive as `events.<name>` signals (and all of them through
    `progress`, as name and payload)."""

    request = Signal(object)  # Packet, to the worker
    lane_answered = Signal(object)  # PacketResponse, from the read lane's thread
    progress = Signal(str, object)
    ready = Signal(object)
    _stop = Signal()
    # every host made, so tests can check that none is left running
    live: ClassVar[weakref.WeakSet[BackendHost]] = weakref.WeakSet()

    def __init__(self, home: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.backend = Backend(database_path(home), config_path(home), home=home,
                               can_ask_person=True)
        self.dispatcher = Dispatcher(self.backend)
        self.thread = QThread()
        self.thread.setObjectName("trulymem-backend")
        self.worker = BackendWorker(self.dispatcher)
        self.worker.moveToThread(self.thread)
        self.request.connect(self.worker.handle)
        self._stop.connect(self.worker.stop)
        self.thread.started.connect(self.worker.open)
        self.worker.answered.connect(self._deliver)
        self.worker.progress.connect(self.progress)
        self.events = HostEvents(self)
        self.progress.connect(self._tell)
        self.worker.ready.connect(self.ready)
        self._between = False  # the worker is on the work between packets
        self.worker.between.connect(self._worker_between)
        self._waiting: dict[str, Answer | None] = {}
        self._ahead: dict[str, Packet] = {}  # sent to the worker, not yet answered
        # Reads asked while the worker is on long work (an import, an undo, a turn) are
        # answered on their own connection and thread (core.protocol.read_lane).
        self.reads = ReadLane(self.dispatcher)
        self.lane_answered.connect(self._deliver, Qt.ConnectionType.QueuedConnection)
        self._stopping = False
        BackendHost.live.add(self)

    def start(self) -> None:
        self.thread.start()

    def _tell(self, event: str, data: dict[str, Any]) -> None:
        getattr(self.events, Event(event).name.lower()).emit(data)

    @property
    def busy(self) -> bool:
        """True while any packet is still unanswered."""
        return bool(self._waiting)

    def send(self, type_: PacketType, body: dict[str, Any] | None = None,
             on_answer: Answer | None = None) -> str:
        """Queue a packet; `on_answer(answer)` runs on the GUI thread with the answer dict."""
        packet = Packet.make(type_, body)
        # Before start() the packet waits in the queue for the thread's event loop (the
        # window asks for the Memory tab's list while it is being built); after the
        # thread ended nothing will answer.
        if self.thread.isFinished() or (self._stopping and not self.thread.isRunning()):
            if on_answer is not None:
                on_answer(PacketResponse.fail(packet.id, tr("the backend is not running"),
                                              ErrorCode.NOT_RUNNING).body)
            return packet.id
        self._waiting[packet.id] = on_answer
        if overtakes(packet, list(self._ahead.values()), self._between):
            self.reads.submit(packet, self.lane_answered.emit)
        else:
            self._ahead[packet.id] = packet
            self.request.emit(packet)
        return packet.id

    @Slot(bool)
    def _worker_between(self, between: bool) -> None:
        self._between = between

    @Slot(object)
    def _deliver(self, response: PacketResponse) -> None:
        self._ahead.pop(response.id, None)
        callback = self._waiting.pop(response.id, None)
        if callback is not None and not _owner_gone(callback):
            callback(response.body)

    def cancel(self) -> None:
        """Stop the running turn now (safe from the GUI thread, see the module docstring)."""
        self.backend.cancel()

    def shutdown(self, wait_ms: int = 15000) -> bool:
        """Cancel the turn, close the store and wait for the thread; True when it ended."""
        self._stopping = True
        if not self.thread.isRunning():
            self.reads.stop()
            return True
        self.cancel()
        self._waiting.clear()
        self._ahead.clear()
        self._stop.emit()
        ended = self.thread.wait(wait_ms)
        self.reads.stop()
        return ended
