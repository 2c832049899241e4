"""The newest message names its language, so a small model answers in it: after one
Chinese exchange a 1.5B model answered an English question in Chinese, and named the
language it answered in English every time."""

from __future__ import annotations

import json

import pytest

from core.turn.prompts import (
    FACT_FIRST,
    FACT_FIRST_MINE,
    TASKS_LEFT,
    fact_first_mine,
    turn_message,
)
from core.writer.language import language_of


@pytest.mark.parametrize(("text", "language"), [
    ("Where does my sister live?", "English"),
    ("我的宠物叫什么名字？", "Chinese"),
    ("你的猫叫 Mochi", "Chinese"),  # a name in another script does not decide
    ("My sister 美美 lives in Beijing", "English"),
    ("私は日本語を勉強しています", "Japanese"),
    ("안녕하세요, 저는 민준이에요", "Korean"),
    ("Привет, как дела?", "Russian"),
    ("Je suis allé à Paris avec ma soeur", "French"),
    ("Ich wohne in Berlin und ich bin Lehrer", "German"),
    ("Hola, ¿dónde está mi gato?", "Spanish"),
    ("Answer in a few words: Would Caroline be considered religious?", "English"),
    ("Plan a trip in June", "English"),
    ("Eu moro em Lisboa e tenho uma irmã", "Portuguese"),
    ("Io sono a Roma con mia sorella, non ho fretta", "Italian"),
    ("ok", None), ("12345", None), ("Mochi!", None), ("", None),  # cannot tell
])
def test_a_message_language_is_told_by_its_script_and_little_words(text, language):
    assert language_of(text) == language


@pytest.fixture
def small_local(headless):
    return headless("small", model="local-model")[1]


def test_each_message_names_its_language_to_the_model(small_local, llm):
    llm.play({"text": "你的猫叫 Mochi。"}, {"text": "Mei lives in Beijing."},
             {"text": "Ok."})
    small_local.process_message("我的宠物叫什么名字？")
    small_local.process_message("Where does my sister live?")
    small_local.process_message("ok?")
    chat = [r["messages"] for r in llm.requests if "response_format" not in r]
    # the words, then what to do with them: never the words last, after a label
    fact_first = FACT_FIRST_MINE + ")"  # both ask about the person: "you" for them
    assert chat[0][-1]["content"].endswith(
        "\n我的宠物叫什么名字？\n(Reply to this in Chinese" + fact_first_mine("Chinese") + ")")
    assert '"you" ("你")' in chat[0][-1]["content"]
    assert chat[1][-1]["content"].endswith(
        "\nWhere does my sister live?\n(Reply to this in English" + fact_first)
    assert chat[2][-1]["content"].endswith("\nok?\n(Reply to this.)")  # unsure: not named
    # the earlier ones went out as before (the instructions are a question's or a chat's:
    # a server caches each prefix, see test_answers_from_memory)
    assert chat[2][1:len(chat[1])] == chat[1][1:]


@pytest.mark.parametrize(("question", "tail"), [
    ("Where do I live now?", FACT_FIRST_MINE),
    ("我的宠物叫什么名字？", fact_first_mine("Chinese")),
    ("Où est-ce que j'habite ?", fact_first_mine("French")),
    ("Где живёт моя сестра?", fact_first_mine("Russian")),
    ("When did Tim start the violin?", FACT_FIRST), ("Where does Mei live?", FACT_FIRST),
    ("莫奇几岁了？", FACT_FIRST), ("Wo wohnt meine Schwester?", fact_first_mine("German")),
    ("제 여동생은 어디에 살아요?", fact_first_mine("Korean")),
    # a language's own first person only in that language: Mia is a name in English
    ("Where does Mia live?", FACT_FIRST), ("What did J. K. Rowling write?", FACT_FIRST),
    ("Quand est-ce que Marie part ?", FACT_FIRST), ("私人飞机是谁的？", FACT_FIRST)])
