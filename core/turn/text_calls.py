"""Tool calls that arrive as reply text instead of as tool calls.

Some servers and chat templates do not turn the model's call into a `tool_calls` delta:
llama-cpp-python's server returned `{"name": "memory_commit", "arguments": {…}}` as the
reply, and Qwen-style models write `<tool_call>{…}</tool_call>`. Such a reply is not an
answer; when it names a tool the model was offered, it is taken as the call it is.
"""

from __future__ import annotations

import json
import re
from typing import Any

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FENCED = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
_DECODER = json.JSONDecoder()


def _objects(text: str) -> list[Any]:
    """Every JSON value in `text`, when the text is nothing but those values."""
    found, position = [], 0
    while position < len(text):
        while position < len(text) and text[position] in " \t\r\n,;":
            position += 1
        if position == len(text):
            break
        try:
            value, position = _DECODER.raw_decode(text, position)
        except ValueError:
            return []
        found.append(value)
    return found


def calls_in_text(text: str, offered: set[str]) -> list[dict[str, str]]:
    """The calls `text` consists of, as {"name", "arguments"} with the arguments as JSON
    text; [] when the text is a real answer (or names a tool not offered)."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[<`":
        return []
    tagged = _TAGGED.findall(stripped)
    if tagged:
        values = [v for chunk in tagged for v in _objects(chunk)]
    else:
        fenced = _FENCED.match(stripped)
        values = _objects(fenced.group(1) if fenced else stripped)
    if len(values) == 1 and isinstance(values[0], list):
        values = values[0]
    calls = []
    for value in values:
        if not isinstance(value, dict):
            return []
        inner = value.get("function") if isinstance(value.get("function"), dict) else value
        name = inner.get("name")
        arguments = inner.get("arguments", inner.get("parameters", {}))
        if name not in offered:
            return []
        if isinstance(arguments, str):
            text_arguments = arguments
        else:
            text_arguments = json.dumps(arguments, ensure_ascii=False)
        calls.append({"name": name, "arguments": text_arguments})
    return calls
