"""The events the backend tells while it works, declared once with their payloads.

A turn's events arrive on the running packet's progress channel; `MEMORY_CHANGED` and
`MEANING` belong to no packet and arrive on the backend's own channel (`Dispatcher.events`,
which the window's host and `BackendServer(progress=…)` listen to). An `Event` is a `StrEnum`,
so a sink written for the names (`"text"`) keeps working; new code compares members. The
README lists them.
"""

from __future__ import annotations

from enum import StrEnum


class Event(StrEnum):
    """Each member's comment is its payload."""

    TEXT = "text"  # {"delta": str}: the reply's next words
    REASONING = "reasoning"  # {"delta": str}: the model's thinking (DeepSeek thinking mode)
    TOOL_STARTED = "tool_started"  # {"name", "arguments"}
    TOOL_FINISHED = "tool_finished"  # {"name", "arguments", "success", "result" | "error",
    #                                   "duration_ms", "change_id"?}
    TOOL_REJECTED = "tool_rejected"  # {"name", "reason", "why"}: a limit or a rule refused
    #   it; "why" is limit, budget, repeat, not_offered or other (the reason is the model's)
    CALLS_IN_TEXT = "calls_in_text"  # {"names": [str]}: calls the model wrote as text
    USAGE = "usage"  # the endpoint's token counts for one request
    APPROVAL_REQUESTED = "approval_requested"  # an approval row: the person decides
    IMPORT_PROGRESS = "import"  # {"phase": str, "done": 0..1}: IMPORT_MEMORY's progress
    MEMORY_CHANGED = "memory_changed"  # {"change_id", "tool", "actor", "summary", "nodes",
    #   "edges", "bulk"?, "counts", "counts_line", "review_count", "arguments"?,
    #   "undone_turns"?}: one committed change, by anyone (another app's carry its
    #   arguments; undoing turns names them)
    MEANING = "meaning"  # {"state", "indexed"?, "waiting"?, "problem"?}: the indexer
    HISTORY_IMPORT = "history_import"  # {"phase": "reading" | "building" | "built" |
    #   "stopped" | "failed", "pieces", "total", "conversations", "facts", "failed",
    #   "seconds", "seconds_left", "import_id", "error"?}: reading an export, then
    #   building the memory from it a piece at a time ("failed": the endpoint failed;
    #   the build goes on from there next time)
    SYNC = "sync"  # {"joined", "name", "folder", "last_sync", "devices", "conflicts",
    #   "refused", "waiting", "error", "arrived", "renumbered"?}: the state of this
    #   device's sync set after each sync (see `core.sync.schedule`); "renumbered" once it
    #   joined a set and its rows moved into its own range of ids (read everything again)
    MODEL_DOWNLOAD = "model_download"  # {"model", "phase": "fetching" | "done" | "failed"
    #   | "cancelled", "have", "total", "seconds_left"?, "error"?}: a model of the
    #   catalogue being fetched (see `core.models.fetcher`), from its own thread
    RUNTIME_BUILD = "runtime_build"  # {"phase": "fetching" | "configuring" | "building" |
    #   "installing" | "done" | "failed" | "cancelled", "done"?: 0..1, "seconds_left"?,
    #   "seconds"?, "error"?}: the runtime being built in a source checkout
    #   (see `core.models.runtime_build`), from its own thread
    MEMORY_WRITTEN = "memory_written"  # {"turn_id", "tool_calls", "rejected_tools",
    #   "refused_why", "note", "touched"}: what the memory-writing step did after a reply
    #   was answered (its calls' own events carry "turn_id" and "after_answer": true)


TURN_EVENTS = (Event.TEXT, Event.REASONING, Event.TOOL_STARTED, Event.TOOL_FINISHED,
               Event.TOOL_REJECTED, Event.CALLS_IN_TEXT, Event.USAGE,
               Event.APPROVAL_REQUESTED, Event.IMPORT_PROGRESS)
