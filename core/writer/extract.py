"""The memory-writing step for models that cannot call tools reliably.

Measured with Qwen2.5-Coder-1.5B on llama-server: it called memory_commit in the first
turn and never again (it imitates the earlier replies in its context, which show no
calls), wrote thirty calls of "User -phone-> unknown" in one reply, and answered 0 of 6
questions. Asked instead for one small JSON object under a schema the server enforces
(`response_format` with a JSON schema: llama-server turns it into a grammar, and Ollama,
LM Studio and OpenAI take the same field), it fills the lists it is given. So on such
models the turn first answers without tools (the snapshot carries what it needs), then
this step asks what the person's message adds, changes or takes away, reconciled with the
facts already kept, and the app applies it through the same tools, limits and checks as
a model's calls (a fact the person did not write is refused here too).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any

from core.meaning.names import mentions
from core.store.text import short_question
from core.tools.base import fact_line
from core.tools.one_value import family
from core.writer import clauses, forget_scope, forgetting, grounding, kin, requests, whose
from core.writer.language import language_of


def _object(**fields: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "properties": fields,
            "required": list(fields)}


_TEXT = {"type": "string"}


def _list(items: dict[str, Any], most: int) -> dict[str, Any]:
    return {"type": "array", "items": items, "maxItems": most}


# The person's own facts have no subject field: a small model wrote "Lin Wei" for one
# fact and "User" for the next, splitting the person in two.
SCHEMA = _object(
    user_facts=_list(_object(relation=_TEXT, object=_TEXT), 8),
    other_facts=_list(_object(subject=_TEXT, relation=_TEXT, object=_TEXT), 6),
    changed_user_facts=_list(_object(relation=_TEXT, old_object=_TEXT, new_object=_TEXT),
                             2),
    forget=_list(_object(object=_TEXT), 4),
    new_tasks=_list(_object(name=_TEXT), 6),
    finished_tasks=_list(_object(name=_TEXT), 4))
# Words that say a fact changed; without one, the step's "changed" guesses are not taken
# (the 1.5B model superseded the person's city with their sister's).
_CHANGE_WORDS = re.compile(
    r"\b(moved|move|now|new|no longer|not any ?more|anymore|actually|instead|changed|"
    r"switched|quit|left|became|started)\b|搬|换|现在|不再|其实|改|辞职|新",
    re.IGNORECASE)
# Words that say a step is done: "I've booked the flights", "买好了礼物", "已经订了酒店"
_DONE_WORDS = re.compile(
    r"\b(booked|bought|done|finished|completed|sent|paid|ordered|reserved|made|did|got|"
    r"sorted|handled|took care of)\b|已经|好了|完成|做完|买了|订了|办好",
    re.IGNORECASE)


def worth_asking(message: str) -> bool:
    """A short question adds no facts: the step is skipped (and the turn is faster)."""
    return not short_question(message)


def request_messages(message: str, facts: list[dict[str, Any]],
                     tasks: list[dict[str, Any]]) -> list[dict[str, str]]:
    # Shown the facts it knows, the 1.5B model copied them back and left out what the
    # message said ("我最近在学日语" gave name, home and job, no Japanese); without them it
    # wrote 学习 日语. They are needed only to name what changed or is to be forgotten.
    forgets = forgetting.asked_to_forget(message)
    wanted = _CHANGE_WORDS.search(message) or forgets
    # a forget is shown every fact: what it names may be said in the other language
    # ("请忘掉我对猫毛过敏这件事" for "allergic to cats"), which only the step can match
    shown = facts if forgets else may_change(facts, message)
    known = ("\n".join(f"- {fact_line(f)}" for f in shown) or "- (none)") if wanted else ""
    instructions = files("core.turn.prompts").joinpath("extract.md").read_text("utf-8")
    open_tasks = "\n".join(f"- {t['name']}" for t in tasks) or "- (none)"
    # The 1.5B model wrote "Japanese" for "我最近在学日语", which no check can tie to the
    # person's words (an embedding scores 杭州 closer to 深圳 than Shenzhen is): it is
    # told the language.
    written_in = language_of(message)
    language = (f"\nThe user writes {written_in}: write relations and objects in "
                f"{written_in}, in their words." if written_in not in (None, "English") else "")
    return [{"role": "system", "content": instructions.strip()},
            {"role": "user", "content": (f"Known facts:\n{known}\n" if known else "")
                                        + f"Known tasks:\n{open_tasks}"
                                        f"\n\nThe user's newest message:\n"
                                        f"{clauses.listed(message)}"
                                        f"{language}"}]


# The known facts a change is shown, at most
SHOWN_KNOWN = 12


def may_change(facts: list[dict[str, Any]], message: str) -> list[dict[str, Any]]:
    """The known facts a message may change: those in a slot that holds one
    value (a home, a job: what "I moved" replaces) and those whose words it says, the
    named ones first. Shown the whole profile (twelve facts, "User -has-> years" first),
    the 1.5B model copied every fact back and left out "I moved to Prague" (a generated
    conversation's move, English and Chinese, stored nothing); shown these five, it
    replaced the city."""
    said = grounding.said_text([message])
    named = [f for f in facts if any(
        grounding.mentions(str(f.get(k, "")), said) for k in ("target_name", "relation"))
        or (str(f.get("source_name", "")).casefold() not in grounding.PERSON
            and grounding.mentions(str(f.get("source_name", "")), said))]
    slots = [f for f in facts if f not in named
             and family(str(f.get("relation", "")), str(f.get("target_name", ""))) is not None]
    return (named + slots)[:SHOWN_KNOWN]


def response_format() -> dict[str, Any]:
    return {"type": "json_schema",
            "json_schema": {"name": "memory_update", "strict": True, "schema": SCHEMA}}


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


@dataclass
class Plan:
    """What the step's answer does: the calls to run in order, what the person asked to
    forget that matches nothing kept, and the facts a forget matched past what was asked
    (they wait for the person, see `core.writer.forget_scope`)."""

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)
    held: list[dict[str, Any]] = field(default_factory=list)


def calls(update: Any, message: str, known: list[dict[str, Any]],
          tasks: list[dict[str, Any]], similar: forgetting.Similar | None = None) -> Plan:
    """The tool calls that apply `update` (the step's JSON), in a safe order: forget and
    replace first, then new facts, then tasks; and what the person asked to forget that
    matches no kept fact (`similar` finds facts by meaning, see `core.writer.forgetting`).
    Anything malformed, or not backed by the message and the known facts and tasks, is
    left out."""
    if not isinstance(update, dict):
        return Plan()
    said = grounding.said_text([message])

    def items(key: str, *fields: str) -> list[dict[str, str]]:
        value = update.get(key)
        rows = [{f: _text(i.get(f)) for f in fields} for i in value if isinstance(i, dict)] \
            if isinstance(value, list) else []
        return [r for r in rows if all(r.values())]

    plan = Plan()
    forgotten, matched = set(), []
    # what the step names, and what the message asks in so many words (the 1.5B model
    # often leaves "forget" empty, or copies the fact back as a new one); what the step
    # named and nothing matched is told, and the person's own words when nothing at all did
    named = [f["object"] for f in items("forget", "object")] \
        if forgetting.asks_to_forget(message) else []
    in_words = forgetting.asked_to_forget(message)
    asked = named + [w for w in in_words if w.casefold() not in {n.casefold() for n in named}]
    theirs = [f for words in in_words for f in forget_scope.meant_by(words, known)]
    meant = {f.get("id") for words in in_words
             for f in forgetting.matching(words, known, similar)} | {f.get("id") for f in theirs}
    for words in asked:
        found = forgetting.matching(words, known, similar)
        found += [f for f in theirs if f not in found and words in in_words]
        if not found and words in named:
            plan.unmatched.append(words)
        # the step's words are its guess: the person's own request says whose it is, and
        # what the step's words found is what was meant when the person said them too
        if grounding.grounded(words, grounding.said_text(in_words)):
            meant |= {f.get("id") for f in found}
        scope = forget_scope.split_many(in_words or [words], found, known, meant)
        forgotten |= {words.casefold()} | {str(f["target_name"]).casefold() for f in found}
        matched += scope.kept
        plan.held += [f for f in scope.held if f not in plan.held]
    if asked and not matched and not plan.unmatched and not plan.held:
        plan.unmatched = asked[:1]
    plan.held = [f for f in plan.held if f not in matched]
    planned = plan.calls
    planned += forgetting.purges(matched)
    person = {str(k.get("target_name", "")).casefold() for k in known
              if str(k.get("source_name", "")).casefold() in grounding.PERSON}
    if _CHANGE_WORDS.search(message):
        for change in items("changed_user_facts", "relation", "old_object", "new_object")[:1]:
            old, new = change["old_object"], change["new_object"]
            if old.casefold() in person and old.casefold() != new.casefold() and \
                    grounding.grounded(new, said):
                planned.append(("memory_purge", {
                    "criteria": {"subject": "User", "object": old}, "mode": "supersede",
                    "new_relation": {"object": new}}))
    triplets = [{"subject": "User", **f} for f in items("user_facts", "relation", "object")]
    triplets += items("other_facts", "subject", "relation", "object")
    triplets = requests.not_requests(whose.owned(triplets, message), message)
    relatives = _relatives_said(known, message)
    triplets = [t for t in triplets if grounding.grounded(t["object"], said)
                and (grounding.grounded(t["subject"], said)
                     or t["subject"].casefold() in relatives)
                and not _goes(t["object"], forgotten)]  # not stated again as it goes
    steps = [t["name"] for t in tasks] + [t["name"] for t in items("new_tasks", "name")]
    triplets = [t for t in triplets if not _of_the_tasks(t["object"], steps)]
    if triplets:
        planned.append(("memory_commit", {"triplets": triplets}))
    for task in items("new_tasks", "name"):
        planned.append(("task_create", {"task_id": task["name"][:80],
                                        "description": task["name"]}))
    planned += _finished([t["name"] for t in items("finished_tasks", "name")], tasks,
                         message)
    return plan


def _relatives_said(known: list[dict[str, Any]], message: str) -> set[str]:
    """The names of the person's known relatives the message speaks of by kin word: a
    fact of theirs needs no name ("我妻子住在新加坡" is 赵磊's, as the wife is known)."""
    kinds = set(kin.kinds_in(message))
    return {str(k.get("target_name", "")).casefold() for k in known
            if str(k.get("source_name", "")).casefold() in grounding.PERSON
            and kin.kin_of_relation(str(k.get("relation", ""))) in kinds} if kinds else set()


# How a step of a plan stands, as the step's answer put it in a fact's value
_TASK_STATES = {"done", "finished", "completed", "complete", "in progress", "paused",
                "完成", "完成了", "已完成", "做完了"}


def _of_the_tasks(value: str, steps: list[str]) -> bool:
    """`value` is a step of the person's plan, or how one stands: the working memory
    holds it, and as a fact it is noise ("Done: buy the wine." came from the 1.5B model as
    "User -has-> done" and "User -has-> buy the wine" beside the task it finished)."""
    folded = value.strip().casefold()
    return folded in _TASK_STATES or any(folded == s.strip().casefold() for s in steps)


def _goes(value: str, forgotten: set[str]) -> bool:
    """`value` is one of the values being forgotten, in either language: "忘记我对花生过敏"
    forgot "peanuts", and the 1.5B model wrote "allergies 花生" back as a new fact."""
    folded = value.casefold()
    return folded in forgotten or any(
        mentions(value, gone) or mentions(gone, value) for gone in forgotten)


def _finished(named: list[str], tasks: list[dict[str, Any]],
              message: str) -> list[tuple[str, dict[str, Any]]]:
    """The open tasks the message says are done: those the step names, and any the message
    says done in so many words (the 1.5B model left the list empty, or named another step,
    for "I've booked the flights"). Only a task the person's words set apart from
    the other open tasks is completed: "booked the flights" finishes that step only, and
    "I bought the gift" finishes "Buy a gift for Mom"."""
    if _DONE_WORDS.search(message):
        named = [*named, *(t["name"] for t in tasks)]
    said, done, planned = grounding.said_text([message]), set(), []
    for step in named:
        name = _known_task(step, tasks)
        others = [t["name"] for t in tasks if t["name"] != name]
        if name and name not in done and grounding.mentions(name, said, others):
            done.add(name)
            planned.append(("task_set_state", {"task_id": name, "state": "completed"}))
    return planned


def _known_task(named: str, tasks: list[dict[str, Any]]) -> str | None:
    """The open task the step means: named exactly, else the one whose name shares the
    most words with what the step wrote (a small model shortens "Buy a gift for Mom" to
    "buy gift")."""
    exact = {t["name"].casefold(): t["name"] for t in tasks}
    if named.casefold() in exact:
        return exact[named.casefold()]
    wrote = grounding.said_text([named])
    sharing = [(grounding.shared_words(t["name"], wrote), t["name"]) for t in tasks]
    best = max(sharing, default=(0, None))
    return best[1] if best[0] > 0 and [s for s, _ in sharing].count(best[0]) == 1 else None


def parse(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None
