"""A fact the person said, filed under the wrong relation, kept under their own words.

A 1.5B model wrote "我学二胡好几年了" (I have learned the erhu for years) as
`User -job-> 二胡`, and "我会弹鼓" as `User -喜欢-> 弹鼓`. The slot check refuses the job
(nothing in the message speaks of work) and liking needs a word of liking, so the
instrument was lost although the person said it. What they said is still there: the
words right before the value, in the clause where they speak of themselves ("学",
"会", "played"). Those become the relation, when they make one that holds many values
(a relation that names a slot, "叫" or "works as", is the guess that was just refused).
The same goes for a relation nobody said ("I've played the cello for years" came as
`User -activity-> playing the cello`): the value is found in the person's words by stem
too, and a value that opens with their verb gives the verb ("played", "cello").

Liking holds many values, and the same model files anything under it: "我会弹鼓，还养了一只
狗，叫Nemo" became `User -喜欢-> 弹鼓`, `-喜欢-> 狗`, `-喜欢-> Nemo`, and "订蛋糕已经做好了"
`User -喜欢-> 蛋糕`; "what do I like doing?" was answered with all four. So from a small
model a fact of liking needs a word of liking (or of a hobby) in the message, and without
one it is kept in the person's words or not at all (`liking_checked`), before the pet's
name is linked to the pet.
"""

from __future__ import annotations

import re
from typing import Any

from core.tools.one_value import family
from core.writer import grounding, whose
from core.writer.calls import subject_and_value, triplets_of, with_triplets

# What opens a clause before its verb: the speaker, helpers and little adverbs
_LEAD_EN = re.compile(r"^(?:(?:and|but|so|then|i|i've|i'm|i'd|i'll|also|still|really|"
                      r"have|has|had|do|did|am|been|was|were|already|just|now|always|often|"
                      r"usually)(?:\s+|$))+",
                      re.IGNORECASE)
_TAIL_EN = re.compile(r"(?:\s+(?:a|an|the|my|some|to|with|in|on|at|for|of))+$",
                      re.IGNORECASE)
_LEAD_ZH = re.compile(r"^(?:而且|并且|还有|我们|我|也|还|都|就|又|一直|已经|现在|平时|经常|常常)+")
_TAIL_ZH = re.compile(r"(?:了|过|着)?(?:一|两|几)?[只条个匹头本把台架位]?$")
_MAX_EN_WORDS, _MAX_ZH_CHARS = 3, 4


def _stem(word: str) -> str:
    """An English word without its ending: "played", "playing", "plays" -> "play",
    "swimming" -> "swim", "dancing", "dance" -> "danc"."""
    word = word.casefold().removesuffix("'s")
    for ending in ("ing", "ed", "es", "s", "e"):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            word = word[:-len(ending)]
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiou":
        word = word[:-1]
    return word


_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")


def _found(clause: str, value: str) -> tuple[str, str] | None:
    """The clause's words before `value` and the value as the clause says it, or None
    when it does not hold it: word for word, or in English word by word by stem ("playing
    the cello" for "I've played the cello")."""
    value = value.strip()
    at = clause.casefold().find(value.casefold())
    if at >= 0:
        return clause[:at], clause[at:at + len(value)]
    wanted = [_stem(w) for w in _LATIN_WORD.findall(value)]
    if not wanted or grounding.has_cjk(value):
        return None
    words = list(_LATIN_WORD.finditer(clause))
    for i in range(len(words) - len(wanted) + 1):
        if all(_stem(words[i + k].group()) == stem for k, stem in enumerate(wanted)):
            return clause[:words[i].start()], clause[words[i].start():words[i + len(
                wanted) - 1].end()]
    return None


_ARTICLE_EN = re.compile(r"^(?:(?:a|an|the|my|some)\s+)+", re.IGNORECASE)


