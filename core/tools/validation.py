"""Turn the model's raw tool arguments into a checked dict, or a message naming the problem."""

from __future__ import annotations

import json
import math
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from core.tools.registry import REGISTRY
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


_TYPES = {"string": "text", "integer": "a whole number", "number": "a number",
          "boolean": "true or false", "array": "a list", "object": "an object"}


def _reason(error: ValidationError) -> str:
    """The reason first, and the model's value only as far as it helps: a 100-item list
    reads "at most 50 items (got 100)", not a screenful of the list cut before the point."""
    kind, limit, value = error.validator, error.validator_value, error.instance
    if kind == "maxItems":
        return f"at most {limit} items (got {len(value)})"
    if kind == "minItems":
        return f"at least {limit} item{'s' * (limit != 1)} (got {len(value)})"
    if kind == "maxProperties":
        return f"at most {limit} entries (got {len(value)})"
    if kind == "minProperties":
        return f"at least {limit} entr{'ies' if limit != 1 else 'y'}"
    if kind == "maxLength":
        return f"at most {limit:,} characters (got {len(value):,})"
    if kind == "minLength":
        return "must not be empty"
    if kind in ("maximum", "minimum"):
        shown = value if len(str(value)) <= 20 else "a number far out of range"
        return f"{'at most' if kind == 'maximum' else 'at least'} {limit} (got {shown})"
    if kind == "type":
        wanted = limit if isinstance(limit, str) else limit[0]
        return f"must be {_TYPES.get(wanted, wanted)}, not {_shorten(repr(value), 60)}"
    if kind == "enum":
        return f"must be one of {', '.join(map(str, limit))} (got {_shorten(repr(value), 60)})"
    if kind == "additionalProperties" and isinstance(value, dict):
        known = list(error.schema.get("properties", {}))
        unknown = [k for k in value if k not in known]
        return (f"unknown field {_shorten(repr(unknown[0]), 40)}; use "
                + (", ".join(known) if known else "no fields"))
    if kind == "required":
        return _shorten(error.message.replace("is a required property", "is missing"))
    return _shorten(error.message)


def describe_problem(error: ValidationError, whole: str = "arguments") -> str:
    """One schema error as "where: why" (the packets' bodies are checked the same way)."""
    where = _where(error)
    return f"{whole if where == 'arguments' else where}: {_reason(error)}"


def without_empty_optionals(value: Any, schema: dict[str, Any], depth: int = 0) -> Any:
    """`value` with optional fields that are empty or placeholders ("", null, {}, [],
    "none", "N/A") left out, inner ones first: `{"relation": "", "target": ""}` is empty.

    Grammar-constrained local servers and small models fill every optional field of a
    schema, with "" or "none" when the model has nothing to say; such a field means "not
    given", not "empty name". Required fields are kept as they are, so a missing value is
    still reported.
    """
    if depth > 32:
        return value
    if isinstance(value, dict) and "properties" in schema:
        required = set(schema.get("required", ()))
        kept = {}
        for key, given in value.items():
            inner = schema["properties"].get(key) if isinstance(key, str) else None
            item = without_empty_optionals(given, inner, depth + 1) if inner else given
            if key not in required and isinstance(key, str) and _is_empty(item):
                continue
            kept[key] = item
        return kept
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [without_empty_optionals(v, schema["items"], depth + 1) for v in value]
    return value


def as_integers(value: Any, schema: dict[str, Any], depth: int = 0) -> Any:
    """`value` with integral floats (2.0) made integers where the schema asks for one:
    JSON Schema counts 2.0 as an integer, and the tool then sliced with a float."""
    if depth > 32 or not isinstance(schema, dict):
        return value
    if isinstance(value, float) and schema.get("type") == "integer" and value.is_integer():
        return int(value)
    if isinstance(value, dict) and "properties" in schema:
        return {k: as_integers(v, schema["properties"].get(k, {}), depth + 1)
                if isinstance(k, str) else v for k, v in value.items()}
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [as_integers(v, schema["items"], depth + 1) for v in value]
    return value


def _not_finite(value: Any, where: str = "", depth: int = 0) -> str | None:
    """Where a NaN or an infinity hides (JSON from a model may carry them), or None."""
    if depth > 64:
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return where or "arguments"
    if isinstance(value, dict):
        inner = [(f"{where}.{k}" if where else str(k), v) for k, v in value.items()]
    elif isinstance(value, list):
        inner = [(f"{where}[{i}]", v) for i, v in enumerate(value)]
    else:
        return None
    for place, item in inner:
        found = _not_finite(item, place, depth + 1)
        if found:
            return found
    return None


PLACEHOLDERS = {"none", "null", "n/a", "na", "-", "—", "nil", "undefined", "无", "空"}


def _is_empty(item: Any) -> bool:
    if isinstance(item, str):  # blanks stay: the schema says what a blank name lacks
        return not item or item.strip().casefold() in PLACEHOLDERS
    return item is None or (isinstance(item, (dict, list)) and not item)


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
    prepare = REGISTRY[tool].prepare
    if prepare is not None:
        raw = prepare(raw)
    raw = as_integers(without_empty_optionals(raw, PARAMETERS[tool]), PARAMETERS[tool])
    not_finite = _not_finite(raw)
    if not_finite:
        raise ArgumentError(f"invalid arguments for {tool}: {not_finite}: must be a finite "
                            "number (not NaN or infinity)")
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
            f"invalid arguments for {tool}: {_where(first)}: {_reason(first)}{more}"
        )
    return raw
