"""What undoing one logged row change does to the row as it is now, compared column by
column, not as a whole row.

A later change that only mentioned a node or a fact again (its count, its time, its
confidence) did nothing that undo would throw away: the earlier change is taken back
around it. A later change that rewrote the row itself (renamed it, replaced or deleted
the fact) is the later change's work: that row stays as it is, and the undo says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Row = dict[str, Any]

# Counts a change adds to: undo takes off what it added, and keeps what came later.
COUNTERS = frozenset({"mention_count"})
# Bookkeeping a later change may move on its own: undo puts it back only if nothing did.
QUIET = frozenset({"updated_at", "confidence", "reviewed_at"})
NOT_COMPARED = frozenset({"id", "reviewed_at"})


@dataclass
class Step:
    """What to do: `action` is "delete", "insert", "update" or "keep"; `values` the
    image to insert or the columns to update; `why` says why a row is kept: "changed"
    and "gone" (a later change rewrote or removed it: refused, and told), "again" (a
    later change stated it again: it stays theirs, quietly)."""

    action: str
    values: Row | None = None
    why: str = ""


def _rewritten(since: Row, now: Row) -> bool:
    """Whether a later change wrote anything but bookkeeping to the row."""
    return any(now.get(k) != v for k, v in since.items()
               if k not in NOT_COMPARED and k not in QUIET and k not in COUNTERS and k in now)


def counts_back(since: Row, now: Row, floor: int = 0) -> Row:
    """The counters less what the change added (`since` minus what it started from is
    folded into the caller's `since`): what later changes counted stays."""
    return {k: max(floor, (now.get(k) or 0) - (since.get(k) or 0)) for k in COUNTERS
            if isinstance(since.get(k), int) and isinstance(now.get(k), int)}


def step(before: Row | None, after: Row | None, now: Row | None) -> Step:
    """How to take back the change `before` → `after` from the row as it is `now`."""
    if before is None:  # the change made the row
        if now is None:
            return Step("keep")  # gone already: nothing to take back
        if after is None or _rewritten(after, now):
            return Step("keep", why="changed")
        if any(now.get(k) != after.get(k) for k in COUNTERS if k in after):
            return Step("keep", counts_back(after, now, floor=1), why="again")
        return Step("delete")
    if after is None:  # the change removed the row
        return Step("insert", before) if now is None else Step("keep", why="changed")
    if now is None:
        return Step("keep", why="gone")
    mine = {k: v for k, v in after.items() if before.get(k) != v}  # what the change wrote
    if _rewritten(mine, now):
        return Step("keep", why="changed")
    values: Row = {}
    for column, old in before.items():
        if column in NOT_COMPARED or column not in after or column not in now:
            continue
        new = after[column]
        if column in COUNTERS and isinstance(old, int) and isinstance(new, int) \
                and isinstance(now[column], int):
            values[column] = max(0, now[column] - (new - old))
        elif now[column] == new:
            values[column] = old
    return Step("update", {k: v for k, v in values.items() if now.get(k) != v})
