"""The eval's conversation, what the memory should hold after it, and a scripted model.

Fourteen turns in English and Chinese: an introduction, more facts, a move that must
replace the old city, a fact to forget, a three-step plan, a step done, a restart, then
questions whose answers need the memory. The scripted model plays it the way a good model
would, with the habits real servers showed (empty optional fields, keep-alives before the
first token, a call written as text), so CI checks the whole path, not a model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Turn:
    text: str
    answer_words: tuple[str, ...] = ()  # the reply must contain each (any case)
    restart: bool = False  # the app is closed and started again before this turn


TURNS = (
    Turn("Hi! I'm Lin Wei. I live in Hangzhou and I work as a nurse."),
    Turn("I'm allergic to peanuts, and my cat is called Mochi."),
    Turn("My sister Mei lives in Beijing."),
    Turn("Actually, I moved to Shanghai last month."),
    Turn("Please forget that I'm allergic to peanuts, that was a mistake."),
    Turn("Help me plan a trip to Kyoto: book the flights, reserve a hotel, and make an "
         "itinerary."),
    Turn("I've booked the flights."),
    Turn("我最近在学日语。"),
    Turn("What do you remember about me?", ("Shanghai", "Mochi"), restart=True),
    Turn("Where do I live now?", ("Shanghai",)),
    Turn("我的宠物叫什么名字？", ("Mochi",)),
    Turn("Where does my sister live?", ("Beijing",)),
    Turn("What's left to do for the Kyoto trip?", ("hotel", "itinerary")),
    Turn("我在学什么语言？", ("日语",)),
)

PERSON = ("user", "lin wei", "林伟")


@dataclass(frozen=True)
class Fact:
    """An active fact expected at the end: `words` appear in it (subject, relation or
    object, any case); with `about_person`, the person is its subject or object."""

    label: str
    words: tuple[str, ...]
    about_person: bool = True


FACTS = (
    Fact("name is Lin Wei", ("lin wei",)),
    Fact("works as a nurse", ("nurse",)),
    Fact("lives in Shanghai", ("shanghai",)),
    Fact("cat called Mochi", ("mochi",), about_person=False),
    Fact("sister Mei", ("mei",)),
    Fact("Mei lives in Beijing", ("beijing",), about_person=False),
    Fact("learns Japanese", ("日语",)),
)
SUPERSEDED = (("Hangzhou", "Shanghai"),)  # (old object, new object): replaced, not added
FORGOTTEN = ("peanut",)  # no active fact may mention it
STALE = ("hangzhou", "peanut")  # an active fact with one of these is wrong
TASKS = (("flight", "completed"), ("hotel", None), ("itinerary", None))  # (word, state)


def _commit(*triplets: tuple[str, str, str], **extra: Any) -> dict[str, Any]:
    return {"name": "memory_commit", "arguments": {"triplets": [
        {"subject": s, "relation": r, "object": o, **extra} for s, r, o in triplets]}}


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


@dataclass
class ScriptedModel:
    """The loopback steps for each turn, in order."""

    steps: list[list[dict[str, Any]]] = field(default_factory=lambda: [
        [{"tool_calls": [_commit(("User", "name is", "Lin Wei"), ("User", "lives in",
                                                                  "Hangzhou"),
                                 ("User", "works as", "nurse"), subject_type="",
                                 object_type=None)]},
         {"text": "Nice to meet you, Lin Wei! A nurse in Hangzhou."}],
        [{"tool_calls": [_commit(("User", "is allergic to", "peanuts"),
                                 ("User", "has a cat called", "Mochi"))], "keepalive": 0.3},
         {"text": "Noted: no peanuts, and hello to Mochi."}],
        [{"tool_calls": [_commit(("User", "has a sister", "Mei"),
                                 ("Mei", "lives in", "Beijing"))]},
         {"text": "Got it: Mei lives in Beijing."}],
        # A change written as one more fact, as small models write it: the app replaces.
        [{"tool_calls": [_commit(("User", "lives in", "Shanghai"))]},
         {"text": "Updated: you live in Shanghai now."}],
        # A forget in other words than the fact's: the app finds what it means.
        [{"tool_calls": [_call("memory_purge", criteria={"subject": "User",
                                                         "object": "peanut allergy"},
                               mode="soft")]},
         {"text": "Forgotten."}],
        [{"tool_calls": [
            _call("task_create", task_id="Book flights to Kyoto", description="flights"),
            _call("task_create", task_id="Reserve a Kyoto hotel", description="hotel"),
            _call("task_create", task_id="Kyoto itinerary", description="day by day plan")]},
         {"text": "Three steps: flights, hotel, itinerary."}],
        [{"tool_calls": [_call("task_set_state", task_id="Book flights to Kyoto",
                               state="completed")]},
         {"text": "Flights done!"}],
        [{"text": '{"name": "memory_commit", "arguments": {"triplets": [{"subject": "我", '
                  '"relation": "在学", "object": "日语"}]}}'},
         {"text": "加油学日语！"}],
        [{"text": "You are Lin Wei, a nurse in Shanghai; your cat is Mochi; your sister "
                  "Mei lives in Beijing."}],
        [{"text": "You live in Shanghai."}],
        [{"text": "你的猫叫 Mochi。"}],
        [{"tool_calls": [_call("memory_recall", query_intent="sister Mei")]},
         {"text": "Mei lives in Beijing."}],
        [{"text": "The hotel and the itinerary are left; the flights are booked."}],
        [{"text": "你在学日语。"}],
    ])
