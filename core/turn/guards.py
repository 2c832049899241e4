"""Notices a turn going round in circles, so the model is made to answer instead.

Seen with a 1.5B model: one introduction produced the same memory_commit ten times and
used all twelve round trips without an answer; another turn made twelve identical invalid
calls. An identical call is not run again; after a repeat, a refusal repeated or two
invalid calls, the next request asks for an answer (`tool_choice: "none"`, the tools
still listed so the prompt stays the same for the server's cache).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

STRIKES_TO_ANSWER = 2


def _key(name: str, raw: str) -> tuple[str, str]:
    try:
        return name, json.dumps(json.loads(raw or "{}"), sort_keys=True, ensure_ascii=False)
    except (ValueError, RecursionError):
        return name, (raw or "").strip()


class LoopGuard:
    def __init__(self) -> None:
        self.replies: dict[tuple[str, str], str] = {}
        self.refused: Counter[str] = Counter()
        self.strikes = 0

    def repeat(self, name: str, raw: str) -> str | None:
        """The reply for a call made before in this turn with the same arguments, which
        must not run again; None for a new call."""
        earlier = self.replies.get(_key(name, raw))
        if earlier is None:
            return None
        self.strikes += STRIKES_TO_ANSWER
        return (f"Not run: this exact {name} call was already made in this turn (its "
                f"result: {earlier[:300]}). Do not repeat it; answer the user now.")

    def record(self, name: str, raw: str, outcome: dict[str, Any], reply: str) -> None:
        self.replies[_key(name, raw)] = reply
        if outcome.get("success"):
            return
        if outcome.get("rejected"):
            self.refused[name] += 1
            self.strikes += STRIKES_TO_ANSWER if self.refused[name] > 1 else 1
        elif outcome.get("invalid"):
            self.strikes += 1

    @property
    def must_answer(self) -> bool:
        return self.strikes >= STRIKES_TO_ANSWER
