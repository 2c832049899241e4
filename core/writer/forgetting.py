"""Which kept facts a "forget …" means: by words, and by meaning across languages.

The memory-writing step names what to forget in its own words ("green tea"), and the fact
may have been kept in the person's other language ("绿茶"): matching the stored name
exactly forgot nothing, and the next answer repeated the fact. So a fact is matched by
its object's words (either way round), then, where nothing shares words, by meaning
with the multilingual embedding model the app ships: the closest facts, when they stand
clearly above the rest. What is matched is forgotten fact by fact (the trace lists each);
what matches nothing is told to the person, not passed over.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from core.meaning.names import mentions
from core.writer import grounding

Similar = Callable[[str, list[int]], list[tuple[int, float]]]

# multilingual-e5-small scores related texts 0.75–0.95 and favours text in the query's
# own script, so a match must be close in its own right and clearly closer than the
# facts left out. Measured on facts in two languages: right matches scored 0.83–0.91 with
# 0.023–0.14 to the next fact ("green tea" → "我（用户）： 喜欢 绿茶" 0.833, next 0.750);
# wrong ones 0.83–0.85 with at most 0.034 ("花生" → "User 在学 日语"). Closer calls are
# left unmatched and told, never guessed (a few right ones too: "Hangzhou", 0.023).
CLOSE = 0.82
BAND = 0.03  # facts this close to the best one are meant as well (the same thing twice)
CLEARLY = 0.04  # …and they must stand this far above every fact left out


_ASKED = [re.compile(p, re.IGNORECASE) for p in (
    r"(?<!don't )(?<!do not )(?<!never )\b(?:forget|stop remembering|erase|delete|remove)"
    r"\s+(?:that\s+|about\s+|the fact that\s+|what i said about\s+)?(?P<what>[^.!?;]+)",
    r"(?<![别不])(?:忘掉|忘记|忘了|删掉|删除|别再记|不要再记|不要记)(?:我|掉)?(?P<what>[^。！？；]+)",
)]


# Any way of asking to forget, however what is to go is named ("scrap the part about
# eggs", "把鸡蛋那条去掉"); "don't forget", "别忘了" are reminders, not requests.
_ASKS_ANY = re.compile(
    r"(?<!don't )(?<!do not )(?<!never )\b(?:forget|erase|delete|remove|drop|scrap|wipe|"
    r"clear|strike|unlearn|stop remembering|no longer remember|don't remember|"
    r"do not remember)\b|(?<![别不])(?:忘|删|抹掉|去掉|清除|别记|不要记|别再记|不用记)",
    re.IGNORECASE)


def asks_to_forget(message: str) -> bool:
    """The person asks, in any words, that something be forgotten: without that, a
    model's guess of what to forget takes nothing (a move to Suzhou made a 1.5B model
    forget the person's dog and saxophone)."""
    return bool(_ASKS_ANY.search(message))


def asked_to_forget(message: str) -> list[str]:
    """What the person asks in so many words to forget ("Please forget that I'm allergic
    to peanuts", "忘掉我喜欢绿茶"); not "don't forget to …" (a reminder)."""
    found = []
    for pattern in _ASKED:
        for match in pattern.finditer(message):
            what = match.group("what").strip(" ,，、")
            what = re.split(r",\s*(?:that was|it was|it's|because)|，(?:那|因为)", what)[0]
            what = re.sub(r"[,，]?\s*(?:please|thanks|thank you)\s*$|(?:这件事|这个|的事)$",
                          "", what, flags=re.IGNORECASE).strip()
            if what and not what.casefold().startswith(("to ", "it")):
                found.append(what)
    return found


def _by_words(words: str, known: list[dict[str, Any]]) -> list[dict[str, Any]]:
    said = grounding.said_text([words])
    found = []
    for fact in known:
        target = str(fact.get("target_name", ""))
        if not target:
            continue
        if target.casefold() == words.casefold() or grounding.grounded(target, said) or \
                grounding.grounded(words, grounding.said_text([target])) or \
                mentions(words, target):  # asked in the other language: "peanuts", 花生
            found.append(fact)
    return found


def _by_meaning(words: str, known: list[dict[str, Any]],
                similar: Similar | None) -> list[dict[str, Any]]:
    if similar is None or not known:
        return []
    by_id = {fact["id"]: fact for fact in known if "id" in fact}
    scored = sorted(similar(words, list(by_id)), key=lambda pair: -pair[1])
    if len(scored) < 2 or scored[0][1] < CLOSE:
        return []  # one fact alone cannot be told clearly closer than the rest
    cut = max(CLOSE, scored[0][1] - BAND)
    chosen = [fact_id for fact_id, score in scored if score >= cut]
    rest = [score for _fact_id, score in scored if score < cut]
    if rest and min(score for _id, score in scored[:len(chosen)]) - rest[0] < CLEARLY:
        return []  # no clear winner: better to say nothing matched than forget wrongly
    if not rest and len(chosen) > 1:
        # every fact scored alike: that is no match at all (nine of a person's facts were
        # forgotten this way, for a request about their father's city)
        return []
    return [by_id[fact_id] for fact_id in chosen if fact_id in by_id]


def matching(words: str, known: list[dict[str, Any]],
             similar: Similar | None = None) -> list[dict[str, Any]]:
    """The known facts `words` (what to forget) means, best first; [] when none clearly."""
    words = words.strip()
    if not words:
        return []
    return _by_words(words, known) or _by_meaning(words, known, similar)


def purges(facts: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """One soft purge per fact, naming it exactly (subject, relation, object)."""
    planned, seen = [], set()
    for fact in facts:
        key = (fact["source_name"], fact["relation"], fact["target_name"])
        if key in seen:
            continue
        seen.add(key)
        planned.append(("memory_purge", {"criteria": {
            "subject": fact["source_name"], "relation": fact["relation"],
            "object": fact["target_name"]}, "mode": "soft"}))
    return planned
