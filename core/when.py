"""When something in a past conversation happened, as a date, worked out by the app.

Asked to turn "yesterday" into a date, the 1.5B model copied the conversation's own date,
or wrote "last Saturday" back unchanged, or "not specified". Counting back from a known
day is arithmetic, not language: the model says which words give the time (its `when`,
or the words of the message the fact came from), and this turns the common English and
Chinese ones into a date relative to the conversation's day ("yesterday" in a
conversation of 8 May 2023 is "7 May 2023", "last year" is "2022", "last week" is "the
week before 8 May 2023"). What it cannot read is kept as the model wrote it.
"""

from __future__ import annotations

import re
import time
from datetime import date, timedelta

from core import timewords

EMPTY = {"", "none", "null", "n/a", "na", "unknown", "not specified", "unspecified",
         "not mentioned", "not given", "no date", "ongoing", "now", "today", "currently"}


def day(moment: date) -> str:
    return f"{moment.day} {moment.strftime('%B %Y')}"


def _month(moment: date, months: int) -> str:
    index = moment.year * 12 + moment.month - 1 + months
    return date(index // 12, index % 12 + 1, 1).strftime("%B %Y")


_SEASON_WORDS = re.compile(r"\b(last|this|next|this past)\s+(spring|summer|autumn|fall|"
                           r"winter)\b")


def _season(said: date, name: str, which: str) -> str:
    """"last summer" said on 14 August 2023 is the summer of 2022 (the one under way is
    "this summer"); "next winter" is the first that starts after the day. Seasons are
    the northern hemisphere's, by whole months (winter: December to February)."""
    first = timewords.SEASON_MONTHS[name]
    year = said.year if said.month >= first else said.year - 1  # the last one begun
    ends = date(year + (first + 3 > 12), (first + 2) % 12 + 1, 1)
    under_way = said < ends
    if which == "next":
        year += 1
    elif which == "this":
        year = year if under_way else said.year
    elif under_way:  # "last" or "this past": the one before the one under way
        year -= 1
    if first == 12:
        return f"the winter of {year}/{str(year + 1)[-2:]}"
    return f"{'autumn' if name == 'fall' else name} {year}"


def _relative(text: str, said: date) -> str | None:
    """The date `text` names counted from `said`, or None when it names none."""
    found = _relative_at(text, said)
    return found[1] if found else None


def _relative_at(text: str, said: date, same_day: bool = False) -> tuple[int, str] | None:
    """Where the first relative time in `text` ends, and the date it names from `said`
    (`same_day`: "today" and the like count; see `core.timewords`)."""
    words = text.lower()  # the same length as the text, so places in it are places in text
    found = [(n.start, n.end, label) for n in timewords.every_named(words, same_day)
             if (label := _label(n, said))]
    if hit := _SEASON_WORDS.search(words):
        found.append((hit.start(), hit.end(), _season(said, hit[2], hit[1])))
    if not found:
        return None
    # the first in the text; at one place the longest ("the day before yesterday" is
    # not "yesterday", 上周末 is not 上周)
    _, end, label = min(found, key=lambda f: (f[0], -f[1]))
    return end, label


def _label(named: timewords.Named, said: date) -> str | None:
    """A relative time as a date counted from the day it was said; None for a stretch
    that ends that day ("recently", "the past week"): no one date says it."""
    unit, offset = named.unit, named.offset
    if unit == "day":
        return day(said + timedelta(days=offset))
    if unit == "weekday":
        back, ahead = (said.weekday() - named.weekday) % 7 or 7, \
            (named.weekday - said.weekday()) % 7 or 7
        return day(said - timedelta(days=back) if offset < 0 else said + timedelta(days=ahead))
    if unit == "day of week":  # 上周二: Tuesday of the week before
        return day(said + timedelta(days=named.weekday - said.weekday(), weeks=named.offset))
    if unit in ("week", "weekend"):
        if named.ago:
            return f"the week of {day(said + timedelta(weeks=offset))}"
        where = {-1: "before", 0: "of", 1: "after"}.get(offset)
        return f"the {unit} {where} {day(said)}" if where else None
    if unit == "month":
        return _month(said, offset)
    if unit == "year":
        return str(said.year + offset)
    return None


_TIME_WORDS = re.compile(
    r"\d|\b(yesterday|today|tomorrow|tonight|morning|evening|night|week|weekend|month|"
    r"year|ago|last|next|recently|since|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday|january|february|march|april|may|june|july|august|september|"
    r"october|november|december|spring|summer|autumn|fall|winter)\b|[天周月年]",
    re.IGNORECASE)


def resolved(when: str, fact: str, message: str, said_at: float) -> str:
    """The fact's time as a date: the model's `when` read as relative to the day the
    conversation took place, else the time words in the fact itself ("a sunrise last
    year") or in the message it came from, else the day it was said ("said 8 May 2023").
    A `when` that names no time ("with family") is not a time."""
    said = date(*time.localtime(said_at)[:3])
    given = " ".join(when.split())
    if given.casefold().strip(".") in EMPTY or not _TIME_WORDS.search(given):
        given = ""
    found = _relative(given, said) if given else None
    if found:
        return found
    if given and not _names_said_day(given, said):
        return given[:60]  # a date the model wrote ("March 2023", "2022")
    return _relative(fact, said) or _relative(message, said) or f"said {day(said)}"


def dated_inline(text: str, said_at: float) -> str:
    """`text` with the date each relative time names right after its words ("I went last
    year [2022] with my team"): with the date at the end of the line, the 1.5B model
    answered "last year"; with only the first dated, "yesterday … and last summer" left
    the summer without one."""
    said = date(*time.localtime(said_at)[:3])
    if len(text.lower()) != len(text):  # a letter that lowercases longer: no place to trust
        found = _relative_at(text, said, same_day=True)
        return f"{text} [{found[1]}]" if found else text
    out, rest = [], text
    while rest and (found := _relative_at(rest, said, same_day=True)):
        end, named = found
        out.append(f"{rest[:end]} [{named}]")
        rest = rest[end:]
    return "".join(out) + rest


def said_day(said_at: float) -> str:
    return day(date(*time.localtime(said_at)[:3]))


def _names_said_day(text: str, said: date) -> bool:
    """The model copied the conversation's own date ("Monday, 8 May 2023")."""
    folded = text.casefold()
    return str(said.day) in folded and said.strftime("%B").casefold() in folded
