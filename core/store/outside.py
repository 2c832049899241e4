"""Changes other programs made to the same memory file, noticed without being told.

The window and any number of MCP servers (`core.share`) can write one graph file at once;
each tells its own listeners of its own commits (`GraphStore.on_commit`), but nothing
tells it of the others'. SQLite's `PRAGMA data_version` changes for a connection when
another connection has committed, and costs a few microseconds to ask, so a poll every
fraction of a second finds those commits; the change log then says what each one did,
with the row images the one change event is built from.
"""

from __future__ import annotations

import json
import sqlite3
import zlib

from core.store.graph import Change, decode_ops

MAX_PER_POLL = 500  # changes read at once; more wait for the next poll


class OutsideChanges:
    """Follows the change log of one connection's file for changes made elsewhere."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._version = self._data_version()
        self._last = self._newest()
        self._own: set[int] = set()
        self._backlog = False  # the last poll left changes for the next
        self._last_request = self._newest_request()
        self._requests_due = False  # another connection committed: it may have asked

    def _data_version(self) -> int:
        return self.conn.execute("PRAGMA data_version").fetchone()[0]

    def _newest(self) -> int:
        return self.conn.execute("SELECT coalesce(max(id), 0) FROM change_log").fetchone()[0]

    def _newest_request(self) -> int:
        return self.conn.execute("SELECT coalesce(max(id), 0) FROM approvals").fetchone()[0]

    def requests(self) -> list[int]:
        """Approval requests (an app's call over its budget) filed since the last look
        and still pending, oldest first; asked only after another connection committed."""
        if not self._requests_due:
            return []
        self._requests_due = False
        rows = self.conn.execute("SELECT id, state FROM approvals WHERE id > ? ORDER BY id",
                                 (self._last_request,)).fetchall()
        if rows:
            self._last_request = rows[-1][0]
        return [row[0] for row in rows if row[1] == "pending"]

    def own(self, change_id: int | None) -> None:
        """A change this program made and announced itself: not to be told again."""
        if change_id is not None and change_id > self._last:
            self._own.add(change_id)

    def poll(self) -> list[Change]:
        """The changes other connections committed since the last poll, oldest first."""
        version = self._data_version()
        if version == self._version and not self._backlog:
            return []
        self._version = version
        self._requests_due = True
        rows = self.conn.execute(
            "SELECT id, tool, arguments, turn_id, actor, summary, ops, undo_of, via"
            " FROM change_log"
            " WHERE id > ? ORDER BY id LIMIT ?", (self._last, MAX_PER_POLL + 1)).fetchall()
        self._backlog = len(rows) > MAX_PER_POLL
        changes = []
        for row in rows[:MAX_PER_POLL]:
            change_id = row[0]
            self._last = change_id
            if change_id in self._own:
                continue
            try:
                arguments = json.loads(row[2]) if row[2] else None
                ops = decode_ops(row[6])
            except (ValueError, TypeError, zlib.error):  # damaged: told as a bulk change
                arguments, ops = None, [{"table": "edges", "inserted": []}]
            changes.append(Change(row[1], arguments, row[3], row[4], ops, row[5] or "",
                                  row[7], id=change_id, via=row[8]))
        self._own = {i for i in self._own if i > self._last}
        return changes
