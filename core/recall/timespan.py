"""The time a question asks about, as a range of dates: "last spring", "in May 2023",
"two weeks ago", "去年", "上个月", "before 2022", "since March".

Recall prefers the facts and turns of that range, and the model is shown the range in
dates, never the question's relative words: counting back from today is arithmetic, which
a small model gets wrong. An expression relative to an event ("before she moved") is
returned with the event's words (`Span.anchor`); recall dates the event from the memory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta

from core import timewords

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december")
_MONTH_ABBR = {m[:3]: n for n, m in enumerate(MONTHS, 1)}


@dataclass(frozen=True)
class Span:
    """[start, end) as dates (None: open), the words that named it, and for "before/after
    <an event>" the event's words instead of a date."""

    start: date | None
    end: date | None
    words: str
    anchor: str = ""
    before: bool = True  # with an anchor: before it (True) or after it
    # a month or season named without a year ("in August", "in the spring", "5月"): the
    # most recent one is a guess, and another year's may be the one meant
    yearless: bool = False

    def years_back(self, years: int) -> Span:
        """The same range `years` earlier ("in August": the August before)."""
        return replace(self, start=_shifted(self.start, years), end=_shifted(self.end, years))

    def shown(self) -> str:
        """The range in dates, as the model is told it."""
        if self.anchor:
            return f"{'before' if self.before else 'after'} {self.anchor}"
        if self.start and self.end:
            last = self.end - timedelta(days=1)
            if self.start == last:
                return _day(self.start)
            return f"{_day(self.start)} to {_day(last)}"
        if self.start:
            return f"since {_day(self.start)}"
        return f"before {_day(self.end)}" if self.end else ""

    def holds(self, moment: float) -> bool:
        """Whether a time (seconds since the epoch, local) falls in the range."""
        when = datetime.fromtimestamp(moment).date()
        return (self.start is None or when >= self.start) and (
            self.end is None or when < self.end)


def _shifted(moment: date | None, years: int) -> date | None:
    return None if moment is None else moment.replace(year=moment.year - years)


def _day(moment: date) -> str:
    return f"{moment.day} {moment.strftime('%B %Y')}"


