"""How far one forget may reach: the facts that match what was asked, and no others.

Asked to forget a relative's city, the 1.5B model's forget (matched by meaning, where
every fact scored alike) took nine of the person's own facts, their name, job, city and
the links to two relatives, and left the one it was asked for. So what a forget matched
is checked against what was asked before anything goes:

- whose: asked about someone else ("my father", "我父亲", "Mei"), only that someone's
  facts may go, and the link to them only when they are all that is asked ("forget my
  brother", not "忘掉我弟弟是厨师这件事": the step's "弟弟" matched the link by meaning,
  and the person lost who their brother is); asked about the person, only the person's
  own and facts about the thing named;
- how many: one request names one thing, said once or twice (in two languages); more
  than MOST_PER_ASK facts for one request is not what a person asks in passing, unless
  they ask for all of it ("everything about", "全部").

What goes past either is held for the person, listed, to allow or deny; never done
silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from core.meaning.names import mentions
from core.tools.one_value import family
from core.writer import grounding, kin

MOST_PER_ASK = 2  # facts one forget request may take on its own
NOW_AT_MOST = 40  # facts embedded on the spot to match a forget by meaning
_ALL = re.compile(r"\b(?:all|every(?:thing)?|whole|entire)\b|所有|全部|一切|都忘", re.IGNORECASE)


@dataclass
class Scope:
    """What a forget takes now (`kept`) and what waits for the person (`held`)."""

    kept: list[dict[str, Any]] = field(default_factory=list)
    held: list[dict[str, Any]] = field(default_factory=list)


def person_names(known: list[dict[str, Any]]) -> set[str]:
    """The names the person goes by among `known` facts (casefolded): "user", "我"… and
    the values of their name facts."""
    names = set(grounding.PERSON)
    for fact in known:
        if str(fact.get("source_name", "")).casefold() in grounding.PERSON and \
                family(str(fact.get("relation", ""))) == "name":
            names.add(str(fact.get("target_name", "")).casefold())
    return names


def about_whom(words: str, known: list[dict[str, Any]], person: set[str]) -> set[str] | None:
    """The names (casefolded) of the someone `words` are about, or None: the person
    themself. A relative is known by every word for their kind and by the name the
    person's link to them gives ("User -father-> Wang Jun")."""
    kinds = kin.kinds_in(words)
    said = grounding.said_text([words])
    for fact in known:  # a relative named by their name ("forget that Mei lives in Rome")
        relative = kin.kin_of_relation(str(fact.get("relation", "")))
        if relative and str(fact.get("source_name", "")).casefold() in person and \
                grounding.grounded(str(fact.get("target_name", "")), said):
            kinds.append(relative)
    if not kinds:
        return None
    names: set[str] = set()
    for kind in kinds:
        names |= {w.casefold() for w in kin.KINDS[kind]}
        names |= {str(f["target_name"]).casefold() for f in known
                  if str(f.get("source_name", "")).casefold() in person
                  and kin.kin_of_relation(str(f.get("relation", ""))) == kind}
    return names


def _subject_is(fact: dict[str, Any], names: set[str]) -> bool:
    subject = str(fact.get("source_name", "")).casefold()
    if subject in names:
        return True
    # "my father" or "父亲 (Wang Jun)" as a node's name
    kinds = kin.kinds_in(subject, relation=True)
    return bool(kinds) and any(w.casefold() in names for k in kinds for w in kin.KINDS[k])


def _rest(words: str, names: str) -> list[str]:
    """The words of a request besides the person, kin words, "all" and `names`."""
    return [w for w in grounding.meaningful(words)
            if w not in grounding.PERSON and not kin.kind_of(w) and not _ALL.search(w)
            and not grounding.grounded(w, names)]


def _only_whom(words: str, whom: set[str]) -> bool:
    """The request names only whom it is about ("forget my brother", "忘掉王芳")."""
    return not _rest(words, grounding.said_text([" ".join(whom)]))


