"""The 17 tools' JSON schemas: one definition serves the OpenAI `tools` list and validation.

Descriptions are short on purpose: they are sent with every model request. The validator's
copy adds a length cap to every string; the model's copy leaves it out, since it only costs
tokens on every request and the validator enforces it anyway.
"""

from __future__ import annotations

import copy
from typing import Any

MAX_STRING = 10_000

TASK_STATES = {
    "in_progress": "in_progress", "completed": "completed", "paused": "paused",
    "cancelled": "cancelled", "进行中": "in_progress", "已完成": "completed",
    "已暂停": "paused", "已取消": "cancelled",
}

_STR = {"type": "string"}
_NAME = {"type": "string", "minLength": 1}
_NAMES = {"type": "array", "items": _NAME}
_DAYS = {"type": "integer", "minimum": 0}


def _obj(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    schema = {"type": "object", "properties": properties, "additionalProperties": False}
    return {**schema, "required": list(required)} if required else schema


_TRIPLET = _obj({
    "subject": _NAME, "relation": _NAME, "object": _NAME,
    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    "subject_type": _STR, "object_type": _STR,
}, ("subject", "relation", "object"))

_TOOLS: dict[str, tuple[str, dict[str, Any]]] = {
    "memory_recall": (
        "Search memory by meaning words, then follow links. Use when the snapshot lacks "
        "what you need.",
        _obj({
            "query_intent": _NAME,
            "seed_entities": _NAMES,
            "depth": {"type": "integer", "minimum": 1, "maximum": 3},
            "time_range": _obj({"days": {"type": "integer", "minimum": 1}}, ("days",)),
            "scope": {"type": "string", "enum": ["all", "persona", "tasks"]},
        }, ("query_intent",)),
    ),
    "memory_commit": (
        "Store facts the user stated as subject-relation-object triplets. Repeating a "
        "fact reinforces it.",
        _obj({
            "triplets": {"type": "array", "items": _TRIPLET, "minItems": 1, "maxItems": 50},
            "entity_types": {"type": "object", "additionalProperties": _STR},
            "temporal_tag": _STR,
        }, ("triplets",)),
    ),
    "memory_purge": (
        "Delete (soft) or supersede exactly the memories matching all criteria given. "
        "Over 20 matches needs confirm=true.",
        _obj({
            "criteria": {**_obj({
                "subject": _NAME, "subject_contains": _NAME, "relation_type": _NAME,
                "target": _NAME, "target_contains": _NAME, "source_type": _NAME,
                "target_type": _NAME,
                "time_before": {"type": "string", "minLength": 1,
                                "description": "ISO date; only memories created before it"},
            }), "minProperties": 1},
            "mode": {"type": "string", "enum": ["soft", "supersede"]},
            "new_relation": {**_obj({"relation": _NAME, "target": _NAME}), "minProperties": 1},
            "confirm": {"type": "boolean"},
        }, ("criteria",)),
    ),
    "memory_introspect": ("Counts, size and most-mentioned entities of the memory.", _obj({})),
    "memory_archive": (
        "Archive general memories untouched for `days` (default 30).",
        _obj({"days": _DAYS}),
    ),
    "memory_cleanup": (
        "Permanently remove deleted memories older than `older_than_days` (default 90). "
        "dry_run (default true) only counts.",
        _obj({"dry_run": {"type": "boolean"}, "older_than_days": _DAYS}),
    ),
    "memory_query_archived": (
        "Search archived memories by keyword; `days` limits to those archived recently.",
        _obj({"keyword": _STR, "days": {"type": "integer", "minimum": 1},
              "limit": {"type": "integer", "minimum": 1, "maximum": 100}}),
    ),
    "context_rewrite": (
        "Replace this turn's earlier tool exchanges with your summary to save context.",
        _obj({"summary": _NAME}, ("summary",)),
    ),
    "persona_update": (
        "Set your own persona attributes (role, speaking_style, personality, catchphrase, "
        "background...). mode replace clears the others first.",
        _obj({
            "attributes": {"type": "array", "minItems": 1, "maxItems": 20, "items": _obj(
                {"attribute": _NAME, "value": _NAME}, ("attribute", "value"))},
            "mode": {"type": "string", "enum": ["merge", "replace"]},
        }, ("attributes",)),
    ),
    "persona_remove": ("Remove one persona attribute.", _obj({"attribute": _NAME}, ("attribute",))),
    "persona_clear": (
        "Clear the whole persona; needs confirm=true.",
        _obj({"confirm": {"type": "boolean"}}, ("confirm",)),
    ),
    "task_create": (
        "Start a task (state in_progress), chained after the last task.",
        _obj({"task_id": _NAME, "description": _NAME, "info_nodes": _NAMES},
             ("task_id", "description")),
    ),
    "task_set_state": (
        "Change a task's state.",
        _obj({"task_id": _NAME, "state": {"type": "string", "enum": list(TASK_STATES)}},
             ("task_id", "state")),
    ),
    "task_delete": (
        "Delete a task; its info nodes too unless something else uses them.",
        _obj({"task_id": _NAME, "delete_info_nodes": {"type": "boolean"}}, ("task_id",)),
    ),
    "task_link_info": (
        "Link memories (node names) to a task.",
        _obj({"task_id": _NAME, "info_node_names": {**_NAMES, "minItems": 1}},
             ("task_id", "info_node_names")),
    ),
    "task_archive": (
        "Archive a finished task with a summary.",
        _obj({"task_id": _NAME, "summary": _STR}, ("task_id",)),
    ),
    "task_query": (
        "List tasks, newest first.",
        _obj({"limit": {"type": "integer", "minimum": 1, "maximum": 100},
              "state_filter": {"type": "string", "enum": [*TASK_STATES, "archived"]}}),
    ),
}


def _cap_strings(schema: Any) -> Any:
    """Give every string a length cap so one argument cannot flood the store."""
    if isinstance(schema, dict):
        capped = {k: _cap_strings(v) for k, v in schema.items()}
        if capped.get("type") == "string":
            capped.setdefault("maxLength", MAX_STRING)
        return capped
    if isinstance(schema, list):
        return [_cap_strings(v) for v in schema]
    return schema


TOOL_NAMES: tuple[str, ...] = tuple(_TOOLS)
PARAMETERS: dict[str, dict[str, Any]] = {n: _cap_strings(p) for n, (_, p) in _TOOLS.items()}
DESCRIPTIONS: dict[str, str] = {n: d for n, (d, _) in _TOOLS.items()}


def openai_tools(names: tuple[str, ...] = TOOL_NAMES) -> list[dict[str, Any]]:
    """The `tools` parameter of a chat completions request."""
    return [
        {"type": "function", "function": {
            "name": n, "description": DESCRIPTIONS[n],
            "parameters": copy.deepcopy(_TOOLS[n][1]),
        }}
        for n in names
    ]
