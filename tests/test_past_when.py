"""Relative times in past conversations become dates counted from the conversation's day."""

from __future__ import annotations

import time

import pytest

from core.when import dated_inline, resolved

MAY_8 = time.mktime((2023, 5, 8, 13, 56, 0, 0, 0, -1))  # a Monday


@pytest.mark.parametrize(("when", "fact", "message", "expected"), [
    ("yesterday", "", "", "7 May 2023"),
    ("the day before yesterday", "", "", "6 May 2023"),
    ("last Saturday", "", "", "6 May 2023"),
    ("last Monday", "", "", "1 May 2023"),
    ("next Friday", "", "", "12 May 2023"),
    ("last fri", "", "", "5 May 2023"),  # as people type it
    ("", "joined a group", "I just joined a new activist group last Tues.", "2 May 2023"),
    ("next Thurs", "", "", "11 May 2023"),
    ("", "went hiking", "上周二去爬山了", "2 May 2023"),  # Tuesday of the week before
    ("", "went hiking", "上个星期天去爬山了", "7 May 2023"),
    ("", "has a meeting", "下周五开会", "19 May 2023"),
    ("last year", "", "", "2022"),
    ("last month", "", "", "April 2023"),
    ("next month", "", "", "June 2023"),
    ("last week", "", "", "the week before 8 May 2023"),
    ("two weeks ago", "", "", "the week of 24 April 2023"),
    ("3 days ago", "", "", "5 May 2023"),
    ("昨天", "", "", "7 May 2023"),
    ("去年", "", "", "2022"),
    ("March 2023", "", "", "March 2023"),
    ("Monday, 8 May 2023", "", "I went there yesterday", "7 May 2023"),  # copied the day
    ("not specified", "", "", "said 8 May 2023"),
    ("with family", "", "", "said 8 May 2023"),  # no time at all
    ("", "painted a sunrise last year", "", "2022"),
    ("", "went to a support group", "I went to a support group yesterday.", "7 May 2023"),
    ("", "likes tea", "Tea is nice.", "said 8 May 2023"),
    ("", "likes tea", "I had tea today, I love it.", "said 8 May 2023"),  # only said then
    ("", "ate dumplings", "I had dumplings last night", "7 May 2023"),
    ("", "went hiking", "上周末去爬山了", "the weekend before 8 May 2023"),
    ("", "went hiking", "三天前去爬山了", "5 May 2023"),  # Chinese counted back, too
    ("", "went hiking", "上礼拜去爬山了", "the week before 8 May 2023"),
    ("", "reads a lot", "I've been reading a lot recently", "said 8 May 2023"),  # no one day
])
def test_relative_times_are_counted_from_the_conversations_day(when, fact, message, expected):
    assert resolved(when, fact, message, MAY_8) == expected


@pytest.mark.parametrize(("words", "shown"), [
    ("I went to a pride parade last Friday with friends",
     "I went to a pride parade last Friday [11 August 2023] with friends"),
    ("We went to the Rockies LAST YEAR, it was great",
     "We went to the Rockies LAST YEAR [2022], it was great"),
    ("我昨天去了公园", "我昨天 [13 August 2023]去了公园"),
    ("Last night was amazing! We celebrated my daughter's birthday",
     "Last night [13 August 2023] was amazing! We celebrated my daughter's birthday"),
    ("昨晚我们给女儿过了生日", "昨晚 [13 August 2023]我们给女儿过了生日"),
    ("上周末去爬山了", "上周末 [the weekend before 14 August 2023]去爬山了"),
    ("I joined a new activist group last Tues. It was great",
     "I joined a new activist group last Tues [8 August 2023]. It was great"),
    ("我上周三去了公园", "我上周三 [9 August 2023]去了公园"),
    ("I signed up today!", "I signed up today [14 August 2023]!"),
    ("We camped last summer at the lake", "We camped last summer [summer 2022] at the lake"),
    ("this winter we ski", "this winter [the winter of 2023/24] we ski"),
    ("Next spring I start", "Next spring [spring 2024] I start"),
    ("Nothing here says when", "Nothing here says when"),
    # every time named gets its own date, the first in the text first
    ("I went yesterday, and last summer we camped",
     "I went yesterday [13 August 2023], and last summer [summer 2022] we camped"),
    ("the day before yesterday, then last week",
     "the day before yesterday [12 August 2023], then last week [the week before 14 August"
     " 2023]"),
    ("上周末我们去了公园，去年也去了",
     "上周末 [the weekend before 14 August 2023]我们去了公园，去年 [2022]也去了"),
    ("Three weeks ago I met her; next Friday again",
     "Three weeks ago [the week of 24 July 2023] I met her; next Friday [18 August 2023]"
     " again"),
])
def test_a_turn_quoted_for_a_question_carries_the_date_right_after_its_relative_words(
        words, shown):
    said = time.mktime((2023, 8, 14, 12, 0, 0, 0, 0, -1))  # a Monday
    assert dated_inline(words, said) == shown


@pytest.mark.parametrize(("said", "words", "season"), [
    ((2023, 10, 20), "last summer", "summer 2023"),  # over: the last one
    ((2023, 10, 20), "last fall", "autumn 2022"),  # under way: the one before
    ((2024, 1, 10), "last winter", "the winter of 2022/23"),
    ((2024, 1, 10), "next winter", "the winter of 2024/25"),
    ((2023, 3, 5), "next summer", "summer 2023"),
    ((2023, 3, 5), "this summer", "summer 2023"),
])
def test_a_season_is_the_one_the_words_mean_on_the_day_they_were_said(said, words, season):
    at = time.mktime((*said, 12, 0, 0, 0, 0, -1))
    assert dated_inline(words, at) == f"{words} [{season}]"
