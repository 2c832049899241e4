"""The tools' schemas as the model and the validator see them, read from the registry.

Descriptions are short on purpose: they are sent with every model request.
"""

from __future__ import annotations

import copy
from typing import Any

from core.tools import memory, persona, tasks  # noqa: F401  (declares the tools)
from core.tools.registry import MODEL, REGISTRY
from core.tools.schema_parts import MAX_STRING, TASK_STATES, cap_strings

TOOL_NAMES: tuple[str, ...] = tuple(REGISTRY)
PARAMETERS: dict[str, dict[str, Any]] = {
    name: cap_strings(spec.parameters) for name, spec in REGISTRY.items()}
DESCRIPTIONS: dict[str, str] = {name: spec.description for name, spec in REGISTRY.items()}
MODEL_TOOLS: tuple[str, ...] = tuple(n for n, s in REGISTRY.items() if MODEL in s.audience)

__all__ = ["DESCRIPTIONS", "MAX_STRING", "MODEL_TOOLS", "PARAMETERS", "TASK_STATES",
           "TOOL_NAMES", "openai_tools"]


def openai_tools(names: tuple[str, ...] = MODEL_TOOLS) -> list[dict[str, Any]]:
    """The `tools` parameter of a chat completions request."""
    return [
        {"type": "function", "function": {
            "name": n, "description": DESCRIPTIONS[n],
            "parameters": copy.deepcopy(REGISTRY[n].parameters),
        }}
        for n in names
    ]
