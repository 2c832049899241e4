"""What the model is shown of the conversation, built so that each request repeats the
previous one from its start and a server's prompt cache only has to read what is new.

A window starts with the last few messages and a new message that carries the whole
memory snapshot. Every later message in the window carries only what changed in the
memory since (`core.turn.snapshot.render_changes`), and the earlier messages are sent
again exactly as they were sent the first time: each user message keeps, in the
history's `sent` field, the snapshot text it went out with. The window grows by up to
WINDOW_STEP messages, then a new one starts. On a 2-core machine a 1.5B model reads
about 40 prompt tokens a second, so what is not reused is what the person waits for.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from core.recall import TURN_BUDGET, estimate_tokens, evidence
from core.store import GraphStore
from core.store.history import History
from core.turn import answering
from core.turn.prompts import turn_message
from core.turn.snapshot import (
    Item,
    active_fact_keys,
    gone_keys,
    quoted,
    render_changes,
    render_full,
    snapshot_items,
)
from core.turn.turn_result import model_words

WINDOW_KEEP = 4  # earlier messages a new window starts with, for continuity
WINDOW_STEP = 12  # messages a window grows by before a new one starts
RECENT_CHARS = 24_000  # the earlier messages' characters in all (about 6,000 tokens)
RECENT_MESSAGE_CHARS = 8_000  # and any one of them (the history keeps it whole)


@dataclass
class Context:
    """The request's messages before the new one, the person's own words among them
    (a stored fact must be made of those), the new message as sent, and what to keep
    with it."""

    earlier: list[dict[str, str]]
    said: list[str]
    content: str
    sent: dict[str, Any] = field(default_factory=dict)
    # what recall found for the message: {"facts", "turns", "tokens", "budget"}
    recalled: dict[str, int] = field(default_factory=dict)


def _words(row: dict[str, Any]) -> str:
    return row["content"] if row["role"] == "user" else model_words(row["content"])


def _as_sent(row: dict[str, Any], base: int, plain: bool) -> str:
    """A message as it went out, when it belongs to this window; else its words."""
    sent = row.get("sent") or {}
    if row["role"] != "user" or _base(row) != base or sent.get("plain") != plain:
        return _words(row)
    return turn_message(sent["snapshot"], row["content"], sent["today"])


def _base(row: dict[str, Any]) -> int | None:
    """The id of the message that carries its window's whole snapshot."""
    sent = row.get("sent")
    return (sent.get("base") or row["id"]) if isinstance(sent, dict) and sent.get(
        "snapshot") is not None else None


def _continued(rows: list[dict[str, Any]], plain: bool
               ) -> tuple[list[dict[str, Any]], list[dict[str, str]], int] | None:
    """The current window's messages, them as sent, and its base, when the new message
    can join it."""
    last = next((r for r in reversed(rows) if r["role"] == "user" and _base(r)), None)
    base = _base(last) if last is not None else None
    if last is None or base is None or last["sent"].get("plain") != plain:
        return None
    first = last["sent"].get("first") or last["id"]
    window = [r for r in rows if r["id"] >= first]
    ids = {r["id"] for r in window}  # its first message and its base still there…
    if first not in ids or base not in ids or sum(  # …and room left
            r["id"] >= base for r in window) >= WINDOW_STEP:
        return None
    earlier = [{"role": r["role"], "content": _as_sent(r, base, plain)} for r in window]
    if sum(len(m["content"]) for m in earlier) > RECENT_CHARS:
        return None
    return window, earlier, base


def build(history: History, store: GraphStore, text: str, plain: bool,
          today: str | None = None, *, budget: int = TURN_BUDGET) -> Context:
    """The earlier messages and the new one, with the whole snapshot when a new window
    starts and the memory's changes otherwise; `budget`: recall's (`core.turn.pace`)."""
    today = today or time.strftime("%Y-%m-%d (%A)")
    rows = [r for r in history.messages(WINDOW_KEEP + WINDOW_STEP + 2,
                                        cap=RECENT_MESSAGE_CHARS, sent=True) if _words(r)]
    continued = _continued(rows, plain)
    in_prompt = {r["id"] for r in (continued[0] if continued else rows[-WINDOW_KEEP:])}
    items = snapshot_items(store, text, plain, in_prompt, budget)
    tasks = answering.tasks_for(store, text)
    facts = [] if tasks and answering.asks_what_remains(text) else \
        answering.facts_for(store, text)
    items = _settled(store, items, answering.settling(text, facts))
    recalled = _recalled(items, budget)
    if continued is None:  # a new window: the last few messages as words, the whole snapshot
        earlier = [{"role": r["role"], "content": _words(r)} for r in rows[-WINDOW_KEEP:]]
        while sum(len(m["content"]) for m in earlier) > RECENT_CHARS:
            earlier.pop(0)
        kept = rows[len(rows) - len(earlier):]
        snapshot = render_full(items, plain)
        sent = {"base": None, "first": kept[0]["id"] if kept else None, "gone": []}
        said = [r["content"] for r in kept if r["role"] == "user"]
    else:
        window, earlier, base = continued
        senses, lines = _shown(window, base)
        gone = gone_keys(items, senses, active_fact_keys(store, list(senses)))
        snapshot = render_changes(items, senses, lines, gone)
        sent = {"base": base, "first": window[0]["id"], "gone": gone}
        items = [i for i in items if senses.get(i.key) != i.sense]
        said = [r["content"] for r in window if r["role"] == "user"]
    answers = answering.render(facts, tasks)
    if answers:  # right before the question, where a small model looks
        snapshot = f"{snapshot}\n{quoted(answers)}"
    sent.update(snapshot=snapshot, today=today, plain=plain,
                items={i.key: [i.sense, i.line] for i in items})
    return Context(earlier, said, turn_message(snapshot, text, today), sent, recalled)


def _recalled(items: list[Item], budget: int) -> dict[str, int]:
    """What recall put before the model for this message, and the budget it was cut to
    (the turn's record shows it: why an answer had little to go on)."""
    facts = [i.line for i in items if i.section == "related"]
    turns = [i for i in items if i.section == "history"]
    shown = facts + [f"- {i.line}" for i in turns] + [f"{day}:" for day in {i.day for i in turns}]
    return {"facts": len(facts), "turns": len(turns),
            "tokens": sum(estimate_tokens(line) for line in shown), "budget": budget}


def _settled(store: GraphStore, items: list[Item], settled: list[dict[str, Any]]
             ) -> list[Item]:
    """With facts that settle the question (`answering.settling`), the earlier turns
    shown are only those they came from: what holds now, and where it was said."""
    if not settled:
        return items
    sources = {f"m{m}" for ids in evidence.of_facts(store, settled).values() for m in ids}
    return [i for i in items if i.section != "history" or i.key in sources]


def _shown(window: list[dict[str, Any]], base: int) -> tuple[dict[str, str], dict[str, str]]:
    """What the window's messages put in front of the model and is still standing: key →
    sense and key → line."""
    senses: dict[str, str] = {}
    lines: dict[str, str] = {}
    for row in window:
        if row["role"] != "user" or _base(row) != base:
            continue
        for key in row["sent"].get("gone") or []:
            senses.pop(key, None)
            lines.pop(key, None)
        for key, (sense, line) in (row["sent"].get("items") or {}).items():
            senses[key], lines[key] = sense, line
    return senses, lines
