"""Scores what a generated conversation (`core.eval.generator`) left in the memory and
in the replies, by kind: facts present; wrong facts (stale, wrong slot, another person's
on the person, a request stored, a forget not applied); true facts destroyed; forgets
applied; answers with the expected words; replies that repeat the person."""

from __future__ import annotations

import re
from typing import Any

from core.eval.generator import PERSON, Conversation, Expected
from core.meaning.names import same_value
from core.store import GraphStore
from core.tools.one_value import family
from core.turn.parrot import has_their_sentence, repeats
from core.writer import kin

WRONG_KINDS = ("stale", "wrong_slot", "others_on_person", "request_stored",
               "forget_not_applied")
_SLOT_OF_FAMILY = {"home": "home", "job": "job", "name": "name"}


def _fold(text: str) -> str:
    return " ".join(text.casefold().split())


_ARTICLES = re.compile(r"(?<![^\W\d_])(?:a|an|the)(?![^\W\d_])")
_MINE_OR_YOURS = re.compile(r"(?<![^\W\d_])(?:my|your)(?![^\W\d_])")


def _answer_words(text: str) -> str:
    """An answer as the judge reads it: folded, without English articles, and "my" and
    "your" alike (the reply speaks to the person), so "send invitations" answers "send
    the invitations" and "change your address" answers "change my address"."""
    folded = _ARTICLES.sub(" ", text.casefold())
    return _fold(_MINE_OR_YOURS.sub("my", folded))


def _names_topic(text: str, forms: tuple[str, ...]) -> bool:
    """A request's topic is in `text` as a word of its own ("sea", not in "Seattle")."""
    folded = _fold(text)
    return any((re.search(rf"(?<![^\W\d_]){re.escape(_fold(f))}(?![^\W\d_])", folded)
                if f.isascii() else _fold(f) in folded) or same_value(text, f) is True
               for f in forms if f)


def answers(reply: str, groups: list[tuple[str, ...]]) -> bool:
    """Every group answered: one of its forms is in the reply."""
    said = _answer_words(reply)
    return all(any(_answer_words(f) in said for f in g if f) for g in groups)


def _value_is(name: str, forms: tuple[str, ...]) -> bool:
    folded = _fold(name)
    return any(_fold(f) in folded or same_value(name, f) is True for f in forms if f)


class _Memory:
    def __init__(self, store: GraphStore, conversation: Conversation) -> None:
        self.edges = store.query(
            "SELECT e.status, s.name AS subject, e.relation, t.name AS object FROM edges e"
            " JOIN nodes s ON s.id = e.source_id JOIN nodes t ON t.id = e.target_id"
            " WHERE e.category = 'general'")
        self.active = [e for e in self.edges if e["status"] == "active"]
        self.person = {"user", "i", "我", "用户"} | {_fold(n) for n in
                                                   conversation.person_names}
        self.relative = {_fold(w) for w in conversation.relative_words}

    def is_person(self, name: str) -> bool:
        return _fold(name) in self.person

    def is_relative(self, name: str) -> bool:
        folded = _fold(name)
        return any(w in folded for w in self.relative) or bool(kin.kinds_in(name, True))

    def whose(self, edge: dict[str, Any], whose: str) -> bool:
        if whose == PERSON:
            return self.is_person(edge["subject"])
        return self.is_relative(edge["subject"]) or (
            self.is_person(edge["subject"]) and kin.kin_of_relation(edge["relation"])
            is not None and not self.is_relative(edge["object"]))

    def holding(self, expected: Expected, edges: list[dict[str, Any]]) -> list[dict]:
        return [e for e in edges if self.whose(e, expected.whose)
                and _value_is(e["object"], expected.forms)]


