"""The relative time words the app reads, in English and Chinese, and where a text names them.

Two readers count from them: a question's time as a range of dates, counted from today
(`core.recall.timespan`), and a quoted turn's time as a date, counted from the day it was
said (`core.when`). One vocabulary for both, so that "last night" or 上礼拜 is read the
same in a question and in the turn that answers it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
SEASON_MONTHS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12,
                 "春": 3, "夏": 6, "秋": 9, "冬": 12}
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
           "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "a few": 3,
           "a couple of": 2, "couple of": 2, "few": 3, "several": 3}
_CN_DIGITS = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
              "八": 8, "九": 9, "十": 10, "半": 0}

# phrase -> (unit, offset): a day, calendar week, weekend, month or year `offset` from the
# reference day (-1 the one before, 0 its own, 1 the next); "days": the `offset` days up
# to it ("the past week", "recently")
PHRASES: dict[str, tuple[str, int]] = {
    "the day before yesterday": ("day", -2), "yesterday": ("day", -1),
    "last night": ("day", -1), "today": ("day", 0), "tonight": ("day", 0),
    "this morning": ("day", 0), "this afternoon": ("day", 0), "this evening": ("day", 0),
    "tomorrow": ("day", 1),
    "last week": ("week", -1), "this week": ("week", 0), "next week": ("week", 1),
    "last weekend": ("weekend", -1), "this past weekend": ("weekend", -1),
    "over the weekend": ("weekend", -1), "this weekend": ("weekend", 0),
    "last month": ("month", -1), "this month": ("month", 0), "next month": ("month", 1),
    "last year": ("year", -1), "this year": ("year", 0), "next year": ("year", 1),
    "past week": ("days", 7), "past month": ("days", 30), "past year": ("days", 365),
    "recently": ("days", 30), "lately": ("days", 30),
    "大前天": ("day", -3), "前天": ("day", -2), "昨天": ("day", -1), "昨晚": ("day", -1),
    "今天": ("day", 0), "今晚": ("day", 0), "今早": ("day", 0), "今天早上": ("day", 0),
    "明天": ("day", 1), "后天": ("day", 2),
    "上周": ("week", -1), "上星期": ("week", -1), "上个星期": ("week", -1),
    "上礼拜": ("week", -1), "这周": ("week", 0), "本周": ("week", 0),
    "这个星期": ("week", 0), "下周": ("week", 1), "下星期": ("week", 1),
    "上周末": ("weekend", -1),
    "上个月": ("month", -1), "上月": ("month", -1), "这个月": ("month", 0),
    "本月": ("month", 0), "下个月": ("month", 1),
    "前年": ("year", -2), "去年": ("year", -1), "今年": ("year", 0), "明年": ("year", 1),
    "最近": ("days", 30),
}
# the reference day itself: in a quoted turn worth its date ("signed up today [14 August
# 2023]"), in a fact no better than "said 14 August 2023"
SAME_DAY = frozenset(p for p, (unit, offset) in PHRASES.items() if (unit, offset) == ("day", 0))

_AGO = re.compile(r"\b(\d+|a couple of|a few|an?|one|two|three|four|five|six|seven|eight|"
                  r"nine|ten|few|several)\s+(day|week|month|year)s?\s+ago\b")
_CN_AGO = re.compile(r"(\d+|[一两二三四五六七八九十半]+)\s*(天|周|星期|个月|月|年)(?:以|之)?前")
_CN_UNITS = {"天": "day", "周": "week", "星期": "week", "个月": "month", "月": "month",
             "年": "year"}
# "last Friday", and as people type it, "last fri", "next Tues."
_WEEKDAY_FORMS = ("monday|mon|tuesday|tues|tue|wednesday|weds|wed|thursday|thurs|thur|thu|"
                  "friday|fri|saturday|sat|sunday|sun")
_WEEKDAY = re.compile(rf"\b(last|next)\s+({_WEEKDAY_FORMS})\b")
# 上周二, 下星期五, 上个礼拜天: that day of the week before or after (not the nearest one)
_CN_WEEKDAY = re.compile(r"([上下])个?(?:周|星期|礼拜)([一二三四五六日天])")
_CN_WEEKDAYS = "一二三四五六日"


@dataclass(frozen=True)
class Named:
    """A relative time a text names: where (`start`, `end`), in what `unit` ("day",
    "week", "weekend", "month", "year", "days", "weekday", "day of week") and how far
    from the reference day (`offset`; for "weekday", -1 the last or 1 the next such
    day, for "day of week" that day of the week before or after, and `weekday` which);
    `ago`: counted back ("two weeks ago"), not named ("last week")."""

    start: int
    end: int
    unit: str
    offset: int
    weekday: int = 0
    ago: bool = False


def count(word: str) -> int:
    """A number written in digits, English words or Chinese characters."""
    if word.isdigit():
        return int(word)
    if word in NUMBERS:
        return NUMBERS[word]
    return sum(_CN_DIGITS.get(c, 0) for c in word) or 1


def every_named(text: str, same_day: bool = True) -> list[Named]:
    """Every relative time in `text` (lowercase), in no order; `same_day`: "today" and
    the like count."""
    found: list[Named] = []
    for phrase, (unit, offset) in PHRASES.items():
        if phrase in SAME_DAY and not same_day:
            continue
        pattern = rf"(?<![a-z]){re.escape(phrase)}(?![a-z])" if phrase.isascii() else \
            re.escape(phrase)
        found += [Named(m.start(), m.end(), unit, offset) for m in re.finditer(pattern, text)]
    found += [Named(m.start(), m.end(), m[2], -count(m[1]), ago=True)
              for m in _AGO.finditer(text)]
    found += [Named(m.start(), m.end(), _CN_UNITS[m[2]], -count(m[1]), ago=True)
              for m in _CN_AGO.finditer(text)]
    found += [Named(m.start(), m.end(), "weekday", -1 if m[1] == "last" else 1,
                    [d[:3] for d in WEEKDAYS].index(m[2][:3]))
              for m in _WEEKDAY.finditer(text)]
    found += [Named(m.start(), m.end(), "day of week", -1 if m[1] == "上" else 1,
                  _CN_WEEKDAYS.index(m[2].replace("天", "日")))
              for m in _CN_WEEKDAY.finditer(text)]
    return found


def first_named(text: str, same_day: bool = True) -> Named | None:
    """The first relative time in `text`; at one place the longest ("the day before
    yesterday" is not "yesterday", 上周末 is not 上周)."""
    found = every_named(text, same_day)
    return min(found, key=lambda n: (n.start, -n.end)) if found else None
