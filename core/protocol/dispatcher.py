"""Routes one packet at a time to its handler and runs the backend's life cycle: the
config, the store, the model session and the background indexer.

The handlers live in `core.protocol.handlers`, one module per thing they serve, each
declared with `@handles(PacketType.X, schema)`; this module knows none of them by name.
It knows nothing about threads either: `core.protocol.server` hosts it on a Python thread
for headless use, and the GUI hosts it on a QThread. Whoever hosts it calls `handle()`
from one thread, and `between_packets()` after each answer went out; only `cancel()` may
come from another.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core import keychain
from core.config import Config, ConfigError, load_config, save_config, updated
from core.errors import CodedError, ErrorCode
from core.events import Event
from core.history_import.saving import PAST_SCHEMA
from core.i18n import N_, tr
from core.meaning import engine as meaning_engine
from core.meaning import glossary
from core.paths import secure_home
from core.protocol import handlers
from core.protocol.announcer import Announcer
from core.protocol.backup_schedule import BackupSchedule
from core.protocol.handlers.table import Refusal
from core.protocol.packets import Packet, PacketResponse, PacketType
from core.redaction import remember, scrub, scrub_logs
from core.store import GraphStore, describe_sqlite_error
from core.store.opening import open_checked
from core.sync.schedule import SyncSchedule
from core.tools.budget import taken_this_hour
from core.tools.limits import ToolLimiter
from core.turn.history import History
from core.turn.llm import ChatSession, make_client

log = logging.getLogger(__name__)

Progress = Callable[[str, dict[str, Any]], None]
HANDLERS = handlers.load()
NO_BACKUP_AFTER = (PacketType.SHUTDOWN, PacketType.RESTORE_BACKUP)


def _no_progress(_event: str, _data: dict[str, Any]) -> None:
    return None


class Dispatcher:
    def __init__(self, db_path: Path, config_file: Path, use_embedded_db: bool = True,
                 home: Path | None = None, can_ask_person: bool = False) -> None:
        """`home` is the data folder to keep private (0700); `can_ask_person` says that
        a window shows approval requests, so calls over the budget wait for the person
        instead of being refused outright."""
        self.db_path = Path(db_path)
        self.config_file = Path(config_file)
        self.use_embedded_db = use_embedded_db
        self.home = home
        self.can_ask_person = can_ask_person
        self.store: GraphStore | None = None
        self.store_generation = 0  # counts openings: the read lane reopens when it moves
        self.backing_up = False  # a backup runs between packets (the read lane answers)
        self.config = Config()
        self.saved_config = Config()  # what config.json holds: never the one-run overrides
        self.overrides: dict[str, Any] = {}
        self.config_warning: str | None = None
        self.keychain = True  # the key in the system keychain where one answers
        self.key_place = keychain.FILE
        self.store_error: str | None = None
        self.store_warning: str | None = None  # opened, but read-only: why
        self.store_detail: str | None = None
        self.store_notice: str | None = None  # opened well, but worth telling once
        self.limiter = ToolLimiter()
        self.session: ChatSession | None = None
        self.running = False
        self.backups = BackupSchedule(self.db_path)
        # the window syncs by itself; headless hosts and commands when asked (SYNC_NOW)
        self.sync = SyncSchedule(home or self.db_path.parent, automatic=can_ask_person)
        self.sync.arrived = self._sync_arrived
        self.announcer: Announcer | None = None
        self.stopped = threading.Event()  # a stop for work other than a turn (an import)
        self.conversation_id: int | None = None  # the one shown; None: the one used last
        self.progress: Progress = _no_progress  # the running packet's event channel
        # Events that belong to no packet (memory changes, the indexer's progress); the
        # indexer tells them from its own thread, so only thread-safe sinks.
        self.events: Progress = _no_progress
        self.meaning: Any = None  # core.meaning.indexer.Meaning while recall by meaning runs
        self.models: dict[tuple[str, str], list[str]] = {}  # per endpoint and key
        # The memory-writing step of small models runs after the reply went out (the
        # window does this: the person waits for the answer only); headless clients get
        # the step's calls in the answer, as the seed's process_message promises.
        self.write_memory_after_answer = can_ask_person
        self.follow_up: Callable[[Progress], None] | None = None
        self.writing_memory = False  # a follow-up runs between packets (reads overtake)
        # Building the memory from imported conversations (`core.history_import.building.Builder`):
        # one piece at a time between packets, so chat and reads go on meanwhile.
        self.builder: Any = None
        scrub_logs()

    # -- routing -------------------------------------------------------------------------

    def handle(self, packet: Packet, progress: Progress = _no_progress,
               backend: Any = None) -> PacketResponse:
        """Answer one packet; never raises. The read lane passes its `Reader` as `backend`
        (and leaves the running packet's progress channel alone). No error it answers
        carries a known key, whoever put the words together."""
        response = self._answer(packet, progress, backend)
        if response.error:
            response.error = scrub(response.error)
        return response

    def _answer(self, packet: Packet, progress: Progress, backend: Any) -> PacketResponse:
        if not isinstance(packet, Packet) or not isinstance(packet.type, PacketType):
            return PacketResponse.fail(getattr(packet, "id", "?"), tr("unknown packet type"))
        handler = HANDLERS.get(packet.type)
        if handler is None:
            return PacketResponse.fail(packet.id, tr("unknown packet type {type}",
                                                     type=packet.type.value))
        if not isinstance(packet.body, dict):
            return PacketResponse.fail(packet.id, tr("the packet body must be an object"))
        if backend is None:
            self.progress = progress
            # what other programs (trulymem mcp, --tool) wrote is known before any
            # answer: the counts and events every client sees are the file's own
            self.notice_outside_changes()
        try:
            handler.check(packet.body)
            return PacketResponse.ok(packet.id, handler.run(backend or self, packet.body))
        except Refusal as refusal:
            return PacketResponse.refused(packet.id, refusal, refusal.data)
        except CodedError as error:
            return PacketResponse.refused(packet.id, error)
        except sqlite3.Error as error:
            return PacketResponse.fail(packet.id, describe_sqlite_error(error),
                                       ErrorCode.STORE)
        except Exception as error:  # a bug must not kill the backend thread
            log.exception("packet %s failed", packet.type.value)
            return PacketResponse.fail(packet.id, tr("internal error: {name}",
                                                     name=type(error).__name__),
                                       ErrorCode.INTERNAL)
        finally:
            if backend is None:
                self.progress = _no_progress

    def between_packets(self, answered: Packet | None = None) -> None:
        """After an answer went out: the turn's memory writing when it waits (see
        `write_memory_after_answer`), then a backup when one is due."""
        follow_up, self.follow_up = self.follow_up, None
        if follow_up is not None:
            self.writing_memory = True
            try:
                follow_up(self.events)
            except Exception:  # the reply is out; a bug here must not kill the worker
                log.exception("writing the memory after the answer failed")
            finally:
                self.writing_memory = False
        self.sync.after_packet(self.store, self.events)  # this device's changes, written
        if answered is None or answered.type not in NO_BACKUP_AFTER:
            self.backing_up = True
            try:
                self.backups.maybe_backup(self.store, self.config)
            finally:
                self.backing_up = False

    # -- background work: the memory built from imported conversations ---------------------

    def start_building(self, import_id: int | None = None) -> None:
        from core.history_import.building import Builder  # noqa: PLC0415  (only when asked for)

        self.builder = Builder(self.need_store(), self.session, self.config,
                               import_id=import_id, progress=self._background_event)

    def resume_building(self) -> None:
        """A build the person started and did not stop goes on after a quit or a crash,
        from the next piece (each conversation keeps how far it was remembered)."""
        if self.store is None or self.session is None or self.store.read_only or \
                self.store.schema_version() < PAST_SCHEMA:
            return
        if self.store.query_one("SELECT 1 AS yes FROM past_imports WHERE building = 1"):
            self.start_building(None)

    def background_step(self) -> bool:
        """One piece of background work; answers whether more is waiting. The host calls
        it only when no packet waits, so a message is answered after one piece at most."""
        builder = self.builder
        if builder is None:
            return False
        if builder.store is not self.store or self.session is None:
            self.builder = None  # the memory or the endpoint changed under it
            return False
        self.reset_cancel()
        self.writing_memory = True
        try:
            more = builder.step()
        except Exception:  # a bug must not kill the backend thread; the build stops
            log.exception("building the memory from imported conversations failed")
            more = False
        finally:
            self.writing_memory = False
        if not more and self.builder is builder:
            self.builder = None
        return more

    # -- what the handlers share -----------------------------------------------------------

    def need_store(self) -> GraphStore:
        if self.store is None:
            raise Refusal(self.store_error or N_("the memory store is not open"),
                          ErrorCode.STORE)
        return self.store

    def _model_took_this_hour(self) -> int:
        """What the model forgot in the last hour, across turns (the rolling budget)."""
        return 0 if self.store is None else taken_this_hour(self.store, "model")

    def history(self) -> History:
        """The shown conversation's messages (the recent ones go to the model)."""
        history = History(self.need_store(), self.conversation_id)
        self.conversation_id = history.conversation_id
        return history

    def memory_state(self) -> dict[str, Any]:
        """The counts and the review inbox's count (see `Announcer.state`)."""
        self.need_store()
        return self.announcer.state()

    def status(self) -> dict[str, Any]:
        return {"running": self.running, "config": self.config.public(),
                "graph_initialized": self.store is not None,
                "client_initialized": self.session is not None,
                "config_warning": self.config_warning, "store_error": self.store_error,
                "store_warning": self.store_warning, "store_detail": self.store_detail,
                "store_notice": self.store_notice,
                "backup_warning": self.backups.warning, "meaning": self.meaning_status()}

    def save_config(self, changes: dict[str, Any]) -> None:
        """Save `changes` over the saved config and only then apply them.

        A one-run override stays in force for the settings the person did not just set,
        and is never written to the file.
        """
        saved = updated(self.saved_config, **changes)  # a ConfigError says which value
        place = self.key_place
        if self.keychain and saved.api_key != self.saved_config.api_key:
            place, refused = keychain.keep_key(self.config_file.parent, saved.api_key)
            if refused:
                raise Refusal(N_("could not remove the key from the system keychain: "
                                 "{error}"), ErrorCode.STORE, error=refused)
        try:
            save_config(self.config_file, updated(saved, api_key="")
                        if place.store == "keychain" else saved)
        except OSError as error:
            raise Refusal(N_("could not save the config ({error})"), ErrorCode.STORE,
                          error=error.strerror) from None
        self.saved_config, self.key_place = saved, place
        self.overrides = {k: v for k, v in self.overrides.items() if k not in changes}
        self.config = updated(saved, **self.overrides)
        remember(self.config.api_key, self.config.share_token)
        if self.store is not None:
            self.store.trash_days = self.config.trash_days
        if self.meaning_wanted():
            self._start_meaning()
        else:
            self._stop_meaning()

    # -- life cycle ----------------------------------------------------------------------

    def open(self, api_key: str | None = None, base_url: str | None = None,
             model: str | None = None) -> None:
        """Load the config and the store; problems are kept and reported, not raised.

        The start options (a key from the environment, `--base-url`, `--model`) apply to
        this run only: they are kept apart from the saved config and never written.
        """
        if self.home is not None:
            secure_home(self.home)
        self.saved_config, self.config_warning = load_config(self.config_file)
        if self.keychain:
            self.saved_config, self.key_place = keychain.load_key(self.config_file,
                                                                  self.saved_config)
            self.config_warning = keychain.with_warning(self.config_warning, self.key_place)
        overrides = {k: v for k, v in
                     {"api_key": api_key, "base_url": base_url, "model": model}.items() if v}
        try:
            updated(self.saved_config, **overrides)
            self.overrides = overrides
        except ConfigError as error:
            self.config_warning = tr("start options ignored: {error}", error=error.said())
        self.config = updated(self.saved_config, **self.overrides)
        remember(self.config.api_key, self.saved_config.api_key, self.config.share_token)
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

    def close(self) -> None:
        self.cancel()
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
        if not self.config.api_key:
            self.session = None
            return
        # The client's read timeout bounds the wait for the answer to start; the stream
        # watchdog then measures chunks, which keep-alive comments do not fake.
        client = make_client(self.config.api_key, self.config.base_url,
                             self.config.first_token_timeout)
        self.session = ChatSession(client, self.config.model, self.config.base_url)
        glossary.warm_up()  # the writer and the answers compare languages from turn one

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

    def _indexed_changed(self, touched: dict[str, Any]) -> None:
        if self.meaning is not None:
            self.meaning.changed(touched)

    def _background_event(self, event: str, data: dict[str, Any]) -> None:
        """From the indexer's thread, through whatever sink `events` is at the time."""
        self.events(event, data)

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

    def _stop_meaning(self) -> None:
        if self.meaning is None:
            return
        self.meaning.stop()
        self.meaning = None
        if self.store is not None:
            self.store.meaning = None
        self.events(Event.MEANING, self.meaning_status())
