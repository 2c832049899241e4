"""What a handler may use of the backend, and nothing else.

Handlers read these members and change the backend's state only through its methods
(`show_conversation`, `save_config`, `work.after_answer`…), never by setting its fields;
the read lane's `Reader` offers the same members over its own read-only connection.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from core.backend.settings import Settings
    from core.backend.work import Work
    from core.config import Config
    from core.models.fetcher import Fetcher
    from core.models.runtime_build import RuntimeBuilder
    from core.store import GraphStore
    from core.store.history import History
    from core.sync.schedule import SyncSchedule
    from core.tools.limits import ToolLimiter
    from core.turn.llm import ChatSession

Sink = Callable[[str, dict[str, Any]], None]


class HandlerBackend(Protocol):
    # the memory and the conversation shown
    store: GraphStore | None
    db_path: Path
    folder: Path  # the data folder: config, sync and share settings live there
    conversation_id: int | None

    def need_store(self) -> GraphStore: ...
    def history(self) -> History: ...
    def show_conversation(self, conversation_id: int | None) -> None: ...
    def memory_state(self) -> dict[str, Any]: ...
    def open_store(self) -> None: ...
    def close_store(self) -> None: ...
    def ids_moved(self) -> None: ...

    # the settings and the model
    settings: Settings
    session: ChatSession | None
    limiter: ToolLimiter
    models: dict[tuple[str, str], list[str]]
    can_ask_person: bool
    write_memory_after_answer: bool

    @property
    def config(self) -> Config: ...
    def save_config(self, changes: dict[str, Any]) -> None: ...
    def make_session(self) -> None: ...
    def status(self) -> dict[str, Any]: ...
    def meaning_status(self) -> dict[str, Any]: ...

    # events, stops and the work between packets
    progress: Sink
    events: Sink
    stopped: threading.Event
    work: Work
    sync: SyncSchedule
    fetcher: Fetcher  # model downloads, each on its own thread
    runtime_builder: RuntimeBuilder  # the runtime's build in a source checkout

    def start_building(self, import_id: int | None = None) -> None: ...
    def cancel(self) -> None: ...
    def close(self) -> None: ...
