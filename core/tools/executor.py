"""Runs one tool call: validate, check the turn's limits, run it in one transaction.

Whatever happens, the caller gets `{"success": True, "data": {...}}` or
`{"success": False, "error": "..."}`; nothing raises and a failed call writes nothing.
A model's call that would destroy more rows than the turn's budget has left is rolled
back whole and refused with `over_budget` (what it would have taken away), so that only
the person can allow it.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Collection
from typing import Any

from core.store import GraphStore, StoreError, describe_sqlite_error
from core.tools.base import Outcome, ToolError
from core.tools.budget import (
    Destroyed,
    OverBudget,
    destroyed_rows,
    preview_lines,
    rewritten,
    summarize,
    written_rows,
)
from core.tools.limits import ToolLimiter
from core.tools.registry import REGISTRY
from core.tools.validation import ArgumentError, parse_arguments

log = logging.getLogger(__name__)


def failure(error: str, **extra: Any) -> dict[str, Any]:
    return {"success": False, "error": error, **extra}


class ApprovalMismatch(ToolError):
    """An approved call would now take away other rows than the person saw."""


class ToolExecutor:
    """The only way tools touch the store, for the model and for the person alike."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store

    def execute(self, tool: str, arguments: Any = None, *, turn_id: str | None = None,
                actor: str = "user", limiter: ToolLimiter | None = None,
                approved_rows: Collection[tuple[str, int, str]] | None = None,
                via: str | None = None, hold: str | None = None) -> dict[str, Any]:
        """Run `tool`. With a `limiter` (the model's calls) the turn's caps and budget apply.

        `approved_rows` runs a call the person allowed: it must take away exactly those
        rows ((table, id, fingerprint of the row as it was)), or nothing is written.
        `via` is how an app reached the memory, which it cannot choose (see
        `core.share.identity`), kept beside the actor in the change log. `hold` (why)
        runs nothing that takes rows away: the call is rolled back and answered as a
        request for the person, with exactly the rows it would take (a forget that
        reached past what was asked, see `core.writer.forget_scope`).
        """
        started = time.perf_counter()
        try:
            args = parse_arguments(tool, arguments)
        except ArgumentError as error:
            return failure(str(error), invalid=True, code="invalid")
        if limiter is not None:
            refusal = limiter.refusal(tool, args)
            if refusal:
                return failure(refusal, rejected=True, code="invalid", refused="limit")
            limiter.count(tool, args)
        try:
            outcome = self._run(tool, args, turn_id, actor, limiter=limiter,
                                approved_rows=approved_rows, via=via, hold=hold)
        except OverBudget as over:
            return self._over_budget(tool, args, over, limiter)
        except StoreError as error:
            return failure(f"{tool}: {error}", code=error.code.value)
        except ToolError as error:
            return failure(f"{tool}: {error}", code="invalid")
        except sqlite3.Error as error:
            return failure(f"{tool}: {describe_sqlite_error(error)}", code="store")
        except Exception as error:  # a bug must not take the backend down
            log.exception("tool %s failed", tool)
            return failure(f"{tool}: internal error ({type(error).__name__}: {error}); "
                           "nothing was written", code="internal")
        data = {"result": outcome.text, **outcome.data,
                "duration_ms": round((time.perf_counter() - started) * 1000, 3)}
        return {"success": True, "data": data}

    def _run(self, tool: str, args: dict[str, Any], turn_id: str | None, actor: str, *,
             limiter: ToolLimiter | None,
             approved_rows: Collection[tuple[str, int, str]] | None,
             via: str | None = None, hold: str | None = None) -> Outcome:
        spec = REGISTRY[tool]
        if not spec.writes:
            return spec.handler(self.store, args)
        spent = written = 0
        with self.store.write(tool, args, turn_id, actor, via) as change:
            outcome = spec.handler(self.store, args)
            if spec.destroys:
                rows = destroyed_rows(change.ops)
                spent = len(rows)
                if approved_rows is not None and \
                        {r.key() for r in rows} != {tuple(r) for r in approved_rows}:
                    raise ApprovalMismatch(
                        "the memory changed since the person was asked: the call would now "
                        f"{summarize(rows)}, not what was approved. Nothing was changed.")
                if hold and spent:
                    raise OverBudget(rows, preview_lines(self.store, rows), 0, reason=hold)
                if limiter is not None and spent and spent > limiter.budget_left():
                    raise OverBudget(rows, preview_lines(self.store, rows),
                                     limiter.budget_left())
            written = self._check_writes(change.ops, limiter, approved_rows is not None)
            change.summary = outcome.summary or outcome.text.splitlines()[0][:200]
        if limiter is not None:
            limiter.spend(spent)
            limiter.spend_writes(written)
        outcome.data["change_id"] = change.id
        if spent:
            outcome.data["destroyed"] = spent
        return outcome

    def _check_writes(self, ops: list[dict[str, Any]], limiter: ToolLimiter | None,
                      approved: bool) -> int:
        """Rows the call added or changed; over the caller's write budget (other apps
        have one) the call is rolled back and waits for the person like a removal."""
        written = written_rows(ops)
        left = None if limiter is None or approved else limiter.writes_left()
        if left is not None and written > left:
            rows = destroyed_rows(ops)
            shown = [Destroyed(op["table"], op["id"],
                               "added" if op["before"] is None else "changed", "")
                     for op in ops if "id" in op and rewritten(op)]
            raise OverBudget(rows, preview_lines(self.store, _once(shown)), left,
                             reason="writes", written=written)
        return written

    @staticmethod
    def _over_budget(tool: str, args: dict[str, Any], over: OverBudget,
                     limiter: ToolLimiter | None) -> dict[str, Any]:
        if limiter is None or over.reason == "asked":
            reason = (f"Not done: {tool} would {summarize(over.rows)}, more than the "
                      "person asked to forget. Nothing was changed; only the person can "
                      "allow this")
        elif limiter.hour_left() < limiter.turn_left():
            reason = _too_much(tool, over, f"{over.left} of {limiter.hour_rows} rows left "
                               "this hour, across turns: that much was forgotten recently")
        else:
            reason = _too_much(tool, over, f"{over.left} of "
                               f"{limiter.limits['destroyed_rows_max']} rows left")
        writes = over.reason == "writes"
        summary = (f"add or change {over.written} memories" if writes
                   else summarize(over.rows))
        request = {"tool": tool, "arguments": args, "reason": over.reason,
                   "count": over.written if writes else len(over.rows),
                   "summary": summary, "preview": over.preview,
                   "rows": [list(r.key()) for r in over.rows]}
        return failure(reason, rejected=True, over_budget=request, refused="budget")

    def undo(self, change_id: int, turn_id: str | None = None) -> dict[str, Any]:
        """Undo one logged change; refused, with the reason, if a later change is in the way."""
        if isinstance(change_id, bool) or not isinstance(change_id, int):
            return failure(f"change_id must be a whole number, not {change_id!r}",
                           code="invalid")
        try:
            undo_id = self.store.undo(change_id, turn_id)
        except StoreError as error:
            return failure(str(error), code=error.code.value)
        except sqlite3.Error as error:
            return failure(describe_sqlite_error(error), code="store")
        return {"success": True, "data": {"change_id": undo_id, "undone": change_id}}


def _too_much(tool: str, over: OverBudget, left: str) -> str:
    return (f"Tool call rejected: {tool} would {summarize(over.rows)}, more than this turn "
            f"may take away ({left}). Nothing was changed; only the person can allow this")


def _once(rows: list[Destroyed]) -> list[Destroyed]:
    """Each row once, where it was first touched."""
    seen: dict[tuple[str, int], Destroyed] = {}
    for row in rows:
        seen.setdefault((row.table, row.id), row)
    return list(seen.values())
