"""The read lane: answers reads while the backend's one worker is busy with long work.

The worker runs packets one at a time, so during an import of a million nodes, a long undo
or a turn, a status probe or the Memory tab's list would wait minutes behind it. SQLite in
WAL mode lets a second connection read the last committed state while a writer works, so
the lane keeps its own read-only connection on its own thread and answers the packets the
handler table marks `reads`. A host sends a read here only when every packet ahead of it
on the worker is `long_running`, or a backup runs (`overtakes`): a read never overtakes
a short write the caller sent before it, and what it cannot see yet is the running work's
own unfinished change, which the change event announces when it commits.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from core.backend.announcer import memory_state
from core.errors import ErrorCode
from core.i18n import N_
from core.protocol.handlers.table import Refusal, reads_memory, runs_long
from core.protocol.packets import Packet, PacketResponse
from core.store import GraphStore, conversations
from core.store.counts import memory_counts
from core.store.history import History

if TYPE_CHECKING:
    from core.backend import Backend
    from core.protocol.dispatcher import Dispatcher

Deliver = Callable[[PacketResponse], None]
READER = N_("this connection only reads")


def overtakes(packet: Packet, ahead: Collection[Packet], between: bool) -> bool:
    """True when the read lane should answer `packet`: it reads, and the worker is on long
    work (`ahead`: the packets sent to the worker and not yet answered, in order;
    `between`: the worker said it is on the work between packets, see
    `core.backend.work`)."""
    if not reads_memory(packet.type, packet.body) or not (ahead or between):
        return False
    return all(runs_long(waiting.type) for waiting in ahead)


class Reader:
    """What a read handler sees as its backend on the lane: the backend's settings and
    state, with the lane's own store in place of the worker's."""

    def __init__(self, backend: Backend) -> None:
        self._backend = backend
        self._store: GraphStore | None = None
        self._generation = -1

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)  # config, limiter, status(), db_path…

    def need_store(self) -> GraphStore:
        backend = self._backend
        backend.need_store()  # the worker's refusal when no memory is open
        if self._store is None or self._generation != backend.store_generation:
            self.close()  # a restore or a reopening put another file in its place
            self._store = GraphStore(backend.db_path, read_only=READER)
            self._generation = backend.store_generation
        # recall by meaning as on the worker (its searches run on their own thread)
        self._store.meaning = getattr(backend, "meaning", None)
        self._store.trash_days = backend.config.trash_days
        return self._store

    def history(self) -> History:
        """The shown conversation, as the worker would pick it, without making one."""
        store = self.need_store()
        chosen = self._backend.conversation_id
        if chosen is None:
            chosen = conversations.latest(store)
        if chosen is None:
            raise Refusal(N_("no conversation yet: ask again when the running work ends"),
                          ErrorCode.STORE)
        return History(store, chosen)

    def memory_state(self) -> dict[str, Any]:
        """The worker's counts as of the last commit when it has them (counting a million
        rows afresh takes a quarter of a second), else counted here."""
        store = self.need_store()
        announcer = self._backend.announcer
        counts = (announcer.known_counts() if announcer is not None else None) \
            or memory_counts(store.conn)
        return memory_state(store, counts)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None


class ReadLane:
    """One thread, one read-only connection, packets answered in the order they came."""

    def __init__(self, dispatcher: Dispatcher) -> None:
        self.dispatcher = dispatcher
        self._queue: queue.Queue[tuple[Packet, Deliver] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def submit(self, packet: Packet, deliver: Deliver) -> None:
        """Answer `packet` on the lane; `deliver(response)` runs on the lane's thread."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="trulymem-reads",
                                                daemon=True)
                self._thread.start()
        self._queue.put((packet, deliver))

    def _serve(self) -> None:
        reader = Reader(self.dispatcher.backend)
        try:
            while (item := self._queue.get()) is not None:
                packet, deliver = item
                deliver(self.dispatcher.handle(packet, reader=reader))
        finally:
            reader.close()

    def stop(self, timeout: float = 10.0) -> None:
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(None)
            thread.join(timeout)