def test_a_question_about_the_person_is_answered_to_them_as_you(question, tail):
    """In the person's voice the answer came back in it ("I live in Shanghai."); told "you"
    after a question about someone else, the model made whole sentences of its answers.
    In another language "you" is named in it too ("我父亲住苏州。" came back otherwise)."""
    told = turn_message("", question, "2026-12-06 (Sunday)")
    assert told.endswith(f"{tail})")


@pytest.mark.parametrize("question", [
    "What's left to do for moving house?", "Which steps are still open?",
    "办一场晚宴还有什么没做？", "下一步做什么？"])
def test_a_question_about_what_is_left_of_a_plan_asks_for_every_open_task(question):
    # "the fact alone" after it named one open task of two ("hire movers")
    told = turn_message("Tasks not done yet:\n- hire movers\n- change my address", question,
                        "2026-12-06 (Sunday)")
    assert told.endswith(f"\n{question}\n(Reply to this in "
                         f"{'Chinese' if '没' in question or '下' in question else 'English'}"
                         f"{TASKS_LEFT})")
    assert FACT_FIRST not in told


def test_the_memory_step_sees_known_facts_only_to_name_a_change_or_a_forget(small_local,
                                                                            llm):
    assert small_local.execute_tool("memory_commit", {"triplets": [
        {"subject": "User", "relation": "lives in", "object": "Hangzhou"}]})["success"]
    empty = {"text": json.dumps({"user_facts": [], "other_facts": [], "changed_user_facts": [],
                                 "forget": [], "new_tasks": [], "finished_tasks": []})}
    llm.play({"text": "加油！"}, empty, {"text": "Shanghai!"}, empty)
    small_local.process_message("我最近在学日语。")
    step = llm.requests[-1]["messages"][1]["content"]
    assert "Known facts" not in step and "Hangzhou" not in step  # it copied them back
    assert "The user writes Chinese: write relations and objects in Chinese" in step
    small_local.process_message("Actually, I moved to Shanghai last month.")
    step = llm.requests[-1]["messages"][1]["content"]
    assert "Known facts:\n- User -lives in-> Hangzhou" in step


def test_a_change_is_shown_the_facts_it_may_change_not_the_whole_profile(small_local, llm):
    # shown twelve facts, "User -has-> years" first, the 1.5B model copied each back and
    # stored nothing of "I moved to Prague"
    assert small_local.execute_tool("memory_commit", {"triplets": [
        {"subject": "User", "relation": "home", "object": "Seattle"},
        {"subject": "User", "relation": "job", "object": "photographer"},
        {"subject": "User", "relation": "likes", "object": "calligraphy"},
        {"subject": "User", "relation": "has", "object": "played the violin"},
        {"subject": "User", "relation": "has", "object": "years"},
        {"subject": "User", "relation": "妈妈", "object": "Tom"},
        {"subject": "Tom", "relation": "居住地", "object": "多伦多"}]})["success"]
    empty = {"text": json.dumps({"user_facts": [], "other_facts": [], "changed_user_facts": [],
                                 "forget": [], "new_tasks": [], "finished_tasks": []})}
    for message in ("Actually, I moved to Prague last month.", "对了，我家现在在布拉格。",
                    "I don't play the violin anymore, I switched to the cello."):
        llm.play({"text": "Oh!"}, empty)
        small_local.process_message(message)
        step = llm.requests[-1]["messages"][1]["content"]
        known = step.split("Known facts:\n")[1].split("\nKnown tasks:")[0].splitlines()
        assert "- User -home-> Seattle" in known and "- Tom -居住地-> 多伦多" in known
        assert "- User -has-> years" not in known and "- User -likes-> calligraphy" not in known
        if "violin" in message:  # what the message names comes first
            assert known[0] == "- User -has-> played the violin"
        else:
            assert "- User -has-> played the violin" not in known
    # a forget is shown every fact: it may name one in the other language
    llm.play({"text": "好的。"}, empty)
    small_local.process_message("请忘掉我喜欢书法这件事。")
    step = llm.requests[-1]["messages"][1]["content"]
    assert "- User -likes-> calligraphy" in step and "- User -has-> years" in step

