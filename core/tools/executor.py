"""Runs one tool call: validate, check the turn's limits, run it in one transaction.

Whatever happens, the caller gets `{"success": True, "data": {...}}` or
`{"success": False, "error": "..."}`; nothing raises and a failed call writes nothing.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable
from typing import Any

from core.store import GraphStore, StoreError, describe_sqlite_error
from core.tools import memory, persona, tasks
from core.tools.base import Outcome, ToolError
from core.tools.limits import ToolLimiter
from core.tools.validation import ArgumentError, parse_arguments

log = logging.getLogger(__name__)

Handler = Callable[[GraphStore, dict[str, Any]], Outcome]

HANDLERS: dict[str, Handler] = {
    "memory_recall": memory.memory_recall,
    "memory_commit": memory.memory_commit,
    "memory_purge": memory.memory_purge,
    "memory_introspect": memory.memory_introspect,
    "memory_archive": memory.memory_archive,
    "memory_cleanup": memory.memory_cleanup,
    "memory_query_archived": memory.memory_query_archived,
    "context_rewrite": memory.context_rewrite,
    "persona_update": persona.persona_update,
    "persona_remove": persona.persona_remove,
    "persona_clear": persona.persona_clear,
    "task_create": tasks.task_create,
    "task_set_state": tasks.task_set_state,
    "task_delete": tasks.task_delete,
    "task_link_info": tasks.task_link_info,
    "task_archive": tasks.task_archive,
    "task_query": tasks.task_query,
}

# Tools that only read: run without taking the write lock.
READ_ONLY = frozenset({"memory_recall", "memory_introspect", "memory_query_archived",
                       "context_rewrite", "task_query"})


def failure(error: str, **extra: Any) -> dict[str, Any]:
    return {"success": False, "error": error, **extra}


class ToolExecutor:
    """The only way tools touch the store, for the model and for the person alike."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store

    def execute(self, tool: str, arguments: Any = None, *, turn_id: str | None = None,
                actor: str = "user", limiter: ToolLimiter | None = None) -> dict[str, Any]:
        """Run `tool`. With a `limiter` (the model's calls) the turn's caps apply."""
        started = time.perf_counter()
        try:
            args = parse_arguments(tool, arguments)
        except ArgumentError as error:
            return failure(str(error))
        if limiter is not None:
            refusal = limiter.refusal(tool, args)
            if refusal:
                return failure(refusal, rejected=True)
            limiter.count(tool, args)
        try:
            outcome = self._run(tool, args, turn_id, actor)
        except (ToolError, StoreError) as error:
            return failure(f"{tool}: {error}")
        except sqlite3.Error as error:
            return failure(f"{tool}: {describe_sqlite_error(error)}")
        except Exception as error:  # a bug must not take the backend down
            log.exception("tool %s failed", tool)
            return failure(f"{tool}: internal error ({type(error).__name__}: {error}); "
                           "nothing was written")
        data = {"result": outcome.text, **outcome.data,
                "duration_ms": round((time.perf_counter() - started) * 1000, 3)}
        return {"success": True, "data": data}

    def _run(self, tool: str, args: dict[str, Any], turn_id: str | None, actor: str) -> Outcome:
        handler = HANDLERS[tool]
        if tool in READ_ONLY:
            return handler(self.store, args)
        with self.store.write(tool, args, turn_id, actor) as change:
            outcome = handler(self.store, args)
            change.summary = outcome.summary or outcome.text.splitlines()[0][:200]
        outcome.data["change_id"] = change.id
        return outcome

    def undo(self, change_id: int, turn_id: str | None = None) -> dict[str, Any]:
        """Undo one logged change; refused, with the reason, if a later change is in the way."""
        if isinstance(change_id, bool) or not isinstance(change_id, int):
            return failure(f"change_id must be a whole number, not {change_id!r}")
        try:
            undo_id = self.store.undo(change_id, turn_id)
        except StoreError as error:
            return failure(str(error))
        except sqlite3.Error as error:
            return failure(describe_sqlite_error(error))
        return {"success": True, "data": {"change_id": undo_id, "undone": change_id}}
