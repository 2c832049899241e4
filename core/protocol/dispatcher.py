"""Handles one packet at a time; owns the store, the limits, the config and the LLM session.

It knows nothing about threads: `core.protocol.server` hosts it on a Python thread for headless
use, and the GUI hosts it on a QThread. Whoever hosts it calls `handle()` from one thread;
only `cancel()` may come from another.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openai

from core.config import Config, ConfigError, load_config, save_config, updated
from core.i18n import tr
from core.meaning import engine as meaning_engine
from core.paths import secure_home
from core.protocol.packets import Packet, PacketResponse, PacketType
from core.share.tokens import new_token
from core.store import (
    GraphStore,
    StoreError,
    backups,
    browse,
    conversations,
    describe,
    describe_sqlite_error,
    exchange,
    review,
    trash,
)
from core.store.counts import delta as counts_delta
from core.store.counts import memory_counts, shown_counts_line
from core.store.graph import Change
from core.store.opening import open_checked
from core.store.outside import OutsideChanges
from core.tools import ToolExecutor, approvals, corrections
from core.tools.limits import ToolLimiter, validate_limits
from core.turn import offer
from core.turn.history import History
from core.turn.llm import ChatSession, describe_api_error, make_client
from core.turn.run import Turn, TurnRefused, no_key
from core.turn.snapshot import glance

log = logging.getLogger(__name__)

Progress = Callable[[str, dict[str, Any]], None]
SHOWN_CHARS = 200_000  # of one message, as the window loads the history
REPORTS_PROGRESS = (PacketType.PROCESS_MESSAGE, PacketType.IMPORT_MEMORY)


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
        self.config = Config()
        self.saved_config = Config()  # what config.json holds: never the one-run overrides
        self.overrides: dict[str, Any] = {}
        self.config_warning: str | None = None
        self.store_error: str | None = None
        self.limiter = ToolLimiter()
        self.session: ChatSession | None = None
        self.running = False
        self.store_warning: str | None = None  # opened, but read-only: why
        self.backup_warning: str | None = None
        self.store_detail: str | None = None
        # The store connection's change counter when the memory last matched a backup
        # (None: it does not), and when that backup was made.
        self._changes_at_backup: int | None = None
        self._last_backup_at: float | None = None
        self._stopped = threading.Event()  # a stop for work other than a turn (an import)
        self.conversation_id: int | None = None  # the one shown; None: the one used last
        self._progress: Progress = _no_progress  # the running packet's event channel
        self._counts: dict[str, int] | None = None
        self._outside: OutsideChanges | None = None  # changes other programs make
        # Events that belong to no packet (the indexer's progress); thread-safe sinks only.
        self.events: Progress = _no_progress
        self.meaning: Any = None  # core.meaning.indexer.Meaning while recall by meaning runs
        self._models: dict[tuple[str, str], list[str]] = {}  # per endpoint and key

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
        overrides = {k: v for k, v in
                     {"api_key": api_key, "base_url": base_url, "model": model}.items() if v}
        try:
            updated(self.saved_config, **overrides)
            self.overrides = overrides
        except ConfigError as error:
            self.config_warning = tr("start options ignored: {error}", error=error)
        self.config = updated(self.saved_config, **self.overrides)
        self.limiter = ToolLimiter(self.config.tool_limits)
        if not self.use_embedded_db:
            self.store_error = tr("only the embedded SQLite store exists "
                                  "(use_embedded_db=True)")
        else:
            self._open_store()
        self._make_session()
        self.running = True

    def _open_store(self) -> None:
        """Open the memory, checking it first (see `core.store.opening`)."""
        opened = open_checked(self.db_path, self.config.trash_days)
        self.store, self.store_error = opened.store, opened.error
        self._counts: dict[str, int] | None = None  # see `_memory_state`
        if self.store is not None:
            self.store.on_commit.append(self._announce_change)
            self._outside = OutsideChanges(self.store.conn)
            self._start_meaning()
        self.store_warning, self.store_detail = opened.warning, opened.detail
        self.conversation_id = None
        saved = backups.backup_files(backups.backup_folder(self.db_path))
        self._last_backup_at = backups.made_at(saved[0]) if saved else None
        self._changes_at_backup = None
        if saved and self.store is not None and not self.store.read_only and \
                backups.state_of(saved[0]) == self._state():
            self._changes_at_backup = self.store.conn.total_changes

    def _close_store(self) -> None:
        self._outside = None
        self._stop_meaning()
        if self.store is not None:
            self.store.close()
            self.store = None

    # -- recall by meaning -------------------------------------------------------------

    def meaning_wanted(self) -> bool:
        """On unless the person switched it off or this platform has no engine."""
        return self.config.recall_by_meaning and self._meaning_problem() is None

    @staticmethod
    def _meaning_problem() -> str | None:
        return meaning_engine.problem()

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

    def _background_event(self, event: str, data: dict[str, Any]) -> None:
        """From the indexer's thread, through whatever sink `events` is at the time."""
        self.events(event, data)

    def _stop_meaning(self) -> None:
        if self.meaning is None:
            return
        self.meaning.stop()
        self.meaning = None
        if self.store is not None:
            self.store.meaning = None
        self.events("meaning", self._meaning_status())

    def _meaning_status(self) -> dict[str, Any]:
        if self.meaning is not None:
            return self.meaning.status()
        if not self.config.recall_by_meaning:
            return {"state": "off"}
        problem = self._meaning_problem()
        return {"state": "unavailable", "problem": problem} if problem else {"state": "off"}

    # -- backups --------------------------------------------------------------------------

    def _state(self) -> tuple[int, int]:
        """Where the memory and the chat stand: a backup is due only when this moved."""
        row = self.store.conn.execute(backups.STATE_SQL).fetchone()
        return row[0], row[1]

    def _backup_policy(self) -> backups.BackupPolicy:
        return backups.BackupPolicy(self.config.backup_every_hours, self.config.backups_kept,
                                    self.config.weekly_backups_kept)

    def maybe_backup(self, at_exit: bool = False) -> None:
        """Back up when the memory changed since the last backup and the last is older than
        the policy's interval (at exit: whenever it changed). Failures are reported in the
        status, never raised: a backup must not cost the person their turn."""
        if self.store is None or self.store.read_only:
            return
        try:
            changes = self.store.conn.total_changes  # a counter in memory: free per packet
            if changes == self._changes_at_backup:
                return
            policy = self._backup_policy()
            now = time.time()
            if self._last_backup_at is not None and not at_exit and \
                    now - self._last_backup_at < policy.every_hours * 3600:
                return
            folder = backups.backup_folder(self.db_path)
            backups.make_backup(self.store.conn, folder, now)
            backups.prune(folder, now, policy)
            self._changes_at_backup, self._last_backup_at = changes, now
            self.backup_warning = None
        except (OSError, sqlite3.Error) as error:
            log.warning("backup failed: %s", error)
            self.backup_warning = tr("the last backup failed ({error})", error=error)

    def close(self) -> None:
        self.cancel()
        self.running = False
        if self.store is not None:
            self.maybe_backup(at_exit=True)
        self._close_store()

    def cancel(self) -> None:
        self._stopped.set()
        if self.session is not None:
            self.session.cancel()

    def reset_cancel(self) -> None:
        """A new packet starts: a stop meant for an earlier turn must not stop this one."""
        self._stopped.clear()
        if self.session is not None:
            self.session.reset()

    def _make_session(self) -> None:
        if not self.config.api_key:
            self.session = None
            return
        # The client's read timeout bounds the wait for the answer to start; the stream
        # watchdog then measures chunks, which keep-alive comments do not fake.
        client = make_client(self.config.api_key, self.config.base_url,
                             self.config.first_token_timeout)
        self.session = ChatSession(client, self.config.model, self.config.base_url)

    # -- dispatch ------------------------------------------------------------------------

    def handle(self, packet: Packet, progress: Progress = _no_progress) -> PacketResponse:
        """Answer one packet; never raises."""
        if not isinstance(packet, Packet) or not isinstance(packet.type, PacketType):
            return PacketResponse.fail(getattr(packet, "id", "?"), tr("unknown packet type"))
        if not isinstance(packet.body, dict):
            return PacketResponse.fail(packet.id, tr("the packet body must be an object"))
        handler = getattr(self, f"_on_{packet.type.value}", None)
        if handler is None:
            return PacketResponse.fail(packet.id, tr("unknown packet type {type}",
                                                     type=packet.type.value))
        self._progress = progress
        try:
            data = handler(packet.body, progress) if packet.type in REPORTS_PROGRESS \
                else handler(packet.body)
        except _Refusal as refusal:
            return PacketResponse(packet.id, False, refusal.data, str(refusal))
        except (browse.BrowseError, StoreError) as error:
            return PacketResponse.fail(packet.id, str(error))
        except sqlite3.Error as error:
            return PacketResponse.fail(packet.id, describe_sqlite_error(error))
        except Exception as error:  # a bug must not kill the backend thread
            log.exception("packet %s failed", packet.type.value)
            return PacketResponse.fail(packet.id, tr("internal error: {name}",
                                                     name=type(error).__name__))
        finally:
            self._progress = _no_progress
            if packet.type not in (PacketType.SHUTDOWN, PacketType.RESTORE_BACKUP):
                self.maybe_backup()
        return PacketResponse.ok(packet.id, data)

    def notice_outside_changes(self) -> int:
        """Tell the changes other programs (an MCP server, `--tool`) committed to this
        memory since the last look, through the same event as our own; answers how many.
        The window calls this a few times a second between packets: it costs one PRAGMA
        when nothing changed."""
        if self._outside is None:
            return 0
        try:
            changes = self._outside.poll()
        except sqlite3.Error as error:  # a busy or damaged file: the next look tries again
            log.warning("could not read changes made elsewhere: %s", error)
            return 0
        for change in changes:
            self._announce_change(change, sink=self.events)
        return len(changes)

    def _announce_change(self, change: Change, sink: Progress | None = None) -> None:
        """Each committed memory change is told once, as a "memory_changed" event with what
        it touched, who made it, and the counts after it: a front end updates its lists,
        picture, review count and status from this instead of asking again. Changes made
        elsewhere come through `sink` (no packet runs for them); the indexer finds those
        itself."""
        if sink is None:
            if self._outside is not None:
                self._outside.own(change.id)
            if self.meaning is not None:
                self.meaning.changed(change.touched())
        moved = counts_delta(change.ops)
        if moved is None or self._counts is None:
            self._counts = None  # counted afresh below
        else:
            self._counts = {k: v + moved.get(k, 0) for k, v in self._counts.items()}
        event = {**change.touched(), **self._memory_state()}
        if sink is not None:  # made elsewhere: no turn's trace holds its call, so tell it
            event["arguments"] = change.arguments
        (sink or self._progress)("memory_changed", event)

    def _memory_state(self) -> dict[str, Any]:
        """The counts, kept up to date from each change's row images once counted: a
        count of a memory of 300,000 facts takes about 0.2 s, a change's delta nothing."""
        store = self._need_store()
        if self._counts is None:
            self._counts = memory_counts(store.conn)
        counts = dict(self._counts)
        return {"counts": counts, "counts_line": shown_counts_line(counts),
                "review_count": review.count(store)}

    def _history(self) -> History:
        """The shown conversation's messages (the recent ones go to the model)."""
        history = History(self._need_store(), self.conversation_id)
        self.conversation_id = history.conversation_id
        return history

    def _need_store(self) -> GraphStore:
        if self.store is None:
            raise _Refusal(self.store_error or tr("the memory store is not open"))
        return self.store

    def _on_process_message(self, body: dict[str, Any], progress: Progress) -> dict[str, Any]:
        """One turn of the shown conversation (see `core.turn.run`)."""
        turn = Turn(self._need_store(), self._history(), self.session, self.config,
                    self.limiter, progress=progress, can_ask_person=self.can_ask_person)
        try:
            return turn.run(body.get("user_input"), body.get("replaces_turn"))
        except TurnRefused as refusal:
            raise _Refusal(str(refusal), refusal.data) from None

    def _on_execute_tool(self, body: dict[str, Any]) -> dict[str, Any]:
        name = body.get("tool_name")
        if not isinstance(name, str):
            raise _Refusal(tr("tool_name must be text"))
        outcome = ToolExecutor(self._need_store()).execute(name, body.get("arguments"),
                                                           actor="user")
        if not outcome["success"]:
            raise _Refusal(outcome["error"])
        return outcome["data"]

    def _on_undo(self, body: dict[str, Any]) -> dict[str, Any]:
        """Undo `change_id`, or `change_ids` together as one change (a turn's waiting
        changes in the review inbox), or without either the newest change not yet undone
        (Ctrl+Z)."""
        store = self._need_store()
        if "change_ids" in body:
            ids = body["change_ids"]
            if not isinstance(ids, list) or not ids or not all(
                    isinstance(i, int) and not isinstance(i, bool) for i in ids):
                raise _Refusal(tr("change_ids must be a list of change ids"))
            undo_id = store.undo_changes(ids, "undo", {"change_ids": ids})
            lines = describe.describe_change(store, undo_id)
            return {"change_id": undo_id, "undone": ids, "lines": lines,
                    "message": describe.sentence(lines)}
        change_id = body.get("change_id")
        if change_id is None:
            change_id = browse.last_undoable(store)
            if change_id is None:
                raise _Refusal(tr("there is no change left to undo"))
        outcome = ToolExecutor(store).undo(change_id)
        if not outcome["success"]:
            raise _Refusal(outcome["error"])
        lines = describe.describe_change(store, outcome["data"]["change_id"])
        return {**outcome["data"], "lines": lines, "message": describe.sentence(lines)}

    def _on_redo(self, _body: dict[str, Any]) -> dict[str, Any]:
        """Take back the newest undo, when nothing but redos came after it."""
        store = self._need_store()
        undo_id = browse.last_redoable(store)
        if undo_id is None:
            raise _Refusal(tr("there is nothing to redo"))
        change_id = store.undo_changes([undo_id], "redo", {"change_id": undo_id})
        lines = describe.describe_change(store, change_id)
        return {"change_id": change_id, "redone": undo_id, "lines": lines,
                "message": describe.sentence(lines)}

    def _on_memory_state(self, _body: dict[str, Any]) -> dict[str, Any]:
        return self._memory_state()

    def _on_review_list(self, body: dict[str, Any]) -> dict[str, Any]:
        return review.waiting(self._need_store(), body.get("limit", 200), body.get("before"))

    def _on_review_keep(self, body: dict[str, Any]) -> dict[str, Any]:
        return review.keep(self._need_store(), body.get("change_ids"), body.get("through"))

    def _on_undo_turn(self, body: dict[str, Any]) -> dict[str, Any]:
        """Take back every memory change one turn made (its approved calls included); without
        a turn_id, the newest turn that still has changes to take back."""
        turn_id = body.get("turn_id")
        if turn_id is None:
            turn_id = browse.last_undoable_turn(self._need_store())
            if turn_id is None:
                raise _Refusal(tr("no turn has memory changes left to undo"))
        if not isinstance(turn_id, str) or not turn_id:
            raise _Refusal(tr("turn_id must name a turn"))
        store = self._need_store()
        change_id, undone = store.undo_turn(turn_id)  # a StoreError answers as a refusal
        expired = approvals.expire_turn(store, turn_id)
        return {"change_id": change_id, "undone": undone, "turn_id": turn_id,
                "expired_approvals": expired}

    def _on_list_approvals(self, _body: dict[str, Any]) -> dict[str, Any]:
        return {"approvals": approvals.pending(self._need_store())}

    def _on_decide_approval(self, body: dict[str, Any]) -> dict[str, Any]:
        try:
            decided = approvals.decide(self._need_store(), body.get("approval_id"),
                                       body.get("allow"))
        except approvals.ApprovalError as error:
            raise _Refusal(str(error)) from None
        return {"approval": decided}

    def _on_list_backups(self, _body: dict[str, Any]) -> dict[str, Any]:
        folder = backups.backup_folder(self.db_path)
        return {"folder": str(folder),
                "backups": [backups.describe(p) for p in backups.backup_files(folder)]}

    def _on_restore_backup(self, body: dict[str, Any]) -> dict[str, Any]:
        """Put a backup in place of the memory; the current file is kept aside first."""
        name = body.get("name")
        folder = backups.backup_folder(self.db_path)
        chosen = next((p for p in backups.backup_files(folder) if p.name == name), None)
        if chosen is None:
            raise _Refusal(tr("there is no backup called {name} in {folder}", name=repr(name),
                              folder=folder))
        self._close_store()
        try:
            aside = backups.restore(self.db_path, chosen)  # checks the backup first
        except backups.BackupError as error:
            self._open_store()
            raise _Refusal(str(error)) from None
        except (OSError, sqlite3.Error) as error:
            self._open_store()
            raise _Refusal(tr("the backup could not be restored ({error}); the memory is as "
                              "it was", error=error)) from None
        self._open_store()
        return {"restored": chosen.name, "kept_aside": str(aside),
                "facts": backups.describe(self.db_path)["facts"],
                "store_error": self.store_error, "store_warning": self.store_warning}

    def _on_delete_turn(self, body: dict[str, Any]) -> dict[str, Any]:
        """Remove one exchange from the conversation; the memory keeps what it learned
        (Undo this turn takes that back)."""
        turn_id = body.get("turn_id")
        if not isinstance(turn_id, str) or not turn_id:
            raise _Refusal(tr("turn_id must name a turn"))
        removed = self._history().drop_turn(turn_id)
        if not removed:
            raise _Refusal(tr("that exchange is not in the conversation"))
        return {"removed": removed}

    # -- conversations --------------------------------------------------------------------

    def _conversation(self, body: dict[str, Any]) -> dict[str, Any]:
        return conversations.get(self._need_store(), body.get("conversation_id"))

    def _on_list_conversations(self, body: dict[str, Any]) -> dict[str, Any]:
        history = self._history()
        return {"conversations": conversations.listing(history.store,
                                                       bool(body.get("deleted"))),
                "current": history.conversation_id}

    def _on_new_conversation(self, _body: dict[str, Any]) -> dict[str, Any]:
        """A fresh conversation, shown from now on; the memory comes along."""
        history = self._history()
        store = history.store
        if history.messages(limit=1):  # an empty new chat is reused, not piled up
            self.conversation_id = conversations.create(store)
        return {"conversation": conversations.get(store, self.conversation_id),
                "remembered": glance(store)}

    def _on_open_conversation(self, body: dict[str, Any]) -> dict[str, Any]:
        """The conversation `conversation_id`, or the one holding the turn `turn_id` (the
        message a memory came from)."""
        if "turn_id" in body and "conversation_id" not in body:
            found = self._need_store().query_one(
                "SELECT conversation_id FROM messages WHERE turn_id = ? AND conversation_id"
                " IS NOT NULL LIMIT 1", (body["turn_id"],))
            if found is None:
                raise _Refusal(tr("that message is no longer in any conversation (it was "
                                  "deleted)"))
            body = {"conversation_id": found["conversation_id"]}
        conversation = self._conversation(body)
        if conversation["deleted_at"] is not None:
            raise _Refusal(tr("that conversation is deleted; restore it first"))
        self.conversation_id = conversation["id"]
        history = self._history()
        return {"conversation": conversation, "history": history.messages(cap=SHOWN_CHARS),
                "remembered": glance(history.store)}

    def _on_rename_conversation(self, body: dict[str, Any]) -> dict[str, Any]:
        return {"conversation": conversations.rename(
            self._need_store(), self._conversation(body)["id"], body.get("title"))}

    def _on_delete_conversation(self, body: dict[str, Any]) -> dict[str, Any]:
        """Deleted softly: RESTORE_CONVERSATION brings it back. Deleting the one shown
        shows the one used last (or a new one)."""
        store = self._need_store()
        conversation = self._conversation(body)
        conversations.set_deleted(store, conversation["id"], True)
        if conversation["id"] == self.conversation_id:
            self.conversation_id = None
        return {"current": self._history().conversation_id}

    def _on_restore_conversation(self, body: dict[str, Any]) -> dict[str, Any]:
        conversation = self._conversation(body)
        conversations.set_deleted(self._need_store(), conversation["id"], False)
        return {"conversation": conversations.get(self._need_store(), conversation["id"])}

    def _on_search_conversations(self, body: dict[str, Any]) -> dict[str, Any]:
        query = body.get("query")
        if not isinstance(query, str) or not query.strip():
            raise _Refusal(tr("query must be text to look for"))
        return {"results": conversations.search(self._need_store(), query)}

    def _on_export_conversation(self, body: dict[str, Any]) -> dict[str, Any]:
        """The conversation as Markdown; with `path`, written there too."""
        store = self._need_store()
        conversation_id = body.get("conversation_id", self._history().conversation_id)
        text = conversations.markdown(store, conversation_id)
        path = body.get("path")
        if path is None:
            return {"markdown": text}
        if not isinstance(path, str) or not path:
            raise _Refusal(tr("path must name a file"))
        try:
            size = exchange.write_text_atomically(Path(path), text)
        except OSError as error:
            raise _Refusal(tr("cannot write {path}: {error}", path=path,
                              error=error.strerror)) from None
        return {"path": path, "bytes": size, "markdown": text}

    def _on_turn_touched(self, body: dict[str, Any]) -> dict[str, Any]:
        """The nodes and edges one turn changed (the chat's memory line opens them)."""
        turn_id = body.get("turn_id")
        if not isinstance(turn_id, str) or not turn_id:
            raise _Refusal(tr("turn_id must name a turn"))
        return browse.turn_touched(self._need_store(), turn_id)

    def _on_trash_status(self, _body: dict[str, Any]) -> dict[str, Any]:
        return trash.trash_status(self._need_store())

    def _on_empty_trash(self, body: dict[str, Any]) -> dict[str, Any]:
        days = body.get("older_than_days", 0)
        if isinstance(days, bool) or not isinstance(days, (int, float)) or days < 0:
            raise _Refusal(tr("older_than_days must be a number of days, 0 or more"))
        return trash.empty_trash(self._need_store(), days)

    # -- the graph browser --------------------------------------------------------------

    def _on_list_nodes(self, body: dict[str, Any]) -> dict[str, Any]:
        query, kinds = body.get("query", ""), body.get("kinds") or []
        if not isinstance(query, str) or not isinstance(kinds, list):
            raise _Refusal(tr("query must be text and kinds a list"))
        ids = browse.list_node_ids(self._need_store(), query=query, kinds=kinds,
                                   status=body.get("status", "any"),
                                   sort=body.get("sort", "name"),
                                   descending=bool(body.get("descending")))
        return {"ids": ids, "total": len(ids)}

    def _on_node_rows(self, body: dict[str, Any]) -> dict[str, Any]:
        ids = body.get("ids")
        if not isinstance(ids, list):
            raise _Refusal(tr("ids must be a list"))
        return {"rows": browse.node_rows(self._need_store(), ids)}

    def _on_get_subgraph(self, body: dict[str, Any]) -> dict[str, Any]:
        limit = body.get("limit", browse.SUBGRAPH_LIMIT)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000:
            raise _Refusal(tr("limit must be a whole number from 1 to 1000"))
        return browse.subgraph(self._need_store(), body.get("node_id"),
                               depth=body.get("depth", 1), limit=limit)

    def _on_get_node(self, body: dict[str, Any]) -> dict[str, Any]:
        return browse.node_details(self._need_store(), body.get("node_id"))

    def _on_list_changes(self, body: dict[str, Any]) -> dict[str, Any]:
        limit = body.get("limit", 50)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000:
            raise _Refusal(tr("limit must be a whole number from 1 to 1000"))
        return {"changes": browse.recent_changes(self._need_store(), limit)}

    def _on_correct_memory(self, body: dict[str, Any]) -> dict[str, Any]:
        arguments = body.get("arguments") or {}
        if not isinstance(arguments, dict):
            raise _Refusal(tr("arguments must be an object"))
        try:
            return corrections.correct(self._need_store(), body.get("action"), arguments)
        except corrections.CorrectionError as error:
            raise _Refusal(str(error)) from None

    def _on_export_memory(self, body: dict[str, Any]) -> dict[str, Any]:
        path, kind = body.get("path"), body.get("format", "json")
        if not isinstance(path, str) or not path:
            raise _Refusal(tr("path must name a file"))
        writers = {"json": exchange.export_json, "graphml": exchange.export_graphml}
        if kind not in writers:
            raise _Refusal(tr("format must be json or graphml"))
        try:
            return writers[kind](self._need_store(), path)
        except OSError as error:
            raise _Refusal(tr("cannot write {path}: {error}", path=path,
                              error=error.strerror)) from None

    def _on_import_memory(self, body: dict[str, Any], progress: Progress) -> dict[str, Any]:
        """Progress arrives as "import" events with `phase` and `done` (0 to 1); CANCEL
        stops it with nothing changed."""
        path = body.get("path")
        if not isinstance(path, str) or not path:
            raise _Refusal(tr("path must name a file"))

        shown = {"phase": "", "done": -1.0}

        def report(phase: str, done: float) -> None:
            if phase != shown["phase"] or done - shown["done"] >= 0.005:  # a few hundred
                shown.update(phase=phase, done=done)
                progress("import", {"phase": phase, "done": round(done, 3)})

        try:
            return exchange.import_json(self._need_store(), path, report,
                                        self._stopped.is_set)
        except exchange.ImportCancelled:
            raise _Refusal("cancelled") from None
        except exchange.ExchangeError as error:
            raise _Refusal(str(error)) from None

    def _on_get_status(self, _body: dict[str, Any]) -> dict[str, Any]:
        return {"running": self.running, "config": self.config.public(),
                "graph_initialized": self.store is not None,
                "client_initialized": self.session is not None,
                "config_warning": self.config_warning, "store_error": self.store_error,
                "store_warning": self.store_warning, "store_detail": self.store_detail,
                "backup_warning": self.backup_warning, "meaning": self._meaning_status()}

    def _on_get_config(self, _body: dict[str, Any]) -> dict[str, Any]:
        return {"api_key": self.config.api_key, "base_url": self.config.base_url,
                "model": self.config.model, "thinking": self.config.thinking,
                "request_timeout": self.config.request_timeout,
                "turn_timeout": self.config.turn_timeout,
                "max_round_trips": self.config.max_round_trips,
                "first_token_timeout": self.config.first_token_timeout,
                "temperature": self.config.temperature, "tool_set": self.config.tool_set,
                "memory_writer": self.config.memory_writer,
                "trash_days": self.config.trash_days,
                "recall_by_meaning": self.config.recall_by_meaning,
                "meaning": self._meaning_status(),
                "language": self.config.language,
                "share_memory": self.config.share_memory,
                "share_read_only": self.config.share_read_only,
                "share_token": self.config.share_token, "share_port": self.config.share_port,
                "home": str(self.home or self.db_path.parent),
                "shortcuts": dict(self.config.shortcuts)}

    def _on_set_config(self, body: dict[str, Any]) -> dict[str, Any]:
        settable = ("api_key", "base_url", "model", "thinking", "request_timeout", "turn_timeout",
                    "max_round_trips", "shortcuts", "trash_days", "first_token_timeout",
                    "temperature", "tool_set", "memory_writer", "recall_by_meaning",
                    "share_memory",
                    "share_read_only", "share_token", "language")
        unknown = sorted(set(body) - set(settable))
        if unknown:
            raise _Refusal(tr("unknown setting(s): {names}", names=", ".join(unknown)))
        changes = {k: v for k, v in body.items() if v is not None}
        if changes.get("share_memory") is True and not self.saved_config.share_token:
            changes["share_token"] = new_token()  # what HTTP clients send; see core.share
        self._save_config(changes)
        self._make_session()
        return {"status": "config_updated"}

    def _save_config(self, changes: dict[str, Any]) -> None:
        """Save `changes` over the saved config and only then apply them.

        A one-run override stays in force for the settings the person did not just set,
        and is never written to the file.
        """
        try:
            saved = updated(self.saved_config, **changes)
            save_config(self.config_file, saved)
        except ConfigError as error:
            raise _Refusal(str(error)) from None
        except OSError as error:
            raise _Refusal(tr("could not save the config ({error})",
                              error=error.strerror)) from None
        self.saved_config = saved
        self.overrides = {k: v for k, v in self.overrides.items() if k not in changes}
        self.config = updated(saved, **self.overrides)
        if self.store is not None:
            self.store.trash_days = self.config.trash_days
        if self.meaning_wanted():
            self._start_meaning()
        else:
            self._stop_meaning()

    def _on_test_connection(self, body: dict[str, Any]) -> dict[str, Any]:
        """List the endpoint's models with the given (unsaved) settings: this checks the
        address and the key without spending tokens, then whether the model exists."""
        changes = {k: body[k] for k in ("api_key", "base_url", "model") if body.get(k)}
        try:
            config = updated(self.config, **changes)
        except ConfigError as error:
            raise _Refusal(str(error)) from None
        if not config.api_key:
            raise _Refusal(no_key())
        client = make_client(config.api_key, config.base_url,
                             min(config.request_timeout, 15.0))
        started = time.perf_counter()
        try:
            models = sorted(m.id for m in client.models.list())
        except (openai.OpenAIError, ValueError, OSError) as error:
            raise _Refusal(describe_api_error(error, config.base_url)) from None
        finally:
            client.close()
        elapsed_ms = (time.perf_counter() - started) * 1000
        found = config.model in models
        # llama-server lists the one model it loaded and answers to any name.
        serves_any = offer.is_local(config.base_url) and len(models) == 1
        if found:
            verdict = tr("The model {model} is available.", model=config.model)
        elif serves_any:
            verdict = tr("The server runs {model}, which answers whatever model name is set.",
                         model=models[0])
        else:
            listed = (", ".join(models[:8]) or tr("none")) + (" …" if len(models) > 8 else "")
            verdict = tr("The server does not list the model {model}; it lists {models}.",
                         model=config.model, models=listed)
        message = tr("Connected to {url} in {ms} ms. {verdict}", url=config.base_url,
                     ms=f"{elapsed_ms:.0f}", verdict=verdict)
        return {"message": message, "model_found": found or serves_any, "models": models,
                "elapsed_ms": elapsed_ms}

    def _on_list_models(self, body: dict[str, Any]) -> dict[str, Any]:
        """The endpoint's models, for the model picker: kept for the session per address,
        fetched again with `refresh`. `base_url` and `api_key` may name unsaved settings."""
        changes = {k: body[k] for k in ("api_key", "base_url") if body.get(k)}
        try:
            config = updated(self.config, **changes)
        except ConfigError as error:
            raise _Refusal(str(error)) from None
        key = (config.base_url, config.api_key)
        if body.get("refresh") or key not in self._models:
            if not config.api_key:
                raise _Refusal(no_key())
            client = make_client(config.api_key, config.base_url,
                                 min(config.request_timeout, 15.0))
            try:
                self._models[key] = sorted(m.id for m in client.models.list())
            except (openai.OpenAIError, ValueError, OSError) as error:
                raise _Refusal(describe_api_error(error, config.base_url)) from None
            finally:
                client.close()
        return {"models": self._models[key], "current": config.model}

    def _on_get_tool_limits(self, _body: dict[str, Any]) -> dict[str, Any]:
        return dict(self.limiter.limits)

    def _on_set_tool_limits(self, body: dict[str, Any]) -> dict[str, Any]:
        """Limits take effect only once they are saved: a refused write changes nothing."""
        try:
            limits = validate_limits(body, self.limiter.limits)
        except ValueError as error:
            raise _Refusal(str(error)) from None
        self._save_config({"tool_limits": limits})
        self.limiter.limits = dict(limits)
        return {"status": "tool_limits_updated", "limits": dict(self.limiter.limits)}

    def _on_get_history(self, _body: dict[str, Any]) -> dict[str, Any]:
        history = self._history()
        messages = history.messages(cap=SHOWN_CHARS)
        answer = {"history": messages, "conversation_id": history.conversation_id}
        if not messages and not history.legacy:
            answer["remembered"] = glance(history.store)  # what an empty chat shows
        return answer

    def _on_save_history(self, body: dict[str, Any]) -> dict[str, Any]:
        try:
            self._history().replace(body.get("messages"))
        except ValueError as error:
            raise _Refusal(str(error)) from None
        return {"status": "history_saved"}

    def _on_shutdown(self, _body: dict[str, Any]) -> dict[str, Any]:
        self.close()
        return {"status": "shutdown"}

    def _on_cancel(self, _body: dict[str, Any]) -> dict[str, Any]:
        self.cancel()
        return {"status": "cancelled"}


class _Refusal(Exception):
    """A packet that cannot be served; the message is the answer's error."""

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.data = data
