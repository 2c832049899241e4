"""The tools' schemas as the model and the validator see them, read from the registry.

Descriptions are short on purpose: they are sent with every model request. The model's
copy also leaves out the limits the validator enforces anyway (lengths and item counts),
which only cost tokens; the validator's copy caps every string.

Three sets are offered (see `registry`): "core" (what a conversation needs), "full" (core
plus the extra tools, for a turn in which the person asks for that kind of work) and
"compact" (the core tools in their compact form, for local models).
"""

from __future__ import annotations

import copy
from typing import Any

from core.tools import memory, persona, tasks  # noqa: F401  (declares the tools)
from core.tools.registry import CORE, MODEL, REGISTRY
from core.tools.schema_parts import MAX_STRING, TASK_STATES, cap_strings

TOOL_NAMES: tuple[str, ...] = tuple(REGISTRY)
PARAMETERS: dict[str, dict[str, Any]] = {
    name: cap_strings(spec.parameters) for name, spec in REGISTRY.items()}
DESCRIPTIONS: dict[str, str] = {name: spec.description for name, spec in REGISTRY.items()}
MODEL_TOOLS: tuple[str, ...] = tuple(n for n, s in REGISTRY.items() if MODEL in s.audience)
CORE_TOOLS: tuple[str, ...] = tuple(n for n in MODEL_TOOLS if REGISTRY[n].tool_set == CORE)
TOOL_SETS = ("core", "full", "compact")
_VALIDATOR_ONLY = ("minLength", "maxLength", "maxItems", "minItems", "maxProperties")

__all__ = ["CORE_TOOLS", "DESCRIPTIONS", "MAX_STRING", "MODEL_TOOLS", "PARAMETERS",
           "TASK_STATES", "TOOL_NAMES", "TOOL_SETS", "offered_names", "openai_tools"]


def _for_model(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _for_model(v) for k, v in schema.items() if k not in _VALIDATOR_ONLY}
    if isinstance(schema, list):
        return [_for_model(v) for v in schema]
    return schema


def offered_names(tool_set: str = "full") -> tuple[str, ...]:
    return MODEL_TOOLS if tool_set == "full" else CORE_TOOLS


def openai_tools(tool_set: str = "full") -> list[dict[str, Any]]:
    """The `tools` parameter of a chat completions request for `tool_set`."""
    offered = []
    for name in offered_names(tool_set):
        spec = REGISTRY[name]
        description, parameters = spec.description, spec.parameters
        if tool_set == "compact" and spec.compact is not None:
            description, parameters = spec.compact
        offered.append({"type": "function", "function": {
            "name": name, "description": description,
            "parameters": _for_model(copy.deepcopy(parameters))}})
    return offered
