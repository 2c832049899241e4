"""JSON-schema pieces the tool declarations are built from, and the string cap.

A tool's schema serves both the OpenAI `tools` list and validation. The validator's copy
adds a length cap to every string; the model's copy leaves it out, since it only costs
tokens on every request and the validator enforces it anyway.
"""

from __future__ import annotations

from typing import Any

MAX_STRING = 10_000
MAX_NAMES = 50  # names in one list argument
MAX_DAYS = 36_500  # a century: larger ages only overflow the clock

TASK_STATES = {
    "in_progress": "in_progress", "completed": "completed", "paused": "paused",
    "cancelled": "cancelled", "进行中": "in_progress", "已完成": "completed",
    "已暂停": "paused", "已取消": "cancelled",
}

STR: dict[str, Any] = {"type": "string"}
NAME: dict[str, Any] = {"type": "string", "minLength": 1}
NAMES: dict[str, Any] = {"type": "array", "items": NAME, "maxItems": MAX_NAMES}
DAYS: dict[str, Any] = {"type": "integer", "minimum": 0, "maximum": MAX_DAYS}
POSITIVE_DAYS: dict[str, Any] = {"type": "integer", "minimum": 1, "maximum": MAX_DAYS}


def obj(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    """An object schema that refuses unknown fields."""
    schema = {"type": "object", "properties": properties, "additionalProperties": False}
    return {**schema, "required": list(required)} if required else schema


def cap_strings(schema: Any) -> Any:
    """Give every string a length cap so one argument cannot flood the store."""
    if isinstance(schema, dict):
        capped = {k: cap_strings(v) for k, v in schema.items()}
        if capped.get("type") == "string":
            capped.setdefault("maxLength", MAX_STRING)
        return capped
    if isinstance(schema, list):
        return [cap_strings(v) for v in schema]
    return schema
