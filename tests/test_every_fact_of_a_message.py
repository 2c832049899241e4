"""Every fact of a long message: the writing step sees it clause by clause, and a name the
person gives a pet or a relative is theirs, never the person's own."""

from __future__ import annotations

import json

import pytest

from core.writer import clauses, relatives


@pytest.mark.parametrize(("message", "count"), [
    ("My parrot is called Pepper, and I've played the flute for years.", 2),
    ("我的兔子叫Max，我学二胡好几年了。", 2),
    ("I'm Ada, I run marathons, I'm lactose intolerant and I live in Oslo.", 3),
    ("Where do I live?", 1),
    ("Hi, ok.", 1),  # pieces too short to be clauses stay with the one before
])
def test_a_message_is_cut_into_its_clauses(message, count):
    assert len(clauses.clauses(message)) == count
    assert "".join(clauses.clauses(message)).replace(" ", "") == message.replace(" ", "")


@pytest.mark.parametrize(("message", "name", "noun"), [
    ("My parrot is called Pepper, and I play the flute.", "Pepper", "parrot"),
    ("I have a dog named Luna.", "Luna", "dog"),
    ("Our cat Mochi is nine now.", "Mochi", "cat"),
    ("我的兔子叫Max，我学二胡好几年了。", "Max", "兔子"),
    ("我会弹吉他，还养了一只鹦鹉，叫Lucky。", "Lucky", "鹦鹉"),
    ("My brother is called Tom.", "Tom", "brother"),
    ("My name is Sofia.", "Sofia", None),
    ("我叫徐明。", "徐明", None),
    ("I'm Bao, and I have a dog.", "Bao", None),
])
def test_a_name_given_to_a_thing_of_the_persons_is_found(message, name, noun):
    assert relatives._named_as(name, message) == noun


def update(**lists):
    empty = {"user_facts": [], "other_facts": [], "changed_user_facts": [], "forget": [],
             "new_tasks": [], "finished_tasks": []}
    return {"text": json.dumps({**empty, **lists})}


def test_a_pets_name_filed_as_the_persons_is_the_pets_and_the_writer_sees_clauses(
        headless, llm):
    client = headless("small", model="local-model")[1]
    llm.play({"text": "Hello!"}, update(user_facts=[{"relation": "name", "object": "Lin Wei"}]))
    client.process_message("Hi, I'm Lin Wei.")
    llm.play({"text": "What a lovely parrot!"},
             update(user_facts=[{"relation": "name", "object": "Pepper"},
                                {"relation": "plays", "object": "flute"}]))
    client.process_message("My parrot is called Pepper, and I've played the flute for years.")
    sent = llm.requests[-1]["messages"][-1]["content"]
    assert "1. My parrot is called Pepper," in sent and "2. and I've played" in sent
    facts = client.execute_tool("memory_recall", {"query_intent": "name parrot Pepper flute"})
    said = facts["data"]["result"]
    assert "User -parrot-> Pepper" in said and "User -plays-> flute" in said
    assert "User -name-> Lin Wei" in said and "User -name-> Pepper" not in said


def test_a_step_of_the_plan_and_how_it_stands_are_no_facts(headless, llm):
    client = headless("small", model="local-model")[1]
    llm.play({"text": "Sure."}, update(new_tasks=[{"name": "buy the wine"},
                                                  {"name": "clean the flat"}]))
    client.process_message("Can you help me organise a dinner party? I need to buy the "
                           "wine and clean the flat.")
    # what the 1.5B model wrote for a finished step: the step and "done" as facts
    llm.play({"text": "Great."}, update(
        user_facts=[{"relation": "has", "object": "done"},
                    {"relation": "has", "object": "buy the wine"},
                    {"relation": "likes", "object": "wine"}],
        finished_tasks=[{"name": "buy the wine"}]))
    answer = client.process_message("Done: buy the wine. That's finished already. I like "
                                    "wine.")
    committed = [c for c in answer["tool_calls"] if c["name"] == "memory_commit"]
    assert [t["object"] for c in committed for t in c["arguments"]["triplets"]] == ["wine"]
    assert any(c["name"] == "task_set_state" for c in answer["tool_calls"])
