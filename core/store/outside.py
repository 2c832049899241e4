"""Changes other programs made to the same memory file, noticed without being told.

The window and any number of MCP servers (`core.share`) can write one graph file at once;
each tells its own listeners of its own commits (`GraphStore.on_commit`), but nothing
tells it of the others'. SQLite's `PRAGMA data_version` changes for a connection when
another connection has committed, and costs a few microseconds to ask, so a poll every
fraction of a second finds those commits; the change log then says what each one did,
with the row images the one change event is built from. Changes are followed in the
order they arrived in the file (`change_arrivals`): once devices sync, a change's id says
which device's range it lies in, not when it came.
"""

from __future__ import annotations

import json
import sqlite3
import zlib

from core.store.graph import Change, decode_ops

MAX_PER_POLL = 500  # changes read at once; more wait for the next poll
ARRIVALS_SCHEMA = 17


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

    def _arrivals(self) -> bool:
        return self.conn.execute("PRAGMA user_version").fetchone()[0] >= ARRIVALS_SCHEMA

    def _newest(self) -> int:
        if self._arrivals():
            return self.conn.execute("SELECT coalesce(max(seq), 0) FROM change_arrivals"
                                     ).fetchone()[0]
        return self.conn.execute("SELECT coalesce(max(id), 0) FROM change_log").fetchone()[0]

    def look_again(self) -> None:
        """This connection itself brought in changes made elsewhere (a sync): the next
        poll reads them although no other connection committed."""
        self._backlog = True

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
        if change_id is not None:
            self._own.add(change_id)

    def poll(self) -> list[Change]:
        """The changes other connections committed since the last poll, oldest first."""
        version = self._data_version()
        if version == self._version and not self._backlog:
            return []
        self._version = version
        self._requests_due = True
        columns = "c.id, c.tool, c.arguments, c.turn_id, c.actor, c.summary, c.ops," \
                  " c.undo_of, c.via"
        if self._arrivals():
            # made on another device: its name (NULL: here)
            device = ("CASE WHEN c.device IS NULL OR c.device = (SELECT device FROM"
                      " sync_self) THEN NULL ELSE coalesce((SELECT name FROM sync_devices d"
                      " WHERE d.device = c.device), c.device) END")
            rows = self.conn.execute(
                f"SELECT a.seq, {columns}, {device} FROM change_arrivals a JOIN change_log c"
                " ON c.id = a.change_id WHERE a.seq > ? ORDER BY a.seq LIMIT ?",
                (self._last, MAX_PER_POLL + 1)).fetchall()
        else:
            rows = self.conn.execute(
                f"SELECT c.id, {columns}, NULL FROM change_log c WHERE c.id > ?"
                " ORDER BY c.id LIMIT ?", (self._last, MAX_PER_POLL + 1)).fetchall()
        self._backlog = len(rows) > MAX_PER_POLL
        changes = []
        for place, *row in rows[:MAX_PER_POLL]:
            change_id = row[0]
            self._last = place
            if change_id in self._own:
                self._own.discard(change_id)
                continue
            try:
                arguments = json.loads(row[2]) if row[2] else None
                ops = decode_ops(row[6])
            except (ValueError, TypeError, zlib.error):  # damaged: told as a bulk change
                arguments, ops = None, [{"table": "edges", "inserted": []}]
            changes.append(Change(row[1], arguments, row[3], row[4], ops, row[5] or "",
                                  row[7], id=change_id, via=row[8], device=row[9]))
        return changes
