"""Tool calls that arrive as reply text instead of as tool calls.

Servers and chat templates often do not turn the model's call into a `tool_calls` delta,
and small models write them in many shapes; each of these was seen:
- `{"name": "memory_commit", "arguments": {…}}` as the whole reply (llama-cpp-python);
- `<tool_call>{…}</tool_call>`, with or without the closing tag (Qwen templates);
- `{{"name": …, "arguments": …}}`, the doubled braces of a template's own example
  (Qwen2.5-Coder under llama-server's `--jinja`: 15 of 15 turns);
- a call followed (or preceded) by prose, several calls in a row or in a list, a call in
  a ```json fence, and JSON with single quotes or trailing commas (repaired by
  `json_repair`, a library kept for exactly this).
A call names a tool the model was offered; anything else is prose and stays an answer.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import json_repair

_TAG = re.compile(r"</?tool_call>")
_FENCE = re.compile(r"```(?:json|tool_call|tool)?[ \t]*\n?|```")
# Where a call object may start: a brace (or two) and a key that names the call.
_CALL_START = re.compile(r"\{\s*\{?\s*[\"']?(?:name|function|tool|tool_name)[\"']?\s*:")
_TAG_TEXT = "<tool_call>"
# A reply that opens like a call (JSON, a call list, a JSON fence, the tag) is held back
# from the person until it is known to be prose.
_OPENS_LIKE_CALL = re.compile(r"\s*(?:\{|\[\s*\{|```(?:json|tool_call|tool)?\s*[{\[])")
# …or may still turn out to: wait for the next piece before showing it.
_MAY_OPEN_LIKE_CALL = re.compile(r"\s*(?:\[\s*|`{1,3}(?:j|js|jso|json|t|to|too|tool\w*)?\s*)$")


@dataclass
class ReadReply:
    """A reply read for calls: the calls found, in order, and the prose left over."""

    calls: list[dict[str, str]] = field(default_factory=list)
    prose: str = ""
    end: int = 0  # where the last complete call ends in the text


def _closing(text: str, start: int) -> int:
    """The index just past the brace that closes the one at `start` (quotes of either
    kind respected), or len(text) when the object never closes (a cut-off reply)."""
    depth, quote, escaped = 0, "", False
    for i in range(start, len(text)):
        char = text[i]
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    return len(text)


def _parse(chunk: str) -> Any:
    chunk = chunk.strip()
    while chunk.startswith("{{") and chunk.endswith("}}"):
        chunk = chunk[1:-1].strip()  # a template's escaped braces, copied literally
    try:
        return json.loads(chunk)
    except (ValueError, RecursionError):
        pass
    try:
        return json_repair.loads(chunk)
    except (ValueError, RecursionError, IndexError, TypeError):
        return None


def _as_call(value: Any, offered: set[str]) -> dict[str, str] | None:
    if not isinstance(value, dict):
        return None
    inner = value.get("function") if isinstance(value.get("function"), dict) else value
    name = inner.get("name", inner.get("tool", inner.get("tool_name")))
    if not isinstance(name, str) or name.strip() not in offered:
        return None
    arguments = inner.get("arguments", inner.get("parameters", inner.get("args", {})))
    if isinstance(arguments, str):
        parsed = _parse(arguments) if arguments.strip() else {}
        arguments = parsed if isinstance(parsed, dict) else arguments
    text = arguments if isinstance(arguments, str) else json.dumps(arguments,
                                                                   ensure_ascii=False)
    return {"name": name.strip(), "arguments": text}


def _lists_of_calls(text: str, offered: set[str]) -> list[dict[str, str]] | None:
    """`[{call}, {call}]` as the whole reply."""
    stripped = _FENCE.sub("", _TAG.sub("", text)).strip()
    if not (stripped.startswith("[") and stripped.endswith("]")):
        return None
    values = _parse(stripped)
    if not isinstance(values, list) or not values:
        return None
    calls = [_as_call(v, offered) for v in values]
    return calls if all(calls) else None  # type: ignore[return-value]


def read_reply(text: str, offered: set[str]) -> ReadReply:
    """The calls in `text` and the prose around them. A reply with no call that names an
    offered tool is all prose."""
    listed = _lists_of_calls(text, offered)
    if listed:
        return ReadReply(listed, "", len(text))
    calls, prose, position, complete = [], [], 0, 0
    for found in _CALL_START.finditer(text):
        if found.start() < position:
            continue  # inside a call already taken
        end = _closing(text, found.start())
        call = _as_call(_parse(text[found.start():end]), offered)
        if call is None:
            continue
        calls.append(call)
        prose.append(text[position:found.start()])
        position = end
        complete = end if end < len(text) or text.rstrip().endswith("}") else complete
    if not calls:
        return ReadReply([], text)
    prose.append(text[position:])
    left = _FENCE.sub("", _TAG.sub("", "".join(prose)))
    return ReadReply(calls, re.sub(r"\n{3,}", "\n\n", left).strip(), complete)


def calls_in_text(text: str, offered: set[str]) -> list[dict[str, str]]:
    """The calls `text` holds, as {"name", "arguments"} with the arguments as JSON text;
    [] when it holds none."""
    return read_reply(text, offered).calls


def shown_length(text: str) -> int:
    """How much of a reply still streaming the person may see now: none of one that opens
    like a call, and nothing from the first place a call starts (prose before a call is
    shown, the call is not)."""
    return visible_prefix(text, at_start=True)[0]


def visible_prefix(text: str, at_start: bool) -> tuple[int, bool]:
    """(how much of `text`, the part of a streaming reply not shown yet, may be shown now;
    whether the rest is held for good, a call having started). `at_start`: `text` is the
    reply from its beginning, where a reply that opens like a call is held whole. Only
    the new part is looked at, so a long reply costs no more per piece."""
    stripped = text.lstrip()
    if at_start and (_OPENS_LIKE_CALL.match(text) or stripped.startswith(_TAG_TEXT)):
        return 0, True
    if at_start and ((stripped and _TAG_TEXT.startswith(stripped))
                     or _MAY_OPEN_LIKE_CALL.fullmatch(text)):
        return 0, False  # "<tool" or "```" so far: wait for the next piece
    cut, held = len(text), False
    found = _CALL_START.search(text)
    if found:
        cut, held = found.start(), True
    tagged = text.find(_TAG_TEXT)
    if tagged >= 0:
        cut, held = min(cut, tagged), True
    # The start of a marker may be the last thing that arrived: wait for the next piece.
    for marker in ("{", "<", "`"):
        last = text.rfind(marker, 0, cut)
        if last >= 0 and cut - last <= len(_TAG_TEXT) and not any(
                c in text[last + 1:cut] for c in "}>\n"):
            cut = last
    return cut, held
