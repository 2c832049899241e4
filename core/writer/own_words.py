"""A fact the person said, filed under the wrong relation, kept under their own words.

A 1.5B model wrote "我学二胡好几年了" (I have learned the erhu for years) as
`User -job-> 二胡`, and "我会弹鼓" as `User -喜欢-> 弹鼓`. The slot check refuses the job
(nothing in the message speaks of work) and liking needs a word of liking, so the
instrument was lost although the person said it. What they said is still there: the
words right before the value, in the clause where they speak of themselves ("学",
"会", "played"). Those become the relation, when they make one that holds many values
(a relation that names a slot, "叫" or "works as", is the guess that was just refused).
"""

from __future__ import annotations

import re
from typing import Any

from core.tools.one_value import family
from core.writer import grounding, whose

# What opens a clause before its verb: the speaker, helpers and little adverbs
_LEAD_EN = re.compile(r"^(?:(?:and|but|so|then|i|i've|i'm|i'd|i'll|also|still|really|"
                      r"have|has|had|do|did|am|already|just|now|always|often|usually)\s+)+",
                      re.IGNORECASE)
_TAIL_EN = re.compile(r"(?:\s+(?:a|an|the|my|some|to|with|in|on|at|for|of))+$",
                      re.IGNORECASE)
_LEAD_ZH = re.compile(r"^(?:而且|并且|还有|我们|我|也|还|都|就|又|一直|已经|现在|平时|经常|常常)+")
_TAIL_ZH = re.compile(r"(?:了|过|着)?(?:一|两|几)?[只条个匹头本把台架位]?$")
_MAX_EN_WORDS, _MAX_ZH_CHARS = 3, 4
# "I'm not a teacher": words that deny the value are no relation of the person's to it
_DENIES = re.compile(r"\b(?:not|no|never|nor)\b|n't\b|不|没|别|非", re.IGNORECASE)


def _before(clause: str, value: str) -> str | None:
    """The clause's words right before `value`, or None when it does not hold it."""
    at = clause.casefold().find(value.strip().casefold())
    return None if at < 0 else clause[:at]


def _verb(before: str) -> str | None:
    """The relation `before` makes, without the speaker and little words; None when
    nothing is left or it is too long to be a relation."""
    if grounding.has_cjk(before):
        verb = _TAIL_ZH.sub("", _LEAD_ZH.sub("", before.strip(" ，,"))).strip()
        return verb if 0 < len(verb) <= _MAX_ZH_CHARS and grounding.has_cjk(verb) else None
    verb = _TAIL_EN.sub("", _LEAD_EN.sub("", before.strip(" ,"))).strip()
    words = verb.split()
    return verb.casefold() if 0 < len(words) <= _MAX_EN_WORDS and all(
        w.isalpha() for w in words) else None


def refiled(triplet: dict[str, Any], message: str) -> dict[str, Any] | None:
    """The person's fact under the words they said it with, or None when the message
    gives no such words (the value is not in a clause of theirs, or the words name a
    slot)."""
    subject, value = str(triplet.get("subject", "")), str(triplet.get("object", ""))
    if subject.strip().casefold() not in grounding.PERSON or not value.strip():
        return None
    for clause, owner in whose.clause_owners(message):
        before = _before(clause, value)
        if before is None or owner.who is not None or not whose.speaks_of_self(clause):
            continue
        verb = _verb(before)
        if verb and not _DENIES.search(verb) and family(verb, value) is None and \
                verb.casefold() != str(triplet.get("relation", "")).strip().casefold():
            return {**triplet, "relation": verb}
    return None
