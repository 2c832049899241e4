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
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
