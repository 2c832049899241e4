"""A forget takes whatever language the fact was kept in, and a forget that matches
nothing is told, not passed over: the person told a fact in Chinese, asked in English to
forget it, and the next answer repeated it."""

from __future__ import annotations

import json

import pytest

from core.meaning import engine
from core.writer import forgetting

WAIT = 120.0  # seconds: a ceiling for a cold, loaded machine, not an expected time


def update(**lists):
    empty = {"user_facts": [], "other_facts": [], "changed_user_facts": [], "forget": [],
             "new_tasks": [], "finished_tasks": []}
    return {"text": json.dumps({**empty, **lists})}


def facts(client, words: str) -> str:
    return client.execute_tool("memory_recall", {"query_intent": words})["data"]["result"]


@pytest.fixture
def small_local(headless):
    """A local server with a small model: its memory is written by the extraction step."""
    return headless("small", model="local-model")


def test_a_forget_by_other_words_matches_the_facts_object():
    known = [{"id": 1, "source_name": "User", "relation": "likes", "target_name": "green tea"},
             {"id": 2, "source_name": "User", "relation": "plays", "target_name": "piano"}]
    assert [f["id"] for f in forgetting.matching("the tea", known)] == [1]
    assert [f["id"] for f in forgetting.matching("Green Tea", known)] == [1]
    assert forgetting.matching("my boat", known) == []
    assert forgetting.purges(forgetting.matching("tea", known)) == [("memory_purge", {
        "criteria": {"subject": "User", "relation": "likes", "object": "green tea"},
        "mode": "soft"})]


@pytest.mark.meaning
@pytest.mark.skipif(engine.problem() is not None, reason="no embedding engine here")
def test_a_fact_kept_in_chinese_is_forgotten_when_asked_in_english(small_local, llm):
    server, client = small_local
    llm.play({"text": "好的。"}, update(user_facts=[{"relation": "喜欢", "object": "绿茶"},
                                                   {"relation": "住在", "object": "杭州"},
                                                   {"relation": "养", "object": "一只猫"}]))
    client.process_message("我喜欢绿茶，住在杭州，养了一只猫。")
    assert server.backend.meaning.wait_idle(WAIT)
    llm.play({"text": "Done."}, update(forget=[{"object": "green tea"}]))
    answer = client.process_message("Please forget that I like green tea.")
    assert [(c["name"], c["arguments"]["criteria"]["object"]) for c in answer["tool_calls"]] \
        == [("memory_purge", "绿茶")]
    assert "-喜欢-> 绿茶" not in facts(client, "绿茶 喜欢")
    assert "杭州" in facts(client, "杭州") and "猫" in facts(client, "猫")
    assert "nothing was forgotten" not in answer["content"]


def test_a_forget_that_matches_nothing_says_so(small_local, llm):
    _server, client = small_local
    llm.play({"text": "Hi."}, update(user_facts=[{"relation": "plays", "object": "piano"}]))
    client.process_message("I play the piano.")
    llm.play({"text": "Forgotten!"}, update(forget=[{"object": "my boat"}]))
    answer = client.process_message("Forget about my boat, please.")
    assert answer["content"].startswith("Forgotten!")
    assert answer["content"].endswith(
        "[Nothing in the memory matched “my boat”, so nothing was forgotten]")
    assert "piano" in facts(client, "piano")


@pytest.mark.skipif(engine.problem() is not None, reason="no embedding engine here")
def test_meaning_forgets_only_a_clear_match_and_never_a_look_alike():
    """The model favours text in the query's own script: "花生" (peanuts) scores closest
    to the one Chinese fact, learning Japanese. A close call forgets nothing; the words
    in the other language find it."""
    import numpy as np

    from core.meaning.vectors import fact_text

    rows = [("is allergic to", "peanuts"), ("lives in", "Shanghai"), ("在学", "日语"),
            ("has a cat called", "Mochi"), ("works as", "nurse")]
    known = [{"id": i, "source_name": "User", "relation": r, "target_name": o}
             for i, (r, o) in enumerate(rows)]
    vectors = np.asarray(engine.engine("index").passages(
        [fact_text("User", r, o) for r, o in rows]))

    def similar(text: str, ids: list[int]) -> list[tuple[int, float]]:
        scores = vectors @ np.asarray(engine.engine("query").query(text))
        return [(i, float(scores[i])) for i in ids]

    # the dictionary, not the embedding, says 花生 is peanuts
    assert [f["target_name"] for f in forgetting.matching("花生", known, similar)] == [
        "peanuts"]
    assert forgetting._by_meaning("花生", known, similar) == []  # a close call alone
    assert [f["target_name"] for f in forgetting.matching("peanut allergy", known,
                                                          similar)] == ["peanuts"]
    assert [f["target_name"] for f in forgetting.matching("the Japanese lessons", known,
                                                          similar)] == ["日语"]