def _as_verb_and_value(value: str, said: str) -> tuple[str, str] | None:
    """A value that opens with a verb ("playing the cello", the person's "played the
    cello") as the person's verb and what it is done to ("played", "cello"), or None."""
    first, _, rest = said.partition(" ")
    rest = _ARTICLE_EN.sub("", rest.strip())
    if not rest or not any(w.casefold().endswith(("ing", "ed")) for w in (
            first, value.split(maxsplit=1)[0])):
        return None
    return first.casefold(), rest


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


def refiled(triplet: dict[str, Any], message: str, call: list[Any] = ()
            ) -> dict[str, Any] | None:
    """The person's fact under the words they said it with, or None when the message
    gives no such words (the value is not in a clause of theirs, or the words name a
    slot), or when another fact of the `call` holds the same subject and value ("likes
    painting" beside a refused "job painting": that one keeps it)."""
    subject, value = str(triplet.get("subject", "")), str(triplet.get("object", ""))
    if subject.strip().casefold() not in grounding.PERSON or not value.strip() or any(
            t is not triplet and subject_and_value(t) == subject_and_value(triplet)
            for t in call):
        return None
    for clause, owner in whose.clause_owners(message):
        found = _found(clause, value)
        if found is None or owner.who is not None or not whose.speaks_of_self(clause):
            continue
        before, said = found
        verb = _verb(before)
        if verb is None and (split := _as_verb_and_value(value, said)):
            verb, said = split
        # "I'm not a teacher": words that deny the value are no relation to it
        if verb and not grounding.DENIED.search(verb) and family(verb, said) is None and \
                verb.casefold() != str(triplet.get("relation", "")).strip().casefold():
            return {**triplet, "relation": verb, "object": said}
    return None


def relations_refiled(arguments: str, message: str, said: str) -> str:
    """A small model's memory_commit with each of the person's facts under a relation
    nobody said kept in the person's own words instead ("I've played the cello for
    years" came as `User -activity-> playing the cello`, which the check of unsaid
    relations refuses, and the instrument was lost); anything else as it is."""
    parsed = triplets_of(arguments)
    if parsed is None:
        return arguments
    args, triplets = parsed
    kept = [(refiled(t, message, triplets) or t) if isinstance(t, dict) and
            grounding.unsaid_relation(t, said) else t for t in triplets]
    return arguments if kept == triplets else with_triplets(args, kept)


_LIKING = re.compile(r"^(?:really |also )?(?:likes?|loves?|enjoys?|prefers?|favou?rites?|"
                     r"adores?)\b|喜欢|喜爱|热爱|^爱$", re.IGNORECASE)
_LIKING_SAID = re.compile(r"\b(?:lik\w*|lov\w*|enjoy\w*|prefer\w*|favou?rite\w*|fan|"
                          r"fond|adore\w*|passion\w*|hobb\w*|into|keen|crazy about)\b|"
                          r"喜欢|爱|喜爱|热爱|兴趣|爱好|迷|钟意", re.IGNORECASE)


def liking_unsaid(relation: str, message: str) -> bool:
    """A relation of liking in a message that says no liking."""
    return bool(_LIKING.search(relation.strip())) and not _LIKING_SAID.search(message)


def liking_checked(arguments: str, message: str) -> tuple[str, str | None]:
    """A small model's memory_commit with each fact of liking the message does not say
    kept in the person's words (`refiled`) or taken out, and why; anything malformed as
    it is."""
    parsed = triplets_of(arguments)
    if parsed is None:
        return arguments, None
    args, triplets = parsed
    kept, refused = [], []
    for triplet in triplets:
        if not isinstance(triplet, dict) or not isinstance(triplet.get("relation"), str) \
                or not liking_unsaid(triplet["relation"], message):
            kept.append(triplet)
        elif as_said := refiled(triplet, message, triplets):
            kept.append(as_said)
        else:
            refused.append(f"'{triplet.get('subject')} -{triplet['relation']}-> "
                           f"{triplet.get('object')}'")
    why = (f"{', '.join(refused)} not stored: the user did not say they like it"
           if refused else None)
    return (arguments, None) if kept == triplets else (with_triplets(args, kept), why)
