"""What a turn answers and what it is asked to do: its result, its options, how it may
end (stopped by the person, a stream of nothing, a broken reply), and the answer the app
makes when a model would only call tools."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.errors import ErrorCode
from core.store.text import has_cjk
from core.tools.registry import REGISTRY

# Earlier versions ended a turn that used every round trip with this note; such replies
# in the history are sent back to the model without it. Now the last round trip always
# ends in an answer (see ChatSession._rescue).
_STOPPED = re.compile(r"\n\n\[Stopped: the model used all \d+ round trips of this turn "
                      r"without a final answer\.\]$")


def model_words(content: str) -> str:
    """A reply as the model wrote it, without the app's own note about stopping it."""
    return _STOPPED.sub("", content)


class TurnCancelled(Exception):
    """The person stopped the turn."""

    def __init__(self, partial: str = "") -> None:
        super().__init__("cancelled")
        self.partial = partial  # text that arrived before the stop


class EmptyStream(Exception):
    """The endpoint answered a streamed request with a stream of nothing. llama-cpp-python's
    function-calling formats do this when the model wants a tool ("automatic streaming
    tool choice is not supported"); the same request without streaming works there."""


class BadReply(Exception):
    """The endpoint answered, but not with a whole chat completion stream."""

    def __init__(self, message: str, partial: str = "") -> None:
        super().__init__(message)
        self.partial = partial  # text that arrived before the stream broke off


@dataclass
class TurnResult:
    content: str = ""
    reasoning: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    rejected_tools: list[tuple[str, str]] = field(default_factory=list)  # the seed's pairs
    # …and why each was refused, in one word: limit, budget, repeat, not_offered, other
    refused_why: list[str] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    round_trips: int = 0
    error: str | None = None  # in the person's words; None when the person stopped it
    code: ErrorCode | None = None  # why it failed or stopped (see core.errors)
    cancelled: bool = False
    calls_in_text: int = 0  # calls the model wrote as reply text, taken as calls
    rescued: int = 0  # answers the app made because the model still called when told not to
    parroted: int = 0  # replies that repeated the person's words, asked again
    not_saved: str | None = None  # why the turn's memory writes failed in the store

    def data(self) -> dict[str, Any]:
        return {"content": self.content, "reasoning": self.reasoning,
                "tool_calls": self.tool_calls, "rejected_tools": self.rejected_tools,
                "refused_why": self.refused_why,
                "usage": self.usage, "round_trips": self.round_trips,
                "calls_in_text": self.calls_in_text, "rescued": self.rescued,
                "parroted": self.parroted,
                "not_saved": self.not_saved}


@dataclass
class TurnOptions:
    """What one turn sends and how long it waits. `first_token_timeout` runs from the
    request to the first chunk, `stall_timeout` between chunks; both are measured on
    chunks, so the SSE keep-alive comments some servers send do not reset them."""

    tools: list[dict[str, Any]]
    max_round_trips: int = 12
    temperature: float | None = None
    first_token_timeout: float = 120.0
    stall_timeout: float = 60.0
    max_tokens: int | None = None  # a cap on one reply (local servers run to the end)
    extra_body: dict[str, Any] = field(default_factory=dict)  # provider options (thinking)
    # Rounds of tool calls before the model must answer (None: until max_round_trips).
    # Small local models kept calling for all twelve round trips without an answer.
    max_tool_rounds: int | None = None
    # An answer without tools is asked by sending no tools at all, not tool_choice "none":
    # llama-server keeps the tools in the prompt under "none", and the model writes the
    # call as text. Cloud services honour "none" and keep their prompt cache.
    drop_tools_to_answer: bool = False
    person_text: str = ""  # the person's message: the language of a reply the app makes
    local: bool = False  # a server on this machine: it may be asked whether it is busy
    # The person's recent messages, this one last: a reply that repeats one of them is
    # held back and asked again once, the request rendered by `ask_again` (see
    # `core.turn.parrot`).
    person_said: list[str] = field(default_factory=list)
    ask_again: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None = None
    # …and when it repeats them again, the app's own reply from the memory
    fallback: Callable[[], str] | None = None
    # A question the person asked about themself: an answer opening in the first person
    # ("I play the violin.") is said to them as "you" (see `core.turn.pronouns`)
    to_person: bool = False


# What the app says when no answer came of a turn (it never pretends one did)
NO_ANSWER = "Sorry, I couldn't put an answer together this time. Please ask again."
NO_ANSWER_ZH = "抱歉，这次我没能给出回答，请再问一次。"


def made_answer(calls: list[dict[str, Any]], person_text: str) -> str:
    """A short answer built from what the turn did, for a model that would only call
    tools: in the person's language (Chinese when they wrote Chinese)."""
    chinese = has_cjk(person_text)
    wrote = [c for c in calls if c.get("success") and c["name"] in REGISTRY
             and REGISTRY[c["name"]].writes]
    if wrote:
        return "好的，我记下了。" if chinese else "Got it, I've noted that."
    return NO_ANSWER_ZH if chinese else NO_ANSWER


def add_usage(total: dict[str, Any], usage: dict[str, Any]) -> None:
    """Add one request's token counts to the turn's, nested counts too: OpenAI puts cached
    prompt tokens under `prompt_tokens_details` and reasoning tokens under
    `completion_tokens_details`; DeepSeek adds `prompt_cache_hit_tokens` at the top."""
    for key, value in usage.items():
        if isinstance(value, bool):
            continue
        if isinstance(value, int):
            total[key] = total.get(key, 0) + value
        elif isinstance(value, dict):
            inner = total.setdefault(key, {})
            if isinstance(inner, dict):
                add_usage(inner, value)
