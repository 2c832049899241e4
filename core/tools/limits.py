"""Per-turn caps on the memory tools the model may call, and on the rows it may destroy.

Only calls the model makes in a turn are counted; the person's calls (EXECUTE_TOOL, the
GUI) are never limited and never reset the counters. The six call limits count calls per
category; `destroyed_rows_max` counts the rows the model's calls delete, supersede,
archive or remove in one turn, however few calls that takes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from core.tools.budget import HOURLY_FACTOR
from core.tools.registry import REGISTRY

# Sized on real conversations: a three-step plan is three task_create calls plus a
# state change, an introduction can set a name and a tone at once. The caps are there to
# stop runaway loops (the loop guard stops identical repeats first), not ordinary work.
DEFAULT_LIMITS: dict[str, int] = {
    "persona_query_max": 2,
    "persona_update_max": 2,
    "task_query_max": 4,
    "task_update_max": 8,
    "memory_query_max": 20,
    "memory_update_max": 10,
    "destroyed_rows_max": 20,
}
BUDGET_KEY = "destroyed_rows_max"
CALL_LIMITS = tuple(k for k in DEFAULT_LIMITS if k != BUDGET_KEY)

def category_of(tool: str, arguments: dict[str, Any] | None = None) -> str:
    """The limit a call counts against, as its declaration in the registry says."""
    spec = REGISTRY.get(tool)
    return spec.category_for(arguments) if spec else "memory_query"


def validate_limits(values: dict[str, Any], base: dict[str, int] | None = None) -> dict[str, int]:
    """Merge `values` over `base`; raises ValueError naming the first bad entry."""
    merged = dict(base or DEFAULT_LIMITS)
    for key, value in values.items():
        if key not in DEFAULT_LIMITS:
            raise ValueError(f"unknown limit {key!r}; the limits are: "
                             + ", ".join(DEFAULT_LIMITS))
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{key} must be a whole number, not {value!r}")
        if value < 1:
            raise ValueError(f"{key} must be at least 1, not {value}")
        merged[key] = value
    return merged


class ToolLimiter:
    """Counts the model's calls per category within one turn."""

    def __init__(self, limits: dict[str, int] | None = None) -> None:
        self.limits = validate_limits(limits or {})
        self.used: Counter[str] = Counter()
        self.destroyed = 0
        # Rows the model took away in the last hour, across turns (the backend reads
        # them from the change log); None: only the per-turn budget holds.
        self.taken_this_hour: Callable[[], int] | None = None

    def set_limits(self, values: dict[str, Any]) -> dict[str, Any]:
        try:
            self.limits = validate_limits(values, self.limits)
        except ValueError as error:
            return {"success": False, "error": str(error)}
        return {"success": True, "data": dict(self.limits)}

    def reset(self) -> None:
        """Start a new turn."""
        self.used.clear()
        self.destroyed = 0

    def budget_left(self) -> int:
        """Rows the model may still delete, supersede, archive or remove in this turn,
        within what is left of the hour's (HOURLY_FACTOR turns' worth)."""
        return min(self.turn_left(), self.hour_left())

    def turn_left(self) -> int:
        return max(0, self.limits[BUDGET_KEY] - self.destroyed)

    def hour_left(self) -> int:
        if self.taken_this_hour is None:
            return self.hour_rows
        return max(0, self.hour_rows - self.taken_this_hour())

    @property
    def hour_rows(self) -> int:
        return self.limits[BUDGET_KEY] * HOURLY_FACTOR

    def spend(self, rows: int) -> None:
        self.destroyed += rows

    def writes_left(self) -> int | None:
        """Rows the caller may still add or change; None: the model's writes are capped by
        its call limits, not by rows (other apps' are, see `core.share.budget`)."""
        return None

    def spend_writes(self, rows: int) -> None:
        """The model's written rows are not budgeted."""

    def refusal(self, tool: str, arguments: dict[str, Any] | None = None) -> str | None:
        """Why this call may not run now, or None when it may."""
        category = category_of(tool, arguments)
        limit = self.limits[f"{category}_max"]
        if self.used[category] >= limit:
            return (f"Tool call rejected: {tool} would exceed the {category.replace('_', ' ')} "
                    f"limit of {limit} per turn; answer with what you have")
        return None

    def count(self, tool: str, arguments: dict[str, Any] | None = None) -> None:
        self.used[category_of(tool, arguments)] += 1
