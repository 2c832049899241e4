"""What other apps may do to the memory: rows per session and per hour.

A model in the window gets a budget per turn; an outside app gets one per session (one
connection) and, across every app and every server process together, per hour from the
change log: rows it may take away (the person's `destroyed_rows_max`) and rows it may
add or change (`share_write_rows`: new facts, retyped nodes and re-tagged facts alike).
A call over either is rolled back whole and waits in the window for the person's Allow,
as the model's removals do; nothing the client sends lifts it (`confirm: true` only
passes the tool's own check).
"""

from __future__ import annotations

from typing import Any

from core.share.identity import APPS_ACTOR
from core.store import GraphStore
from core.store.graph import decode_ops
from core.tools import approvals
from core.tools.budget import (
    HOUR,
    HOURLY_FACTOR,
    destroyed_rows,
    taken_this_hour,
    written_rows,
    written_this_hour,
)
from core.tools.limits import BUDGET_KEY

APPS_LIKE = APPS_ACTOR + "%"


def apps_hour(store: GraphStore, take_rows: int, write_rows: int) -> dict[str, Any]:
    """What all apps took away and wrote in the last hour, against the hour's budgets, and
    each app's share: what the window shows beside the sharing switch."""
    apps: dict[tuple[str, str | None], dict[str, Any]] = {}
    for row in store.query(  # the hour's changes read once, summed per app and in all
            "SELECT actor, via, created_at, ops FROM change_log WHERE created_at > ? AND"
            " actor LIKE ? AND undo_of IS NULL ORDER BY id", (store.log_clock() - HOUR, APPS_LIKE)):
        ops = decode_ops(row["ops"])
        app = apps.setdefault((row["actor"], row["via"]), {
            "name": row["actor"][len(APPS_ACTOR):], "via": row["via"], "changes": 0,
            "written": 0, "taken": 0})
        app["changes"] += 1
        app["last_at"] = row["created_at"]
        app["written"] += written_rows(ops)
        app["taken"] += len(destroyed_rows(ops))
    listed = sorted(apps.values(), key=lambda a: -a["last_at"])
    return {"written": sum(a["written"] for a in listed),
            "write_limit": write_rows * HOURLY_FACTOR,
            "taken": sum(a["taken"] for a in listed),
            "take_limit": take_rows * HOURLY_FACTOR,
            "session_write_limit": write_rows, "session_take_limit": take_rows,
            "apps": listed}


class AppBudget:
    """One app session's budget, shaped like the executor's `ToolLimiter`: apps have no
    per-turn call caps, only what they may take away and write."""

    def __init__(self, store: GraphStore, session_rows: int, write_rows: int) -> None:
        self.store = store
        self.limits = {BUDGET_KEY: session_rows}
        self.hour_rows = session_rows * HOURLY_FACTOR
        self.destroyed = 0
        self.write_rows = write_rows
        self.write_hour_rows = write_rows * HOURLY_FACTOR
        self.written = 0

    def refusal(self, _tool: str, _arguments: dict[str, Any] | None = None) -> str | None:
        return None

    def count(self, _tool: str, _arguments: dict[str, Any] | None = None) -> None:
        return None

    def session_left(self) -> int:
        return max(0, self.limits[BUDGET_KEY] - self.destroyed)

    turn_left = session_left  # the executor's name: an app's session is its "turn"

    def hour_left(self) -> int:
        return max(0, self.hour_rows - taken_this_hour(self.store, APPS_LIKE))

    def budget_left(self) -> int:
        return min(self.session_left(), self.hour_left())

    def spend(self, rows: int) -> None:
        self.destroyed += rows

    def session_writes_left(self) -> int:
        return max(0, self.write_rows - self.written)

    def hour_writes_left(self) -> int:
        return max(0, self.write_hour_rows - written_this_hour(self.store, APPS_LIKE))

    def writes_left(self) -> int:
        return min(self.session_writes_left(), self.hour_writes_left())

    def spend_writes(self, rows: int) -> None:
        self.written += rows

    def refusal_text(self, tool: str, request: dict[str, Any], approval_id: int | None,
                     full: str | None) -> str:
        """What the app reads when its call is over a budget: nothing changed, and where
        the request waits (or why it does not)."""
        if request.get("reason") == "writes":
            over = (f"{tool} would add or change {request['count']} rows, more than other "
                    f"apps may write ({self.session_writes_left()} of {self.write_rows} "
                    f"rows left in this session, {self.hour_writes_left()} of "
                    f"{self.write_hour_rows} this hour for all apps)")
        else:
            over = (f"{tool} would {request['summary']}, more than other apps may take away"
                    f" ({self.session_left()} of {self.limits[BUDGET_KEY]} rows left in "
                    f"this session, {self.hour_left()} of {self.hour_rows} this hour for "
                    "all apps)")
        if approval_id is not None:
            then = (f"The call waits in TrulyMEM's window for the person (request "
                    f"{approval_id}): they may allow it there. Do not send it again.")
        else:
            waiting = {"app": f"{approvals.PENDING_PER_APP} of your requests",
                       "connection": f"{approvals.PENDING_PER_CONNECTION} requests from "
                                     "this connection",
                       "token": f"{approvals.PENDING_PER_TOKEN} requests from apps using "
                                "the sharing token",
                       "all": f"{approvals.PENDING_FROM_APPS} requests from apps"}.get(
                full or "app")
            then = (f"{waiting} already wait for the person, so this one was not kept. "
                    "Tell the person: they can do it themselves in TrulyMEM's Memory tab.")
        return f"Refused for now: {over}. Nothing was changed. {then}"