def _what_was_said(fact: dict[str, Any], words: str, whom: set[str] | None) -> bool:
    """The fact says what the request says of them: its object is in the request's words,
    or the request names only whom (and so means all of theirs: "forget my father")."""
    rest = _rest(words, grounding.said_text([" ".join(whom or ()),
                                              str(fact.get("source_name", ""))]))
    target = str(fact.get("target_name", ""))
    if not rest or grounding.grounded(target, grounding.said_text([words])) or \
            mentions(words, target):
        return True
    # what the request names is the fact's slot, not its value ("my dad's city")
    slot, relation = family(str(fact.get("relation", ""))), str(fact.get("relation", ""))
    return all((slot is not None and family(w) == slot)
               or grounding.grounded(w, grounding.said_text([relation])) for w in rest)


def split(words: str, found: list[dict[str, Any]], known: list[dict[str, Any]],
          meant: set[int] = frozenset()) -> Scope:
    """`found` (the facts a forget of `words` matched) as what may go now and what the
    person must allow (see above). `meant`: the ids of facts the person's own words
    matched (by words or by meaning, in any language): they say what was said."""
    person = person_names(known)
    whom = about_whom(words, known, person)
    said = grounding.said_text([words])
    scope = Scope()
    for fact in found:
        subject = str(fact.get("source_name", "")).casefold()
        if whom is None:
            mine = subject in person or grounding.grounded(str(fact["source_name"]), said)
        else:
            target = str(fact.get("target_name", "")).casefold()
            link = (subject in person and target in whom and kin.kin_of_relation(
                str(fact.get("relation", ""))) is not None) or (
                _subject_is(fact, whom) and target in whom)  # "Luo Bin -is-> father"
            if link:  # who a relative is goes only when they are all that is asked
                (scope.kept if _only_whom(words, whom) else scope.held).append(fact)
                continue
            mine = _subject_is(fact, whom)
        mine = mine and (fact.get("id") in meant or _what_was_said(fact, words, whom))
        (scope.kept if mine else scope.held).append(fact)
    if len(scope.kept) > MOST_PER_ASK and not _ALL.search(words):
        scope.held, scope.kept = scope.kept + scope.held, []
    return scope


def meant_by(words: str, known: list[dict[str, Any]], similar: Any = None
             ) -> list[dict[str, Any]]:
    """The facts of whom `words` are about (the person, or someone of theirs) that
    `words` name, by words or by meaning in any language ("请忘掉我姐姐是翻译这件事" and
    "Omar -job-> translator"): matched among that one's facts only, where a clear winner
    is easy to tell."""
    from core.writer import forgetting  # noqa: PLC0415  (forgetting matches; this weighs)

    person = person_names(known)
    whom = about_whom(words, known, person)
    theirs = [f for f in known if isinstance(f.get("id"), int) and (
        _subject_is(f, whom) if whom is not None
        else str(f.get("source_name", "")).casefold() in person)]
    if similar is None and 0 < len(theirs) <= NOW_AT_MOST:
        def similar(text: str, ids: list[int]) -> list[tuple[int, float]]:
            from core.meaning.vectors import similar_now  # noqa: PLC0415  (numpy)

            return similar_now(text, [f for f in theirs if f["id"] in ids])
    by_name = [f for f in theirs if mentions(words, str(f.get("target_name", "")))]
    return by_name or forgetting.matching(words, theirs, similar)


def split_many(asked: list[str], found: list[dict[str, Any]], known: list[dict[str, Any]],
               meant: set[int] = frozenset()) -> Scope:
    """`split` for a forget that may answer several requests of one message: a fact goes
    when it is in the scope of one of them, and all wait when they are more than the
    requests may take together."""
    asked = [a for a in asked if a.strip()] or [""]
    scope = Scope()
    # one fact found twice (by the person's words and by the step's) is one fact: counted
    # twice, a forget of two facts looked like four and waited for the person
    found = list({id(f) if f.get("id") is None else f["id"]: f for f in found}.values())
    for fact in found:
        mine = any(split(words, [fact], known, meant).kept for words in asked)
        (scope.kept if mine else scope.held).append(fact)
    if len(scope.kept) > MOST_PER_ASK * len(asked) and not any(_ALL.search(a) for a in asked):
        scope.held, scope.kept = scope.kept + scope.held, []
    return scope