def _month_start(year: int, month: int) -> date:
    index = year * 12 + month - 1
    return date(index // 12, index % 12 + 1, 1)


def _months(year: int, month: int, count: int) -> tuple[date, date]:
    return _month_start(year, month), _month_start(year, month + count)


def _year(year: int) -> tuple[date, date]:
    return date(year, 1, 1), date(year + 1, 1, 1)


def _week_of(moment: date) -> tuple[date, date]:
    start = moment - timedelta(days=moment.weekday())
    return start, start + timedelta(days=7)


def _season(name: str, today: date, last: bool) -> tuple[date, date]:
    """The most recent such season that has begun (`last`: the one before it when the
    season is under way now: "last summer" asked in July is last year's)."""
    month = timewords.SEASON_MONTHS[name]
    year = today.year
    start = _month_start(year, month)
    if start > today or (last and start + timedelta(days=92) > today):
        year -= 1
    return _months(year, month, 3)


_MONTH_YEAR = re.compile(r"\b(" + "|".join(MONTHS) + r"|jan|feb|mar|apr|jun|jul|aug|sep|"
                         r"sept|oct|nov|dec)\.?,?\s+(?:of\s+)?((?:19|20)\d\d)\b")
_DAY_MONTH_YEAR = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(" + "|".join(MONTHS)
                             + r")\s*,?\s+((?:19|20)\d\d)\b")
_MONTH_DAY_YEAR = re.compile(r"\b(" + "|".join(MONTHS) + r")\s+(\d{1,2})(?:st|nd|rd|th)?"
                             r",?\s+((?:19|20)\d\d)\b")
_ISO = re.compile(r"\b((?:19|20)\d\d)-(\d\d)(?:-(\d\d))?\b")
_YEAR = re.compile(r"\b(?:in|of|since|before|after|during|from|by|until|year)\s+"
                   r"((?:19|20)\d\d)(?![\d-])")
_CN_DATE = re.compile(r"((?:19|20)\d\d)\s*年(?:\s*(\d{1,2})\s*月(?:\s*(\d{1,2})\s*[日号])?)?")
_CN_MONTH = re.compile(r"(?<![\d年])(\d{1,2}|[一二三四五六七八九十]+)\s*月(?!份?前)")
_BARE_MONTH = re.compile(r"\b(?:in|since|before|after|until|by|during)\s+("
                         + "|".join(MONTHS) + r")\b")
_SEASON = re.compile(r"\b(?:(last|this|past)\s+|(?:in|during)\s+(?:the\s+)?)?"
                     r"(spring|summer|autumn|winter)\b|\b(last|this|past)\s+(fall)\b")
_CN_SEASON = re.compile(r"(去年|今年|前年)?(春|夏|秋|冬)(?:天|季)")
_EVENT = re.compile(r"\b(before|after|since)\s+(?:(?:he|she|they|i|we|you)\s+)?(\w+(?:\s+\w+)?)")
_BOUND = re.compile(r"\b(before|after|since|until|by)\s+$")


def _relative(text: str, today: date) -> tuple[date, date] | None:
    """The first relative time the question names that is not ahead of today ("last
    week", "two months ago", 上礼拜, "last Friday"; see `core.timewords`)."""
    past = [n for n in timewords.every_named(text) if n.offset <= 0 or n.unit == "days"]
    if not past:
        return None
    named = min(past, key=lambda n: (n.start, -n.end))
    unit, offset = named.unit, named.offset
    if unit == "day":
        moment = today + timedelta(days=offset)
        return moment, moment + timedelta(days=1)
    if unit == "weekday":
        moment = today - timedelta(days=(today.weekday() - named.weekday) % 7 or 7)
        return moment, moment + timedelta(days=1)
    if unit == "day of week":
        moment = today + timedelta(days=named.weekday - today.weekday(), weeks=offset)
        return moment, moment + timedelta(days=1)
    if unit == "week":
        return _week_of(today + timedelta(weeks=offset))
    if unit == "weekend":
        saturday = _week_of(today + timedelta(weeks=offset))[0] + timedelta(days=5)
        return saturday, saturday + timedelta(days=2)
    if unit == "month":
        return _months(today.year, today.month + offset, 1)
    if unit == "year":
        return _year(today.year + offset)
    return today - timedelta(days=offset), today + timedelta(days=1)  # "days": up to today


def _dated(text: str, today: date) -> tuple[date, date] | None:
    """A date written out: "7 May 2023", "May 7, 2023", "May 2023", "2023-05", "2023年5月",
    "2022", "in May" (the most recent May), "5月"."""
    for pattern, order in ((_DAY_MONTH_YEAR, "dmy"), (_MONTH_DAY_YEAR, "mdy")):
        found = pattern.search(text)
        if found:
            parts = dict(zip(order, found.groups(), strict=True))
            moment = date(int(parts["y"]), _month_number(parts["m"]), int(parts["d"]))
            return moment, moment + timedelta(days=1)
    found = _ISO.search(text) or _CN_DATE.search(text)
    if found:
        year, month, day = found.group(1), found.group(2), found.group(3)
        if month and day:
            moment = date(int(year), int(month), int(day))
            return moment, moment + timedelta(days=1)
        return _months(int(year), int(month), 1) if month else _year(int(year))
    found = _MONTH_YEAR.search(text)
    if found:
        return _months(int(found.group(2)), _month_number(found.group(1)), 1)
    found = _YEAR.search(text)
    if found:
        return _year(int(found.group(1)))
    found = _BARE_MONTH.search(text) or _CN_MONTH.search(text)
    if found:
        word = found.group(1)
        month = timewords.count(word) if not word.isalpha() or not word.isascii() else \
            _month_number(word)
        year = today.year if month <= today.month else today.year - 1
        return _months(year, month, 1)
    return None


def _month_number(word: str) -> int:
    word = word.casefold().rstrip(".")
    return MONTHS.index(word) + 1 if word in MONTHS else _MONTH_ABBR[word[:3]]


def _seasonal(text: str, today: date) -> tuple[date, date] | None:
    found = _SEASON.search(text)
    if found:
        which, name = (found.group(1), found.group(2)) if found.group(2) else \
            (found.group(3), found.group(4))
        return _season(name, today, which in ("last", "past"))
    cn = _CN_SEASON.search(text)
    if cn:
        start, end = _season(cn.group(2), today, False)
        shift = {"去年": 1, "前年": 2}.get(cn.group(1) or "", 0)
        if cn.group(1) in ("去年", "前年"):
            start, end = _months(today.year - shift, timewords.SEASON_MONTHS[cn.group(2)], 3)
        elif cn.group(1) == "今年":
            start, end = _months(today.year, timewords.SEASON_MONTHS[cn.group(2)], 3)
        return start, end
    return None


def _range_in(text: str, today: date) -> tuple[date, date] | None:
    """A date with its year wins over a relative word beside it: "what did Nate recently
    watch on October 6, 2022?" asks about that day, not the month before today."""
    with_year = re.search(r"(?<!\d)(?:19|20)\d\d(?!\d)", text) is not None
    for reader in (_seasonal, _dated, _relative) if with_year else \
            (_seasonal, _relative, _dated):
        found = reader(text, today)
        if found:
            return found
    return None


def _yearless(text: str) -> bool:
    """The time is a month or season with no year and no "last"/"this"/去年 to fix one."""
    if _YEAR.search(text) or re.search(r"(?:19|20)\d\d", text) or timewords.every_named(text):
        return False
    season = _SEASON.search(text)
    if season:
        return not (season.group(1) or season.group(3))
    cn = _CN_SEASON.search(text)
    if cn:
        return not cn.group(1)
    return bool(_BARE_MONTH.search(text) or _CN_MONTH.search(text))


# each side a few words long: a long message costs a pass, not a search from every place
_BETWEEN = re.compile(r"\b(?:between|from)\s+(.{1,40}?)\s+(?:and|to|until|till|through)\s+"
                      r"(.{1,40}?)\s*(?:[?.!,;]|$)|(?:从|在)?([^从在到至]{1,16}?)(?:到|至)"
                      r"([^到至]{1,16}?)(?:之间|期间|这段时间|[？?。，,]|$)")
_NEXT_TO = re.compile(r"\b(?:the\s+)?(day|week|weekend|month)\s+(before|after)\s+$")
_LENGTH = {"day": 1, "week": 7, "weekend": 2, "month": 31}
_A_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")


def _between(text: str, today: date) -> tuple[date, date] | None:
    """"Between August 11 and August 15 2023", "from May to July 2023", "2023年8月11日到
    8月15日之间": from the first date to the end of the second (the year said once is
    both's)."""
    found = _BETWEEN.search(text)
    if not found:
        return None
    first, second = (found.group(1), found.group(2)) if found.group(1) else \
        (found.group(3), found.group(4))
    year = _A_YEAR.search(second) or _A_YEAR.search(first)
    if year and not _A_YEAR.search(first):
        first = f"{year.group()}年{first}" if _CN_MONTH.search(first) else f"{first} {year.group()}"
    if year and not _A_YEAR.search(second):
        second = f"{year.group()}年{second}" if _CN_MONTH.search(second) else \
            f"{second} {year.group()}"
    # a bare year is a date here ("from 2021 to 2022")
    start = _dated(first, today) or _dated(f"in {first}", today)
    end = _dated(second, today) or _dated(f"in {second}", today)
    if start is None or end is None or end[1] <= start[0]:
        return None
    return start[0], end[1]


def span_of(question: str, today: date) -> Span | None:
    """The range the question's own time words name, counted from `today`, or None."""
    text = " ".join(question.casefold().split())
    between = _between(text, today)
    if between is not None:
        return Span(*between, question.strip())
    found = _range_in(text, today)
    if found is not None:
        start, end = found
        head = text[:_first_time_word(text)]
        if nearby := _NEXT_TO.search(head):  # "the week before 16 November 2023"
            length = timedelta(days=_LENGTH[nearby.group(1)])
            return Span(start - length, start, question.strip()) if nearby.group(2) == \
                "before" else Span(end, end + length, question.strip())
        bound = _BOUND.search(head)
        if bound and bound.group(1) in ("before", "until", "by"):
            return Span(None, start, question.strip())
        if bound:  # after, since
            return Span(end if bound.group(1) == "after" else start, None, question.strip())
        return Span(start, end, question.strip(), yearless=_yearless(text))
    event = _EVENT.search(text)
    if event and event.group(2) not in ("that", "this", "it", "then", "now", "the"):
        return Span(None, None, question.strip(), anchor=event.group(2),
                    before=event.group(1) == "before")
    return None


def _first_time_word(text: str) -> int:
    """Where the first time expression begins (for a "before"/"after" right before it)."""
    starts = [m.start() for pattern in (_MONTH_YEAR, _DAY_MONTH_YEAR, _MONTH_DAY_YEAR, _ISO,
                                        _SEASON)
              for m in [pattern.search(text)] if m]
    starts += [n.start for n in timewords.every_named(text)]
    starts += [m.start(1) for pattern in (_YEAR, _BARE_MONTH)  # after their preposition
               for m in [pattern.search(text)] if m]
    starts += [m.start() for m in re.finditer(
        r"\b(yesterday|today|last|this|past|recently|lately)\b", text)][:1]
    return min(starts) if starts else len(text)
