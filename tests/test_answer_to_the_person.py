"""An answer about the person is said to them as "you", not claimed by the assistant."""

from __future__ import annotations

import pytest

from core.events import Event
from core.turn.pronouns import ToThePerson, turned


@pytest.mark.parametrize(("said", "shown"), [
    ("I play the violin.", "You play the violin."),
    ("I translate.", "You translate."),
    ("I'm a photographer.", "You're a photographer."),
    ("I am a nurse and I live in Lyon.", "You are a nurse and you live in Lyon."),
    ("My cat is called Mochi.", "Your cat is called Mochi."),
    ("我的宠物叫Mochi。", "你的宠物叫Mochi。"),
    ("我会拉小提琴。", "你会拉小提琴。"),
    ("I love calligraphy. I hope you have fun with it!",
     "You love calligraphy. I hope you have fun with it!"),  # then its own voice again
    # the assistant's own voice stays its own
    ("I don't know that yet.", "I don't know that yet."),
    ("I remember you play the violin.", "I remember you play the violin."),
    ("我不知道。", "我不知道。"),
    ("Sorry, I'm not sure.", "Sorry, I'm not sure."),
    ("I'd say you play the violin.", "I'd say you play the violin."),
    ("I suggest Sweet Crumbs.", "I suggest Sweet Crumbs."),
    # not opening in the first person
    ("You play the violin.", "You play the violin."),
    ("Iceland is where I live.", "Iceland is where I live."),
    ("Mystery novels, mostly.", "Mystery novels, mostly."),
])
def test_an_answer_in_the_first_person_is_turned_whatever_its_pieces(said, shown):
    for size in (1, 2, 5, len(said)):
        to_person = ToThePerson()
        out = "".join(to_person.feed(said[i:i + size]) for i in range(0, len(said), size))
        assert out + to_person.flush() == shown, size
    assert turned(said.split(". ")[0]) in shown


def test_what_does_not_open_in_the_first_person_is_never_held():
    to_person = ToThePerson()
    assert to_person.feed("Yo") == "Yo" and to_person.feed("u play") == "u play"


@pytest.mark.parametrize(("question", "reply", "shown"), [
    ("What instrument do I play?", "I play the violin.", "You play the violin."),
    ("我的宠物叫什么名字？", "我的宠物叫Mochi。", "你的宠物叫Mochi。"),
    ("What does Tom do for work?", "I think he is a baker.", "I think he is a baker."),
    ("What's my job?", "I don't know that yet.", "I don't know that yet."),
    ("Can you suggest a name for my bakery?", "I love Sweet Crumbs.", "I love Sweet Crumbs."),
])
def test_the_window_gets_the_answer_said_to_the_person(headless, llm, question, reply,
                                                       shown):
    events = []
    client = headless("small", model="local-model",
                      progress=lambda kind, data: events.append((kind, data)))[1]
    llm.play({"text": reply})
    answer = client.process_message(question)
    assert answer["content"] == shown
    assert "".join(d["delta"] for kind, d in events if kind == Event.TEXT) == shown
