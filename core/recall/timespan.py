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

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december")
_MONTH_ABBR = {m[:3]: n for n, m in enumerate(MONTHS, 1)}
SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12,
           "春": 3, "夏": 6, "秋": 9, "冬": 12}
_CN_NUMBERS = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
               "八": 8, "九": 9, "十": 10, "半": 0}
_EN_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
               "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "a few": 3,
               "a couple of": 2, "few": 3, "several": 3}
RECENT_DAYS = 30


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
    month = SEASONS[name]
    year = today.year
    start = _month_start(year, month)
    if start > today or (last and start + timedelta(days=92) > today):
        year -= 1
    return _months(year, month, 3)


def _count(word: str) -> int:
    if word.isdigit():
        return int(word)
    if word in _EN_NUMBERS:
        return _EN_NUMBERS[word]
    return sum(_CN_NUMBERS.get(c, 0) for c in word) or 1


_AGO = re.compile(r"\b(\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|a few|"
                  r"a couple of|few|several)\s+(day|week|month|year)s?\s+ago\b")
_CN_AGO = re.compile(r"(\d+|[一两二三四五六七八九十半]+)\s*(天|周|星期|个月|月|年)(?:以|之)?前")
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


def _fixed(text: str, today: date) -> tuple[date, date] | None:
    """English and Chinese words for a day, week, month or year near today."""
    yesterday = today - timedelta(days=1)
    week = _week_of(today)
    words: dict[str, tuple[date, date]] = {
        "the day before yesterday": (today - timedelta(days=2), yesterday),
        "yesterday": (yesterday, today), "last night": (yesterday, today),
        "today": (today, today + timedelta(days=1)),
        "tonight": (today, today + timedelta(days=1)),
        "this morning": (today, today + timedelta(days=1)),
        "last week": (week[0] - timedelta(days=7), week[0]), "this week": week,
        "past week": (today - timedelta(days=7), today + timedelta(days=1)),
        "last weekend": (week[0] - timedelta(days=2), week[0]),
        "last month": _months(today.year, today.month - 1, 1),
        "this month": _months(today.year, today.month, 1),
        "past month": (today - timedelta(days=30), today + timedelta(days=1)),
        "last year": _year(today.year - 1), "this year": _year(today.year),
        "past year": (today - timedelta(days=365), today + timedelta(days=1)),
        "recently": (today - timedelta(days=RECENT_DAYS), today + timedelta(days=1)),
        "lately": (today - timedelta(days=RECENT_DAYS), today + timedelta(days=1)),
        "前天": (today - timedelta(days=2), yesterday), "昨天": (yesterday, today),
        "昨晚": (yesterday, today), "今天": (today, today + timedelta(days=1)),
        "上周": (week[0] - timedelta(days=7), week[0]),
        "上星期": (week[0] - timedelta(days=7), week[0]),
        "上个星期": (week[0] - timedelta(days=7), week[0]),
        "这周": week, "本周": week, "这个星期": week,
        "上个月": _months(today.year, today.month - 1, 1),
        "上月": _months(today.year, today.month - 1, 1),
        "这个月": _months(today.year, today.month, 1),
        "本月": _months(today.year, today.month, 1),
        "前年": _year(today.year - 2), "去年": _year(today.year - 1),
        "今年": _year(today.year),
        "最近": (today - timedelta(days=RECENT_DAYS), today + timedelta(days=1)),
    }
    for phrase in sorted(words, key=len, reverse=True):
        if phrase.isascii():
            if re.search(rf"(?<![a-z]){re.escape(phrase)}(?![a-z])", text):
                return words[phrase]
        elif phrase in text:
            return words[phrase]
    return None


def _ago(text: str, today: date) -> tuple[date, date] | None:
    found = _AGO.search(text)
    unit = None
    if found:
        count, unit = _count(found.group(1)), found.group(2)
    else:
        cn = _CN_AGO.search(text)
        if cn:
            count = _count(cn.group(1))
            unit = {"天": "day", "周": "week", "星期": "week", "个月": "month",
                    "月": "month", "年": "year"}[cn.group(2)]
    if unit == "day":
        moment = today - timedelta(days=count)
        return moment, moment + timedelta(days=1)
    if unit == "week":
        return _week_of(today - timedelta(weeks=count))
    if unit == "month":
        return _months(today.year, today.month - count, 1)
    if unit == "year":
        return _year(today.year - count)
    return None


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
        month = _count(word) if not word.isalpha() or not word.isascii() else \
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
            start, end = _months(today.year - shift, SEASONS[cn.group(2)], 3)
        elif cn.group(1) == "今年":
            start, end = _months(today.year, SEASONS[cn.group(2)], 3)
        return start, end
    return None


def _range_in(text: str, today: date) -> tuple[date, date] | None:
    for reader in (_seasonal, _fixed, _ago, _dated):
        found = reader(text, today)
        if found:
            return found
    return None


def _yearless(text: str) -> bool:
    """The time is a month or season with no year and no "last"/"this"/去年 to fix one."""
    if _YEAR.search(text) or re.search(r"(?:19|20)\d\d", text) or _fixed(text, date.today()):
        return False
    season = _SEASON.search(text)
    if season:
        return not (season.group(1) or season.group(3))
    cn = _CN_SEASON.search(text)
    if cn:
        return not cn.group(1)
    return bool(_BARE_MONTH.search(text) or _CN_MONTH.search(text))


def span_of(question: str, today: date) -> Span | None:
    """The range the question's own time words name, counted from `today`, or None."""
    text = " ".join(question.casefold().split())
    found = _range_in(text, today)
    if found is not None:
        start, end = found
        head = text[:_first_time_word(text)]
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
    starts = [m.start() for pattern in (_AGO, _MONTH_YEAR, _DAY_MONTH_YEAR, _MONTH_DAY_YEAR,
                                        _ISO, _SEASON)
              for m in [pattern.search(text)] if m]
    starts += [m.start(1) for pattern in (_YEAR, _BARE_MONTH)  # after their preposition
               for m in [pattern.search(text)] if m]
    starts += [m.start() for m in re.finditer(
        r"\b(yesterday|today|last|this|past|recently|lately)\b", text)][:1]
    return min(starts) if starts else len(text)
