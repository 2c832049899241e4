"""A loopback model for importing past conversations, in tests and the quick benchmark.

The scripted server plays steps in order, which cannot follow a build that sends one
request per piece while chat requests come between. This one answers by what it is
asked: a memory writer's JSON request (the piece's lines, "Name: text") gets the facts
its lines state in a few fixed shapes ("I live in Paris" is Name lives in Paris); any
other request gets the line of its prompt that shares the most words with the last
message. Scripted steps,
when a test plays some, come first.
"""

from __future__ import annotations

import json
import re
from typing import Any

from core.testing.loopback_llm import ScriptedOpenAIServer

_SHAPES = (
    (re.compile(r"\bI (?:live|am living) in ([A-Z]\w*(?: [A-Z]\w*)*)"), "lives in"),
    (re.compile(r"\bI (?:moved|have moved|just moved) to ([A-Z]\w*(?: [A-Z]\w*)*)"),
     "lives in"),
    (re.compile(r"\bI work as an? ([\w ]*\w)"), "works as"),
    (re.compile(r"\bI went to (?:the |a )?([\w ]*\w)"), "went to"),
    (re.compile(r"\bI (?:love|like) ([\w ]*\w)"), "likes"),
    (re.compile(r"\bI (?:started|began) (?:a |an |the )?([\w ]*\w)"), "started"),
    (re.compile(r"\b[Mm]y (\w+) is full of ([\w ]*\w)"), "has"),
)


def facts_in(piece: str) -> list[list[str]]:
    """The facts a piece's lines state, in the shapes above, with the words that say
    when ("yesterday"), as the memory writer is asked to give them."""
    facts = []
    for line in piece.splitlines():
        name, _, text = line.partition(": ")
        if not text or len(name.split()) > 2:
            continue
        when = "yesterday" if "yesterday" in text.casefold() else ""
        for shape, relation in _SHAPES:
            for match in shape.finditer(text):
                facts.append([name, relation, match.group(match.lastindex).strip(), when])
    return facts[:8]


class RememberingModel(ScriptedOpenAIServer):
    def next_step(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            self.requests.append(body)
            if self.script:
                return self.script.pop(0)
        last = str(body["messages"][-1].get("content") or "")
        if body.get("response_format"):
            return {"text": json.dumps({"facts": facts_in(last)})}
        if "Gold answer:" in last:  # a benchmark's judge: the gold's words in the answer
            gold, answer = last.split("Gold answer:", 1)[1].split("Generated answer:", 1)
            return {"text": "CORRECT" if _words(gold) & _words(answer) else "WRONG"}
        return {"text": _best_line(body, last)}


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.casefold()) if len(w) > 3}


def _best_line(body: dict[str, Any], last: str) -> str:
    asked = [line for line in last.splitlines() if "?" in line]
    wanted = _words(asked[-1].rsplit("Question:", 1)[-1] if asked else last)
    lines = [line.strip(" -") for m in body["messages"] if m.get("role") != "system"
             for line in str(m.get("content") or "").splitlines()
             if line.strip() and "?" not in line]  # not the question itself
    best = max(lines, key=lambda line: len(wanted & _words(line)), default="")
    return best[:120] if best and wanted & _words(best) else "Not mentioned"
