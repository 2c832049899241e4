"""Turn the model's raw tool arguments into a checked dict, or a message naming the problem."""

from __future__ import annotations

import json
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from core.tools.schemas import PARAMETERS, TOOL_NAMES

_VALIDATORS = {name: Draft202012Validator(schema) for name, schema in PARAMETERS.items()}


class ArgumentError(ValueError):
    """The arguments do not fit the tool's schema; the message says where and why."""


def _where(error: ValidationError) -> str:
    path = ""
    for part in error.absolute_path:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path or "arguments"


def _shorten(text: str, limit: int = 200) -> str:
    """Keep both ends: the reason ("is greater than the maximum of 36500") comes last."""
    if len(text) <= limit:
        return text
    return text[: limit // 3] + " … " + text[-(limit - limit // 3 - 3):]


def _unencodable(value: Any, where: str = "arguments", depth: int = 0) -> str | None:
    """Where a string that SQLite cannot store (invalid UTF-8) hides, or None."""
    if depth > 64:
        return None  # the schema check reports nesting this deep
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return where
        return None
    items = value.items() if isinstance(value, dict) else enumerate(value) \
        if isinstance(value, list) else ()
    for key, item in items:
        found = _unencodable(key, where, depth + 1) if isinstance(key, str) else None
        found = found or _unencodable(item, f"{where}.{key}", depth + 1)
        if found:
            return found
    return None


def parse_arguments(tool: str, raw: Any) -> dict[str, Any]:
    """Decode (if text) and validate `raw` against the schema of `tool`."""
    if tool not in _VALIDATORS:
        known = ", ".join(TOOL_NAMES)
        raise ArgumentError(f"unknown tool {tool!r}; the tools are: {known}")
    if raw is None or raw == "":
        raw = {}
    if isinstance(raw, (str, bytes, bytearray)):
        try:
            raw = json.loads(raw)
        except (ValueError, RecursionError) as error:
            raise ArgumentError(f"arguments of {tool} are not valid JSON: {error}") from None
    if not isinstance(raw, dict):
        raise ArgumentError(f"arguments of {tool} must be a JSON object, "
                            f"not {type(raw).__name__}")
    bad_text = _unencodable(raw)
    if bad_text:
        raise ArgumentError(f"invalid arguments for {tool}: {bad_text}: text is not valid "
                            "Unicode (a lone surrogate)")
    try:
        errors = sorted(_VALIDATORS[tool].iter_errors(raw), key=lambda e: list(e.path))
    except RecursionError:
        raise ArgumentError(f"arguments of {tool} are nested too deeply") from None
    if errors:
        first = errors[0]
        more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
        raise ArgumentError(
            f"invalid arguments for {tool}: {_where(first)}: {_shorten(first.message)}{more}"
        )
    return raw
