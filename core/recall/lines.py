"""How recalled facts and turns are written for a model: short sentences with absolute
dates and who said what, never relative words the model would have to count from."""

from __future__ import annotations

import re

from core import when
from core.store.graph import Row
from core.store.text import has_cjk

PERSON_NODE = "User"  # the person talking (core.tools.base); kept here to stay importable


# "last Fri, 13 Oct 2023": the date is there, the relative words only mislead
_RELATIVE_LEAD = re.compile(r"^(?:last|next|this|on)\s+[^\W\d]+,?\s+(?=\d)", re.IGNORECASE)


_ISO_DAY = re.compile(r"\b((?:19|20)\d\d)-(\d\d)-(\d\d)\b")
_SHORT_MONTH = re.compile(r"\b(Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)\b\.?",
                          re.IGNORECASE)
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")


def _one_way(tag: str) -> str:
    """Every date in one form, as the turns' are ("13 September 2023"): the writer's
    "2023-09-13" and "13 Oct 2023" beside "said 22 October 2023" were answered as written."""
    def iso(found: re.Match[str]) -> str:
        year, month, day = (int(g) for g in found.groups())
        return f"{day} {_MONTHS[month - 1]} {year}" if 1 <= month <= 12 and 1 <= day <= 31 \
            else found[0]

    tag = _ISO_DAY.sub(iso, tag)
    return _SHORT_MONTH.sub(lambda m: next(n for n in _MONTHS
                                           if n.casefold().startswith(m[1][:3].casefold())), tag)


def fact_text(edge: Row) -> str:
    """A fact as a short sentence a small model answers from: "lives in Shanghai" under
    the person's heading, "Mei lives in Beijing" for anyone else; no arrows, counts or
    dates (a 1.5B model said "I don't have enough information" with
    `User -pets-> guitar (x2, 2026-11-30)` in front of it)."""
    about = "" if edge["source_name"] == PERSON_NODE else f"{edge['source_name']} "
    target = "you" if edge["target_name"] == PERSON_NODE else edge["target_name"]
    if _ends_with(edge["relation"], target):  # "asked about her pets" + "pets"
        target = ""
    # when it happened is part of what it says ("went to the support group (7 May 2023)")
    tag = _one_way(_RELATIVE_LEAD.sub("", str(edge.get("temporal_tag") or "")).strip())
    happened = f" ({tag})" if tag else ""
    return f"- {about}{' '.join(filter(None, (edge['relation'], target)))}{happened}"


def _ends_with(relation: str, target: str) -> bool:
    """Whether the relation already ends with the whole target, as the small writer put
    it there: "Melanie asked about Caroline's pets pets" is read as written."""
    said, end = relation.casefold().rstrip(), target.casefold().strip()
    if not end or len(said) <= len(end) or not said.endswith(end):
        return False
    return has_cjk(end[0]) or not said[-len(end) - 1].isalnum()


# What a turn's words spend tokens on and say nothing with: a greeting, thanks or an
# exclamation before what is said ("Hey Caroline! ", "Wow, John, "; not "Yes," or "Oh
# no,", which answer), and the importer's wording of a shared photo ("[shares a photo: a
# photo of a dog]" is "[photo: a dog]"). Evidence is cut to a token budget, so every
# token these take is a turn left out.
_OPENING = re.compile(
    r"^(?:(?:hey|hi|hello|wow|whoa|aww+|ooh|yay|thanks|thank you|congrats|"
    r"congratulations|hooray)(?:,?\s+(?:so much|(?-i:[A-Z][a-z]+)))?\s*[!,.]+\s+)+(?=\S)",
    re.IGNORECASE)
_PHOTO = re.compile(r"\[shares a photo: (?:(?:a|an) (?:photo|picture|image) of )?",
                    re.IGNORECASE)


def compact(words: str) -> str:
    """A turn's words without what says nothing (see `_OPENING`)."""
    return _PHOTO.sub("[photo: ", _OPENING.sub("", words))


def turn_parts(message: Row) -> tuple[str, str]:
    """A turn's day, and who said what with the date a relative time in the words names
    right after them ("last weekend [the weekend before 17 July 2023]"): a small model
    answered "Last weekend." to "when did…?"."""
    who = message.get("speaker") or ("the user" if message["role"] == "user" else "you")
    words = compact(when.dated_inline(message["content"], message["created_at"]))
    return when.said_day(message["created_at"]), f"{who}: {words}"


def turn_text(message: Row) -> str:
    """A turn as a line of its own: its day, who said it, its words."""
    day, said = turn_parts(message)
    return f"- {day}, {said}"


def by_day(turns: list[tuple[str, str]]) -> list[str]:
    """Turns in the order said, under their day ("20 May 2022:" then "- Nate: …"): a day
    written once, not once a turn (a date is a dozen tokens for a tokenizer that splits
    digits, and a day's turns come together: an answer and what it answered)."""
    lines, current = [], None
    for day, said in turns:
        if day != current:
            lines.append(f"{day}:")
            current = day
        lines.append(f"- {said}")
    return lines
