"""What a message asks, read from its words alone: light enough for the prompt's
wording (`core.turn.prompts`) as well as for the answer's lines (`core.turn.answering`)."""

from __future__ import annotations

import re

_QUESTION = re.compile(
    r"[?？]|^\W*(?:what|where|when|who|whom|which|how|why|do|does|did|is|are|am|can|could|"
    r"tell me|remind me)\b|吗|什么|哪|谁|几|多少|怎么|是不是|有没有", re.IGNORECASE)


def is_question(message: str) -> bool:
    return bool(_QUESTION.search(message.strip()))


# A question about what remains of a plan: "what's left to do…", "which steps are still
# open", "下一步做什么", "还有什么没做"
_ASKS_WHAT_REMAINS = re.compile(
    r"\b(?:left|still (?:open|to do|need\w*|undone)|remain\w*|pending|next steps?|"
    r"do next|what'?s next|to ?do|unfinished|outstanding|not (?:yet )?done)\b|"
    r"剩|没做|没完成|未完成|待办|下一步|接下来|还要做|还有什么|还有哪些",
    re.IGNORECASE)


def asks_what_remains(message: str) -> bool:
    """A question about what is left of a plan: its open tasks answer it, not facts."""
    return is_question(message) and bool(_ASKS_WHAT_REMAINS.search(message))


# "Do you remember my name?", "你还记得我住在哪里吗？": a question whose yes is worth nothing
# without what is remembered
_ASKS_IF_REMEMBERED = re.compile(
    r"\b(?:do|did|can|could|would|will)\s+you\s+(?:still\s+|even\s+|actually\s+)?"
    r"(?:remember|recall|know)\b|^\W*(?:remember|recall)\b|记得|记不记得|知道|知不知道",
    re.IGNORECASE)


def asks_if_remembered(message: str) -> bool:
    """The person asks whether the assistant remembers or knows something of theirs."""
    return bool(re.search(r"[?？吗]\s*$", message.strip())) and \
        bool(_ASKS_IF_REMEMBERED.search(message))