def score_conversation(store: GraphStore, conversation: Conversation,
                       played: list[dict[str, Any]]) -> dict[str, Any]:
    memory = _Memory(store, conversation)
    truth = conversation.truth
    expected = [*conversation.facts,
                Expected(PERSON, "relative", tuple(truth["relative_name"]))]
    present = {f"{e.whose} {e.slot}": bool(memory.holding(e, memory.active))
               for e in expected}
    gone = [e for e in expected if not memory.holding(e, memory.active)
            and memory.holding(e, memory.edges)]
    wrong: dict[str, list[str]] = {kind: [] for kind in WRONG_KINDS}

    def line(edge: dict[str, Any]) -> str:
        return f"{edge['subject']} -{edge['relation']}-> {edge['object']}"

    for stale in conversation.stale:
        wrong["stale"] += [line(e) for e in memory.holding(stale, memory.active)]
    for forgotten in conversation.forgotten:
        wrong["forget_not_applied"] += [line(e) for e in memory.holding(forgotten,
                                                                         memory.active)]
    for topic in conversation.requests:
        wrong["request_stored"] += [line(e) for e in memory.active
                                    if _names_topic(f"{e['relation']} {e['object']}", topic)]
    theirs = [truth["relative_home"], truth["old_relative_home"], truth["relative_job"]]
    mine = {"home": [truth["home"]], "job": [truth["job"]], "name": [truth["name"]]}
    others_of_mine = [truth[k] for k in ("hobby", "instrument", "pet", "allergy", "job",
                                         "home", "name")]
    for edge in memory.active:
        if not memory.is_person(edge["subject"]) or kin.kin_of_relation(edge["relation"]):
            continue
        if any(_value_is(edge["object"], tuple(t)) for t in theirs):
            wrong["others_on_person"].append(line(edge))
            continue
        slot = _SLOT_OF_FAMILY.get(family(edge["relation"], edge["object"]) or "")
        if slot and not any(_value_is(edge["object"], tuple(v)) for v in mine[slot]) and any(
                _value_is(edge["object"], tuple(v)) for v in others_of_mine):
            wrong["wrong_slot"].append(line(edge))

    tasks = store.query("SELECT name, description, state FROM nodes WHERE kind = 'task'"
                        " AND deleted_at IS NULL")
    task_scores = {}
    for forms, state in conversation.tasks:
        found = [t for t in tasks if _value_is(f"{t['name']} {t['description']}", forms)]
        task_scores[forms[0]] = bool(found) and (state is None or any(
            t["state"] == state for t in found))

    said: list[str] = []
    parroted, answered, asked, missed = [], 0, 0, []
    for n, turn in enumerate(played):
        reply = turn["reply"]
        # the whole reply one of theirs, or a sentence of it the message it answers ("对不
        # 起，我上个月搬到东京了。"); an answer made of an earlier message's words ("cook
        # the dessert; clean the flat") is an answer
        if repeats(reply, [*said, turn["text"]]) or has_their_sentence(reply, [turn["text"]]):
            parroted.append(turn["turn"])
        said.append(turn["text"])
        groups = conversation.answers.get(n)
        if groups:
            asked += 1
            right = answers(reply, groups)
            answered += right
            if not right:
                missed.append((turn["turn"], [g[0] for g in groups]))
    stored = len(memory.active)
    return {
        "facts_present": sum(present.values()), "facts_expected": len(present),
        "facts": present, "stored": stored,
        "wrong": {kind: len(rows) for kind, rows in wrong.items()}, "wrong_lines": wrong,
        "destroyed": len(gone), "destroyed_facts": [f"{e.whose} {e.slot}" for e in gone],
        "forgets": len(conversation.forgotten),
        "forgets_applied": len(conversation.forgotten) - len(wrong["forget_not_applied"]),
        "tasks": task_scores, "answers_right": answered, "answers_asked": asked,
        "parroted": parroted, "missed": missed,
        "asked_again": sum(t.get("asked_again", 0) for t in played),
        "unanswered": sum(not t["reply"].strip() or bool(t["error"]) for t in played),
        "seconds": [t["seconds"] for t in played],
        "first_text": [t["first_text"] for t in played if t["first_text"] is not None],
    }
