"""The quiet line under a reply that says what the turn did to the memory: people who
never open the tool trace still see that the memory works ("Remembered 2 · Updated 1 ·
Recalled 3")."""

from __future__ import annotations

import json
from typing import Any

from core import i18n
from core.i18n import N_, tr

VERBS = ("Remembered", "Updated", "Forgot", "Planned", "Recalled")
SAID = {"Remembered": N_("Remembered {count}"), "Updated": N_("Updated {count}"),
        "Forgot": N_("Forgot {count}"), "Planned": N_("Planned {count}"),
        "Recalled": N_("Recalled {count}")}


def _arguments(call: dict[str, Any]) -> dict[str, Any]:
    arguments = call.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return {}
    return arguments if isinstance(arguments, dict) else {}


def changed_memory(tool_calls: list[dict[str, Any]] | None) -> bool:
    """Whether a turn's calls wrote anything (recalling writes nothing)."""
    totals = _totals(tool_calls)
    return any(count for verb, count in totals.items() if verb != "Recalled")


def _totals(tool_calls: list[dict[str, Any]] | None) -> dict[str, int]:
    totals = dict.fromkeys(VERBS, 0)
    for call in tool_calls or []:
        if not call.get("success"):
            continue
        name, counts = call.get("name"), call.get("counts") or {}
        if name == "memory_commit":
            totals["Remembered"] += counts.get("created", 0)
            totals["Updated"] += counts.get("reinforced", 0)
        elif name == "memory_purge":
            mode = _arguments(call).get("mode", "soft")
            totals["Updated" if mode == "supersede" else "Forgot"] += counts.get("rows", 0)
        elif name in ("memory_recall", "memory_query_archived"):
            totals["Recalled"] += counts.get("rows", 0)
        elif name == "task_create":
            totals["Planned"] += 1
        elif name in ("task_set_state", "task_link_info", "persona_update", "persona_remove"):
            totals["Updated"] += 1
    return totals


def memory_line(tool_calls: list[dict[str, Any]] | None,
                rejected: list[Any] | None, undone: bool = False) -> str:
    """The summary of a turn's calls, or "" when it made none; `undone`: the person took
    its memory changes back."""
    totals = _totals(tool_calls)
    parts = [i18n.tr(SAID[verb], count=count) for verb, count in totals.items() if count]
    asked = [c.get("approval", "pending") for c in tool_calls or [] if c.get("waiting")]
    for state, one, many in (("pending", N_("1 call waits for you"),
                              N_("{count} calls wait for you")),
                             ("allowed", N_("1 call allowed by you"),
                              N_("{count} calls allowed by you")),
                             ("denied", N_("1 call denied by you"),
                              N_("{count} calls denied by you"))):
        count = asked.count(state)
        if count:
            parts.append(i18n.tr(one) if count == 1 else i18n.tr(many, count=count))
    refused = len(rejected or [])
    if refused:
        parts.append(tr("1 call refused") if refused == 1
                     else tr("{count} calls refused", count=refused))
    if undone and parts:
        parts.append(tr("taken back"))
    return " · ".join(parts)