@pytest.mark.meaning
@pytest.mark.skipif(engine.problem() is not None, reason="no embedding engine here")
def test_a_models_forget_in_other_words_forgets_what_it_means(headless, llm):
    server, client = headless()
    for relation, thing in (("喜欢", "绿茶"), ("住在", "杭州")):
        assert client.execute_tool("memory_commit", {"triplets": [
            {"subject": "User", "relation": relation, "object": thing}]})["success"]
    assert server.backend.meaning.wait_idle(WAIT)
    llm.play({"tool_calls": [{"name": "memory_purge", "arguments": {
        "criteria": {"subject": "User", "object": "green tea"}}}]}, {"text": "Forgotten."})
    answer = client.process_message("Forget that I like green tea.")
    [call] = answer["tool_calls"]
    assert "forgot what it means instead" in call["result"] and "绿茶" in call["result"]
    assert "-喜欢-> 绿茶" not in facts(client, "绿茶")
    assert "杭州" in facts(client, "杭州")


def test_a_forget_asked_in_so_many_words_takes_when_the_step_names_nothing(small_local,
                                                                             llm):
    """The 1.5B model left "forget" empty and wrote the fact back as a new one."""
    _server, client = small_local
    llm.play({"text": "Noted."}, update(user_facts=[{"relation": "allergy",
                                                     "object": "peanuts"}]))
    client.process_message("I'm allergic to peanuts.")
    llm.play({"text": "Done."}, update(user_facts=[{"relation": "allergy",
                                                    "object": "peanuts"}]))
    answer = client.process_message("Please forget that I'm allergic to peanuts, that was "
                                    "a mistake.")
    assert [c["name"] for c in answer["tool_calls"]] == ["memory_purge"]
    assert "-allergy-> peanuts" not in facts(client, "peanuts allergy")


@pytest.mark.parametrize(("told", "stored", "forget", "written_back"), [
    # the 1.5B model named nothing to forget and wrote the value back as a new fact, in
    # the other language
    ("I'm allergic to peanuts.", "peanuts", "忘记我对花生过敏吧，那是说错了。", "花生"),
    ("I'm allergic to eggs.", "eggs", "请忘掉我对鸡蛋过敏这件事。", "鸡蛋"),
    ("我对鸡蛋过敏。", "鸡蛋", "Please forget that I'm allergic to eggs.", "eggs"),
])
def test_a_forgotten_value_is_not_written_back_in_the_other_language(
        small_local, llm, told, stored, forget, written_back):
    _server, client = small_local
    llm.play({"text": "Noted."}, update(user_facts=[{"relation": "allergy",
                                                     "object": stored}]))
    client.process_message(told)
    llm.play({"text": "Done."}, update(user_facts=[{"relation": "allergy",
                                                    "object": written_back}]))
    answer = client.process_message(forget)
    assert [c["name"] for c in answer["tool_calls"]] == ["memory_purge"]
    for value in (stored, written_back):
        assert "-allergy->" not in facts(client, value), value


@pytest.mark.parametrize(("word", "stem"), [
    ("eggs", "egg"), ("cats", "cat"), ("peanuts", "peanut"), ("berries", "berry"),
    ("this", "this"), ("plus", "plus"), ("bias", "bias"), ("boss", "boss"), ("gas", "gas"),
])
def test_a_plural_is_its_word(word, stem):
    from core.meaning.glossary import stem as stem_of

    assert stem_of(word) == stem


@pytest.mark.parametrize(("said", "asked"), [
    ("Please forget that I'm allergic to peanuts, that was a mistake.",
     ["I'm allergic to peanuts"]),
    ("Forget about my boat, please.", ["my boat"]),
    ("忘掉我喜欢绿茶。", ["喜欢绿茶"]),
    ("Don't forget to buy milk.", []),
    ("别忘了买牛奶。", []),
    ("I forgot my keys.", []),
])
def test_what_the_person_asks_to_forget_is_read_from_their_words(said, asked):
    assert forgetting.asked_to_forget(said) == asked
