"""What other apps may take away from the memory: rows per session and per hour.

A model in the window gets a budget per turn and the person can allow a call over it; an
outside app has no person at hand to ask, so its budget is counted per session (one
connection) and, across every app and every server process together, per hour from the
change log. A call over either is rolled back whole and refused; nothing the client
sends lifts it (`confirm: true` only passes the tool's own check).
"""

from __future__ import annotations

from typing import Any

from core.store import GraphStore
from core.tools.budget import HOURLY_FACTOR, taken_this_hour
from core.tools.limits import BUDGET_KEY

APPS_ACTOR = "mcp:"  # the change log's actor for an app is "mcp:" and its name


class AppBudget:
    """One app session's budget, shaped like the executor's `ToolLimiter`: apps have no
    per-turn call caps, only what they may take away."""

    def __init__(self, store: GraphStore, session_rows: int) -> None:
        self.store = store
        self.limits = {BUDGET_KEY: session_rows}
        self.hour_rows = session_rows * HOURLY_FACTOR
        self.destroyed = 0

    def refusal(self, _tool: str, _arguments: dict[str, Any] | None = None) -> str | None:
        return None

    def count(self, _tool: str, _arguments: dict[str, Any] | None = None) -> None:
        return None

    def session_left(self) -> int:
        return max(0, self.limits[BUDGET_KEY] - self.destroyed)

    turn_left = session_left  # the executor's name: an app's session is its "turn"

    def hour_left(self) -> int:
        return max(0, self.hour_rows - taken_this_hour(self.store, APPS_ACTOR + "%"))

    def budget_left(self) -> int:
        return min(self.session_left(), self.hour_left())

    def spend(self, rows: int) -> None:
        self.destroyed += rows

    def refusal_text(self, tool: str, summary: str) -> str:
        return (f"Refused: {tool} would {summary}, more than other apps may take away "
                f"({self.session_left()} of {self.limits[BUDGET_KEY]} rows left in this "
                f"session, {self.hour_left()} of {self.hour_rows} this hour for all apps). "
                "Nothing was changed. Tell the person: they can do it themselves in "
                "TrulyMEM's Memory tab.")
