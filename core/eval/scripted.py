"""A scripted small model for generated conversations: the loopback server plays it in
CI, with the mistakes a 1.5B model made on conversations nobody tuned for, so each guard
is tried on every run:

- its memory step files a hobby and an instrument as the person's job (an instrument said in
  English reworded under "activity": "playing the cello") and the relative's
  city as the person's, names the relative by a bare kin word, stores the pet only as
  liked and the request's topic as a like, writes a correction's denied half as a fact
  ("不是 Prague") and its new city under a relation nobody said too, and, asked to forget
  one fact, names every fact it was shown;
- its reply repeats the person's words now and then (statements and questions, both
  languages), and answers properly when asked again.

It memory-writes through the extraction step (the JSON a small local model is asked for).
"""

from __future__ import annotations

import json
import random
from typing import Any

from core.eval.generator import Conversation
from core.writer import extract


def _update(**lists: list[dict[str, str]]) -> dict[str, Any]:
    empty: dict[str, list] = {"user_facts": [], "other_facts": [], "changed_user_facts": [],
                              "forget": [], "new_tasks": [], "finished_tasks": []}
    return {"text": json.dumps({**empty, **lists}, ensure_ascii=False)}


def _value(pair: tuple[str, str], text: str) -> str:
    """The pair's form the message used (a small model writes the person's words)."""
    return pair[1] if pair[1] in text else pair[0]


def steps(conversation: Conversation, parrot_every: int = 4) -> list[list[dict[str, Any]]]:
    """The loopback steps of each turn, in order: the reply (a parroted one first, then
    the answer asked again for), and the memory step's JSON where the turn asks for one."""
    rng = random.Random(conversation.seed)
    turns = conversation.turns
    played: list[list[dict[str, Any]]] = []
    shown_objects: list[str] = []
    for n, turn in enumerate(turns):
        text = turn.text
        groups = conversation.answers.get(n)
        answer = ("; ".join(_value(tuple(g), text) if len(g) == 2 else g[0] for g in groups)
                  if groups else "Got it.")
        reply = [{"text": text}, {"text": answer}] if n % parrot_every == 1 else \
            [{"text": answer}]
        update = _update_for(n, conversation, text, rng, shown_objects)
        played.append(reply + ([update] if extract.worth_asking(text) else []))
    return played


def _update_for(n: int, conversation: Conversation, text: str, rng: random.Random,
                shown: list[str]) -> dict[str, Any]:
    truth = conversation.truth

    def v(key: str) -> str:
        return _value(tuple(truth[key]), text)

    def keep(*objects: str) -> None:
        shown.extend(o for o in objects if o not in shown)

    if n == 0:  # five facts, and the hobby filed as the job too
        keep(v("name"), v("old_home"), v("job"), v("allergy"), v("hobby"))
        return _update(user_facts=[
            {"relation": "name", "object": v("name")},
            {"relation": "lives in", "object": v("old_home")},
            {"relation": "job", "object": v("job")},
            {"relation": "allergic to", "object": v("allergy")},
            {"relation": "likes", "object": v("hobby")},
            {"relation": "job", "object": v("hobby")}])
    if n == 1:  # the relative's city and job given to the person; the relative by kin word
        kin_word = next(w for w in conversation.relative_words[-2:] if w in text) \
            if any(w in text for w in conversation.relative_words[-2:]) else "sister"
        name = _value(tuple(truth["relative_name"]), text)
        keep(name, v("old_relative_home"), v("relative_job"))
        return _update(
            user_facts=[{"relation": kin_word, "object": name},
                        {"relation": "lives in", "object": v("old_relative_home")},
                        {"relation": "job", "object": v("relative_job")}],
            other_facts=[{"subject": kin_word, "relation": "lives in",
                          "object": v("old_relative_home")}])
    if n == 2:  # the instrument filed as the job or reworded under an activity, the pet
        # only as liked
        keep(v("instrument"), truth["pet"][0])
        english = truth["instrument"][0] in text
        instrument = {"relation": "activity", "object": f"playing the {v('instrument')}"} \
            if english else {"relation": "job", "object": v("instrument")}
        return _update(user_facts=[instrument,
                                   {"relation": "likes", "object": truth["pet"][0]}])
    if n == 3:  # a move: the step names the change, and the old city as a new fact too
        return _update(changed_user_facts=[{"relation": "lives in",
                                            "old_object": v("old_home"),
                                            "new_object": v("home")}],
                       user_facts=[{"relation": "lives in", "object": v("home")}])
    if n == 4:  # the same home in the other language
        return _update(user_facts=[{"relation": "lives in", "object": v("home")}])
    if n == 5:  # the correction as a fact of the person's, its denied half, and the new
        # city under a relation nobody said
        name = _value(tuple(truth["relative_name"]), text)
        who = name if name in text else conversation.relative_words[-1]
        return _update(user_facts=[{"relation": "lives in", "object": v("relative_home")}],
                       other_facts=[
                           {"subject": who, "relation": "lives in", "object": v("relative_home")},
                           {"subject": who, "relation": "works in", "object": v("relative_home")},
                           {"subject": who, "relation": "不是" if "不是" in text else "is not",
                            "object": v("old_relative_home")}])
    if n == 6:  # a request stored as a like
        topic = conversation.requests[0]
        return _update(user_facts=[{"relation": "likes", "object": _value(topic, text)}])
    if n == 7:
        steps_named = [_value(tuple(forms), text) for forms, _state in conversation.tasks]
        return _update(new_tasks=[{"name": s} for s in steps_named],
                       user_facts=[{"relation": "likes", "object": "plan"}])
    if n == 8:
        first = _value(tuple(conversation.tasks[0][0]), text)
        return _update(finished_tasks=[{"name": first}])
    if n == 9:  # asked to forget one fact, the step names every fact it was shown
        return _update(forget=[{"object": o} for o in rng.sample(shown, len(shown))])
    return _update()
