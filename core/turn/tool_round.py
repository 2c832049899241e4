"""One round of tool calls in a turn: each call run through the turn's executor and the
loop guard, recorded for the trace and the history, and answered to the model; the
assistant message that repeats the calls; and a context_rewrite's summary in place of
the turn's earlier tool exchanges."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from core.events import Event
from core.redaction import scrub_known
from core.turn.guards import LoopGuard
from core.turn.turn_result import TurnResult

Progress = Callable[[str, dict[str, Any]], None]
RunTool = Callable[[str, str], dict[str, Any]]


MAX_KEPT_ARGUMENTS = 20_000  # characters of a call's arguments kept in history and trace


def _kept_arguments(raw: str) -> Any:
    """A call's arguments as history and the trace keep them: parsed when they are JSON,
    and never more than a sane size (a model can send megabytes of invalid text)."""
    if len(raw) > MAX_KEPT_ARGUMENTS:
        return f"{raw[:MAX_KEPT_ARGUMENTS]}… [{len(raw) - MAX_KEPT_ARGUMENTS:,} more characters]"
    try:
        return json.loads(raw or "{}")
    except (ValueError, RecursionError):
        return raw


def _counts(outcome: dict[str, Any]) -> dict[str, int]:
    """How many facts a call made, reinforced or touched: what the chat's memory line
    under a reply sums up."""
    data = (outcome.get("data") or {}) if outcome.get("success") else {}
    counts = {k: data[k] for k in ("created", "reinforced") if isinstance(data.get(k), int)}
    if isinstance(data.get("edge_ids"), list):
        counts["rows"] = len(data["edge_ids"])
    return counts


def assistant_message(text: str, reasoning: str,
                       calls: list[dict[str, str]]) -> dict[str, Any]:
    """The model's tool-calling message, as the next request must repeat it."""
    # Content is "" rather than null when there is none: llama-cpp-python refuses a null
    # (500, "Input should be a valid string"), and the OpenAI API takes either.
    message: dict[str, Any] = {"role": "assistant", "content": text, "tool_calls": [
        {"id": c["id"], "type": "function",
         "function": {"name": c["name"], "arguments": c["arguments"]}} for c in calls]}
    if reasoning:
        # DeepSeek's thinking mode: within a turn, a tool-calling message goes back with
        # its reasoning (its documentation requires it). Earlier turns are sent as their
        # words only, without tool calls, and so without reasoning, as it allows.
        message["reasoning_content"] = reasoning
    return message


def run_call(call: dict[str, str], run_tool: RunTool, progress: Progress,
             result: TurnResult, guard: LoopGuard) -> tuple[str, str | None]:
    """Run one call through `run_tool` (the turn's executor, limits and checks), unless
    the loop guard sees it repeated; record it in `result` and tell it on `progress`.
    Answers the reply the model reads and, for context_rewrite, its summary."""
    progress(Event.TOOL_STARTED, {"name": call["name"],
                                  "arguments": scrub_known(call["arguments"])})
    started = time.perf_counter()
    repeated = guard.repeat(call["name"], call["arguments"])
    if repeated is not None:
        outcome = {"success": False, "error": repeated, "rejected": True,
                   "refused": "repeat"}
    else:
        outcome = run_tool(call["name"], call["arguments"])
    duration = round((time.perf_counter() - started) * 1000, 3)
    if outcome["success"]:
        reply = outcome["data"]["result"]
    else:
        reply = outcome["error"] if outcome.get("rejected") else f"Error: {outcome['error']}"
    if repeated is None:
        guard.record(call["name"], call["arguments"], outcome, reply)
    arguments = _kept_arguments(scrub_known(call["arguments"]))
    record = {"name": call["name"], "arguments": arguments, "result": reply,
              "duration_ms": duration, "success": outcome["success"],
              "counts": _counts(outcome)}
    if outcome.get("approval_id") is not None:
        # not refused: it waits for the person, who may allow it (see core.tools.approvals)
        record["waiting"] = outcome["approval_id"]
        result.tool_calls.append(record)
    elif outcome.get("rejected"):
        why = outcome.get("refused") or "other"
        result.rejected_tools.append((call["name"], outcome["error"]))
        result.refused_why.append(why)
        progress(Event.TOOL_REJECTED, {"name": call["name"], "reason": outcome["error"],
                                       "why": why})
    else:
        result.tool_calls.append(record)
    progress(Event.TOOL_FINISHED, record)
    summary = outcome["data"].get("rewrite_summary") if outcome["success"] else None
    return reply, summary


def rewrite(messages: list[dict[str, Any]], turn_start: int, summary: str) -> None:
    """Drop this turn's earlier tool exchanges for the model's summary.

    The last assistant message with its tool replies stays whole, so every tool call
    the next request shows still has its reply.
    """
    last = max(i for i, m in enumerate(messages) if m["role"] == "assistant"
               and m.get("tool_calls"))
    if last <= turn_start:
        return
    messages[turn_start:last] = [{"role": "assistant",
                                  "content": f"[Summary of earlier tool work] {summary}"}]
