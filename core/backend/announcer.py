"""Tells each committed memory change once, as a `memory_changed` event with the counts
after it: the window updates its lists, picture, review count and status from this instead
of asking again. Keeps the counts up to date from each change's row images (a count of a
memory of 300,000 facts takes about 0.2 s, a change's delta nothing), and looks for the
changes other programs (an MCP server, `--tool`) commit to the same file."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from typing import Any

from core.events import Event
from core.store import GraphStore, review
from core.store.counts import delta as counts_delta
from core.store.counts import memory_counts, shown_counts_line
from core.store.graph import Change
from core.store.outside import OutsideChanges
from core.tools import approvals

log = logging.getLogger(__name__)

Sink = Callable[[str, dict[str, Any]], None]


def memory_state(store: GraphStore, counts: dict[str, int]) -> dict[str, Any]:
    """MEMORY_STATE's answer, and what each change event carries: the counts, the line
    the status bar shows, and the review inbox's count."""
    return {"counts": counts, "counts_line": shown_counts_line(counts),
            "review_count": review.count(store)}


class Announcer:
    def __init__(self, store: GraphStore, sink: Callable[[], Sink],
                 touched: Callable[[dict[str, Any]], None]) -> None:
        """`sink()` answers where events go now (the backend's own channel); `touched`
        hears what each of this program's changes touched (the meaning indexer)."""
        self.store, self._sink, self._touched = store, sink, touched
        self._counts: dict[str, int] | None = None
        self._outside = OutsideChanges(store.conn)
        store.on_commit.append(self.announce)

    def announce(self, change: Change, elsewhere: bool = False) -> None:
        if not elsewhere:
            self._outside.own(change.id)
            self._touched(change.touched())
        moved = counts_delta(change.ops)
        if moved is None or self._counts is None:
            self._counts = None  # counted afresh below
        else:
            self._counts = {k: v + moved.get(k, 0) for k, v in self._counts.items()}
        event = {**change.touched(), **self.state()}
        if elsewhere:  # no turn's trace holds its call, so tell it
            event["arguments"] = change.arguments
        if change.tool == "undo_turn" and isinstance(change.arguments, dict):
            event["undone_turns"] = [change.arguments.get("turn_id"),
                                     *change.arguments.get("later_turns", [])]
        self._sink()(Event.MEMORY_CHANGED, event)

    def state(self) -> dict[str, Any]:
        """The counts, the line the status bar shows, and the review inbox's count."""
        if self._counts is None:
            self._counts = memory_counts(self.store.conn)
        return memory_state(self.store, dict(self._counts))

    def known_counts(self) -> dict[str, int] | None:
        """The counts as of the last committed change, when they are known (another thread
        may read them: they are replaced whole, never changed in place)."""
        counts = self._counts
        return dict(counts) if counts is not None else None

    def forget_counts(self) -> None:
        self._counts = None

    def look_again(self) -> None:
        """This connection brought in changes made on another device (a sync): tell them
        at the next look, as changes made elsewhere."""
        self._outside.look_again()
        self._counts = None

    def notice_outside_changes(self) -> int:
        """Tell the changes other programs committed since the last look; answers how
        many. It costs one PRAGMA when nothing changed."""
        try:
            changes = self._outside.poll()
        except sqlite3.Error as error:  # a busy or damaged file: the next look tries again
            log.warning("could not read changes made elsewhere: %s", error)
            return 0
        for change in changes:
            self.announce(change, elsewhere=True)
        self._tell_requests()
        return len(changes)

    def _tell_requests(self) -> None:
        """Another app's call over its budget waits for the person, as the model's do."""
        try:
            for approval_id in self._outside.requests():
                self._sink()(Event.APPROVAL_REQUESTED,
                             approvals.approval(self.store, approval_id))
        except (sqlite3.Error, approvals.ApprovalError) as error:
            log.warning("could not read the requests made elsewhere: %s", error)
