"""Per-turn caps on the memory tools the model may call.

Only calls the model makes in a turn are counted; the person's calls (EXECUTE_TOOL, the
GUI) are never limited and never reset the counters.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

DEFAULT_LIMITS: dict[str, int] = {
    "persona_query_max": 1,
    "persona_update_max": 1,
    "task_query_max": 4,
    "task_update_max": 2,
    "memory_query_max": 20,
    "memory_update_max": 10,
}

# The one table that maps each tool to its category (`memory_recall` also by scope below).
TOOL_CATEGORY: dict[str, str] = {
    "memory_recall": "memory_query",
    "memory_introspect": "memory_query",
    "memory_query_archived": "memory_query",
    "context_rewrite": "memory_query",
    "memory_commit": "memory_update",
    "memory_purge": "memory_update",
    "memory_archive": "memory_update",
    "memory_cleanup": "memory_update",
    "persona_update": "persona_update",
    "persona_remove": "persona_update",
    "persona_clear": "persona_update",
    "task_create": "task_update",
    "task_set_state": "task_update",
    "task_delete": "task_update",
    "task_link_info": "task_update",
    "task_archive": "task_update",
    "task_query": "task_query",
}
RECALL_SCOPE_CATEGORY = {"persona": "persona_query", "tasks": "task_query"}


def category_of(tool: str, arguments: dict[str, Any] | None = None) -> str:
    if tool == "memory_recall" and arguments:
        scope = arguments.get("scope")
        if isinstance(scope, str) and scope in RECALL_SCOPE_CATEGORY:
            return RECALL_SCOPE_CATEGORY[scope]
    return TOOL_CATEGORY.get(tool, "memory_query")


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

    def set_limits(self, values: dict[str, Any]) -> dict[str, Any]:
        try:
            self.limits = validate_limits(values, self.limits)
        except ValueError as error:
            return {"success": False, "error": str(error)}
        return {"success": True, "data": dict(self.limits)}

    def reset(self) -> None:
        """Start a new turn."""
        self.used.clear()

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
