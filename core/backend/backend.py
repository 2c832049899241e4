"""The backend's life cycle and what the handlers share: the settings, the open memory,
the model session, recall by meaning, the change announcer and the work between packets.

A host (`core.protocol.server` headless, `app.backend_host` in the window) makes one,
calls `open()`, hands packets to `core.protocol.dispatcher.Dispatcher`, calls
`between_packets()` after each answer went out and `background_step()` when no packet
waits, and `close()` at the end, all from one thread; only `cancel()` may come from
another. The handlers use the members `core.protocol.backend_interface.HandlerBackend`
lists, and change its state through its methods, never by setting its fields.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.backend.announcer import Announcer
from core.backend.backup_schedule import BackupSchedule
from core.backend.settings import Settings
from core.backend.work import Work
from core.endpoint.client import make_client
from core.errors import CodedError, ErrorCode
from core.events import Event
from core.history_import.saving import PAST_SCHEMA
from core.i18n import N_, tr
from core.meaning import engine as meaning_engine
from core.meaning import glossary
from core.models import local
from core.models.fetcher import Fetcher
from core.models.runtime_build import RuntimeBuilder
from core.paths import secure_home
from core.redaction import scrub_logs
from core.store import GraphStore
from core.store.history import History
from core.store.opening import open_checked
from core.sync.schedule import SyncSchedule
from core.tools.budget import taken_this_hour
from core.tools.limits import ToolLimiter
from core.turn.llm import ChatSession
from core.turn.pace import PACE_FILE, ReadingPace, pace_key

Progress = Callable[[str, dict[str, Any]], None]
# Packets after which no backup is made: the memory is going away or being replaced.
NO_BACKUP_AFTER = ("shutdown", "restore_backup")


def no_progress(_event: str, _data: dict[str, Any]) -> None:
    return None


class Backend:
    def __init__(self, db_path: Path, config_file: Path, use_embedded_db: bool = True,
                 home: Path | None = None, can_ask_person: bool = False) -> None:
        """`home` is the data folder to keep private (0700); `can_ask_person` says that
        a window shows approval requests, so calls over the budget wait for the person
        instead of being refused outright."""
        self.db_path = Path(db_path)
        self.use_embedded_db = use_embedded_db
        self.home = home
        self.folder = Path(home or self.db_path.parent)  # where config, sync and share live
        self.can_ask_person = can_ask_person
        self.settings = Settings(Path(config_file))
        self.store: GraphStore | None = None
        self.store_generation = 0  # counts openings: the read lane reopens when it moves
        self.store_error: str | None = None
        self.store_warning: str | None = None  # opened, but read-only: why
        self.local_problem: str | None = None  # why the own runtime's model does not run
        self.store_detail: str | None = None
        self.store_notice: str | None = None  # opened well, but worth telling once
        self.limiter = ToolLimiter()
        self.session: ChatSession | None = None
        self.running = False
        self.backups = BackupSchedule(self.db_path)
        # the window syncs by itself; headless hosts and commands when asked (SYNC_NOW)
        self.sync = SyncSchedule(self.folder, automatic=can_ask_person)
        self.sync.arrived = self._sync_arrived
        self.work = Work(self.backups, self.sync)
        self.announcer: Announcer | None = None
        self.stopped = threading.Event()  # a stop for work other than a turn (an import)
        self.conversation_id: int | None = None  # the one shown; None: the one used last
        self.progress: Progress = no_progress  # the running packet's event channel
        # Events that belong to no packet (memory changes, the indexer's progress); the
        # indexer tells them from its own thread, so only thread-safe sinks.
        self.events: Progress = no_progress
        self.meaning: Any = None  # core.meaning.indexer.Meaning while recall by meaning runs
        self.models: dict[tuple[str, str], list[str]] = {}  # per endpoint and key
        self.fetcher = Fetcher(lambda: self.events)  # model downloads beside the chat
        self.runtime_builder = RuntimeBuilder(lambda: self.events)  # in a source checkout
        # The memory-writing step of small models runs after the reply went out (the
        # window does this: the person waits for the answer only); headless clients get
        # the step's calls in the answer, as the seed's process_message promises.
        self.write_memory_after_answer = can_ask_person
        self.resume_builds = True  # False: a host that decides itself (import-history)
        scrub_logs()

    @property
    def config(self) -> Any:
        """The settings in force (`core.config.Config`)."""
        return self.settings.config

    # -- what the handlers share -----------------------------------------------------------

    def need_store(self) -> GraphStore:
        if self.store is None:
            raise CodedError(self.store_error or N_("the memory store is not open"),
                             ErrorCode.STORE)
        return self.store

    def history(self) -> History:
        """The shown conversation's messages (the recent ones go to the model)."""
        history = History(self.need_store(), self.conversation_id)
        self.conversation_id = history.conversation_id
        return history

    def show_conversation(self, conversation_id: int | None) -> None:
        """The conversation the next turn goes to (None: the one used last)."""
        self.conversation_id = conversation_id

    def memory_state(self) -> dict[str, Any]:
        """The counts and the review inbox's count (see `Announcer.state`)."""
        self.need_store()
        assert self.announcer is not None  # made with the store
        return self.announcer.state()

    def status(self) -> dict[str, Any]:
        return {"running": self.running, "config": self.config.public(),
                "graph_initialized": self.store is not None,
                "client_initialized": self.session is not None,
                "local_problem": self.local_problem,
                "config_warning": self.settings.warning, "store_error": self.store_error,
                "store_warning": self.store_warning, "store_detail": self.store_detail,
                "store_notice": self.store_notice,
                "backup_warning": self.backups.warning, "meaning": self.meaning_status()}

    def save_config(self, changes: dict[str, Any]) -> None:
        """Save `changes` (see `Settings.save`) and apply what the store and recall use."""
        self.settings.save(changes)
        if self.store is not None:
            self.store.trash_days = self.config.trash_days
        if self.meaning_wanted():
            self._start_meaning()
        else:
            self._stop_meaning()

    # -- life cycle ----------------------------------------------------------------------

    def open(self, api_key: str | None = None, base_url: str | None = None,
             model: str | None = None) -> None:
        """Load the settings and the store; problems are kept and reported, not raised."""
        if self.home is not None:
            secure_home(self.home)
        self.settings.load(api_key, base_url, model)
        self.limiter = ToolLimiter(self.config.tool_limits)
        self.limiter.taken_this_hour = self._model_took_this_hour
        if not self.use_embedded_db:
            self.store_error = tr("only the embedded SQLite store exists "
                                  "(use_embedded_db=True)")
        else:
            self.open_store()
        self.make_session()
        self.running = True
        self.resume_building()

    def open_store(self) -> None:
        """Open the memory, checking it first (see `core.store.opening`)."""
        opened = open_checked(self.db_path, self.config.trash_days)
        self.store_generation += 1
        self.store, self.store_error = opened.store, opened.error
        self.announcer = None
        if self.store is not None:
            self.announcer = Announcer(self.store, lambda: self.events, self._indexed_changed)
            self._start_meaning()
        self.store_warning, self.store_detail = opened.warning, opened.detail
        self.store_notice = opened.notice
        self.conversation_id = None
        self.backups.opened(self.store)
        self.sync.opened()

    def close_store(self) -> None:
        self.announcer = None
        self._stop_meaning()
        if self.store is not None:
            self.store.close()
            self.store = None

    def close(self) -> None:
        self.cancel()
        self.fetcher.cancel()  # what came is kept; the next attempt goes on from there
        self.runtime_builder.cancel()
        self.running = False
        if self.store is not None:
            self.sync.at_exit(self.store)
            self.backups.maybe_backup(self.store, self.config, at_exit=True)
        self.close_store()

    def cancel(self) -> None:
        self.stopped.set()
        if self.session is not None:
            self.session.cancel()

    def reset_cancel(self) -> None:
        """A new packet starts: a stop meant for an earlier turn must not stop this one."""
        self.stopped.clear()
        if self.session is not None:
            self.session.reset()

    def make_session(self) -> None:
        self.local_problem = None
        base_url, key = self.config.base_url, self.config.api_key
        if local.is_own(base_url):
            # the app's own runtime: started here (on the backend's thread), no key needed
            served = local.serve(self.config.model, self.folder / "logs")
            if not served["success"]:
                self.session, self.local_problem = None, served["error"]
                return
            base_url, key = served["data"]["base_url"], key or local.LOCAL
        if not key:
            self.session = None
            return
        # The client's read timeout bounds the wait for the answer to start; the stream
        # watchdog then measures chunks, which keep-alive comments do not fake.
        client = make_client(key, base_url, self.config.first_token_timeout)
        # the pace is kept by the endpoint the person chose (the app's own runtime's port
        # changes from one start to the next)
        pace = ReadingPace(self.folder / PACE_FILE,
                           pace_key(self.config.model, self.config.base_url))
        self.session = ChatSession(client, self.config.model, base_url, pace)
        glossary.warm_up()  # the writer and the answers compare languages from turn one

    def _model_took_this_hour(self) -> int:
        """What the model forgot in the last hour, across turns (the rolling budget)."""
        return 0 if self.store is None else taken_this_hour(self.store, "model")

    # -- between packets -------------------------------------------------------------------

    def between_packets(self, answered: str | None = None) -> None:
        """After an answer went out (`answered`: its packet type's value): the work it
        left, then a backup unless the memory is going away (see `core.backend.work`)."""
        self.work.between_packets(self.store, self.config, self.events,
                                  back_up=answered not in NO_BACKUP_AFTER)

    def notice_outside_changes(self) -> int:
        """Tell the changes other programs committed to this memory since the last look
        (the window calls this a few times a second between packets); answers how many."""
        if self.announcer is None:
            return 0
        self.sync.maybe_apply(self.store, self.events)
        return self.announcer.notice_outside_changes()

    def _sync_arrived(self) -> None:
        """Other devices' changes were applied: told as changes made elsewhere."""
        if self.announcer is not None:
            self.announcer.look_again()

    def start_building(self, import_id: int | None = None) -> None:
        from core.history_import.building import Builder  # noqa: PLC0415  (only when asked for)

        self.work.start_building(Builder(self.need_store(), self.session, self.config,
                                         import_id=import_id, progress=self._background_event))

    def resume_building(self) -> None:
        """A build the person started and did not stop goes on after a quit or a crash,
        from the next piece (each conversation keeps how far it was remembered)."""
        store = self.store
        if not self.resume_builds or store is None or self.session is None or \
                store.read_only or store.schema_version() < PAST_SCHEMA:
            return
        if store.query_one("SELECT 1 AS yes FROM past_imports WHERE building = 1"):
            self.start_building(None)

    def background_step(self) -> bool:
        """One piece of background work; answers whether more is waiting. The host calls
        it only when no packet waits, so a message is answered after one piece at most."""
        if self.work.builder is None:
            return False
        self.reset_cancel()
        return self.work.step(self.store, self.session is not None)

    # -- recall by meaning -------------------------------------------------------------

    def meaning_wanted(self) -> bool:
        """On unless the person switched it off or this platform has no engine."""
        return self.config.recall_by_meaning and meaning_engine.problem() is None

    def meaning_status(self) -> dict[str, Any]:
        if self.meaning is not None:
            return self.meaning.status()
        if not self.config.recall_by_meaning:
            return {"state": "off"}
        problem = meaning_engine.problem()
        return {"state": "unavailable", "problem": problem} if problem else {"state": "off"}

    def ids_moved(self) -> None:
        """Every row's id moved (this memory joined a sync set and took its device's
        range): what this side holds by id is found again, and the indexer starts over
        from the stored vectors."""
        self.conversation_id = None
        if self.announcer is not None:
            self.announcer.forget_counts()
        if self.meaning is not None:
            self._stop_meaning()
            self._start_meaning()

    def _start_meaning(self) -> None:
        """Index the memory's facts in the background and let recall use the vectors."""
        if self.store is None or self.meaning is not None or not self.meaning_wanted():
            return
        # loads numpy and the index: only once recall by meaning is wanted
        from core.meaning.indexer import Meaning  # noqa: PLC0415

        self.meaning = Meaning(self.db_path, self._background_event,
                               writable=not self.store.read_only)
        self.store.meaning = self.meaning
        self.meaning.start()

    def _stop_meaning(self) -> None:
        if self.meaning is None:
            return
        self.meaning.stop()
        self.meaning = None
        if self.store is not None:
            self.store.meaning = None
        self.events(Event.MEANING, self.meaning_status())

    def _indexed_changed(self, touched: dict[str, Any]) -> None:
        if self.meaning is not None:
            self.meaning.changed(touched)

    def _background_event(self, event: str, data: dict[str, Any]) -> None:
        """From the indexer's thread, through whatever sink `events` is at the time."""
        self.events(event, data)
