"""A reply that repeats the person's words is never shown as the answer: it is held back
while it streams, and the model is asked once more with the message rendered another
way."""

from __future__ import annotations

import pytest

from core.events import Event
from core.turn.parrot import (
    answers_nothing,
    could_answer_nothing,
    could_become,
    has_their_sentence,
    repeats,
)


@pytest.mark.parametrize(("reply", "said", "parrot"), [
    ("Where do I work now?", ["Where do I work now?"], True),
    ("where do i work now", ["Where do I work now?"], True),
    ("The plumber came on Tuesday.", ["The plumber came on Tuesday."], True),
    ("我现在住在哪里？", ["我现在住在哪里？"], True),
    ("My sister lives in Paris.", ["My sister lives in Paris.", "Where do I live?"], True),
    ("Where do I work now? 🙂", ["Where do I work now?"], True),
    ("You work at the hospital in Lyon.", ["Where do I work now?"], False),
    ("Noted: the plumber came on Tuesday, so the sink is fixed?",
     ["The plumber came on Tuesday."], False),
    ("你住在上海。", ["我现在住在哪里？"], False),
    ("Yes.", ["Yes"], False),  # too short to tell
    ("记得你的名字吗？", ["你还记得我的名字吗？"], True),  # the question asked back
    ("Do you remember my name?", ["Do you remember my name?"], True),
    ("Which sister do you mean, Mei or Lan?", ["Where does my sister live?"], False),
    ("你的宠物叫什么名字？", ["我的宠物叫什么名字？"], True),  # the pronoun turned round
    ("您的妻子住在哪里？", ["我妻子住在哪里？"], True),  # the polite one, and 的 added
    ("你妻子住在维也纳。", ["我妻子住在哪里？"], False),
    ("你好，徐明！你住在新加坡，工作是记者。你对自行车感兴趣吗？",
     ["我叫徐明，住在新加坡，工作是记者；我喜欢骑自行车。"], False),  # an answer that asks
    ("Yes, I live in Paris now, by the way.", ["I live in Paris now, by the way."], True),
])
def test_a_reply_that_says_the_persons_words_back_is_a_parrot(reply, said, parrot):
    assert repeats(reply, said) is parrot


def test_a_reply_is_held_only_while_it_may_still_be_the_persons_words():
    assert could_become("Where do", ["Where do I work now?"])
    assert could_become("You work", ["Where do I work now?"])  # "I work", turned round
    assert could_become("Yes, I live in", ["I live in Paris now."])  # a few words first
    assert not repeats("Noted, you like tea.", ["I like tea"])  # a confirmation
    assert not could_become("You work at the hospital", ["Where do I work now?"])
    assert not could_become("Paris is lovely", ["I live in Paris now."])


def test_a_parroted_reply_is_not_shown_and_the_model_is_asked_again(headless, llm):
    events = []
    client = headless("small", model="local-model",
                      progress=lambda kind, data: events.append((kind, data)))[1]
    llm.play({"text": "Where do I live now?"}, {"text": "You live in Lyon."})
    answer = client.process_message("Where do I live now?")
    assert answer["content"] == "You live in Lyon."
    assert answer["parroted"] == 1
    shown = "".join(d["delta"] for kind, d in events if kind == "text")
    assert shown == "You live in Lyon."
    first, again = llm.requests[0], llm.requests[1]
    assert "Do not repeat the message" in again["messages"][-1]["content"]
    assert len(again["messages"]) == 2 and len(first["messages"]) >= 2


def test_a_reply_that_goes_on_past_the_persons_words_keeps_only_its_answer(headless, llm):
    client = headless("small", model="local-model")[1]
    llm.play({"text": "Where do I live now? In Lyon, as you told me."})
    answer = client.process_message("Where do I live now?")
    assert answer["content"] == "In Lyon, as you told me."
    assert answer["parroted"] == 0 and len(llm.requests) == 1


@pytest.mark.parametrize("said, reply, shown", [
    ("Nice to meet you! I'm Sofia, a pilot living in Madrid; I'm allergic to milk.",
     "Hello Sofia! Great to meet you. I'm Sofia, a pilot living in Madrid. What do you fly?",
     "Hello Sofia! Great to meet you. What do you fly?"),
    ("Sorry, I got that wrong: my sister lives in Kunming, not Prague.",
     "Oh, I apologize. My sister lives in Kunming, not Prague.\nNoted, your sister is in Kunming.",
     "Oh, I apologize. Noted, your sister is in Kunming."),
    ("更正一下：我丈夫不住在柏林，我是说上海。",
     "好的！我丈夫不住在柏林，我是说上海。你丈夫住在上海，记住了。",
     "好的！你丈夫住在上海，记住了。"),
    ("I live in Berlin now, not Paris.", "Got it, you live in Berlin now, not Paris.",
     "Got it, you live in Berlin now, not Paris."),
    # after a word or two of its own, the person's sentence is still theirs
    ("其实我上个月搬到东京了。", "对不起，我上个月搬到东京了。你喜欢东京吗？", "你喜欢东京吗？"),
    ("Actually, I moved to Tokyo last month.",
     "Sorry, I moved to Tokyo last month. How do you like it there?",
     "How do you like it there?"),
    ("Actually, I moved to Tokyo last month.", "Oh nice, Tokyo is lovely in spring!",
     "Oh nice, Tokyo is lovely in spring!"),
    ("Plan a dinner party: cook the dessert and clean the flat.",
     "Sure, cook the dessert and clean the flat. Anything else?",
     "Sure, cook the dessert and clean the flat. Anything else?"),
])
def test_a_sentence_of_the_persons_said_as_the_assistants_is_left_out(headless, llm, said,
                                                                       reply, shown):
    events = []
    client = headless("small", model="local-model",
                      progress=lambda kind, data: events.append((kind, data)))[1]
    llm.play({"text": reply})
    answer = client.process_message(said)
    assert answer["content"] == shown and answer["parroted"] == 0
    streamed = "".join(d["delta"] for k, d in events if k == Event.TEXT)
    assert streamed == shown, "the person's sentence was never drawn, not even for a moment"


def test_a_model_that_repeats_twice_gets_the_apps_answer_from_the_memory(headless, llm):
    events = []
    client = headless("small", model="local-model",
                      progress=lambda kind, data: events.append((kind, data)))[1]
    assert client.execute_tool("memory_commit", {"triplets": [
        {"subject": "User", "relation": "lives in", "object": "Lyon"}]})["success"]
    llm.play({"text": "我现在住在哪里？"}, {"text": "我现在住在哪里？"})
    answer = client.process_message("我现在住在哪里？")
    assert answer["content"] == "根据你告诉我的，你住在Lyon。"
    assert answer["parroted"] == 2
    assert "".join(d["delta"] for kind, d in events if kind == "text") == answer["content"]


def test_a_greeting_before_the_persons_words_is_no_answer(headless, llm):
    events = []
    client = headless("small", model="local-model",
                      progress=lambda kind, data: events.append((kind, data)))[1]
    said = "My husband Priya lives in Lyon and works as a translator."
    llm.play({"text": f"Hello, Luo Bin! {said}"}, {"text": "Lyon is lovely."},
             {"text": '{"user_facts": [], "other_facts": [], "changed_user_facts": [], '
                      '"forget": [], "new_tasks": [], "finished_tasks": []}'})
    answer = client.process_message(said)
    assert answer["content"] == "Lyon is lovely."
    assert answer["parroted"] == 1
    shown = "".join(d["delta"] for kind, d in events if kind == "text")
    assert shown == answer["content"] and "translator" not in shown


@pytest.mark.parametrize(("reply", "question", "empty"), [
    ("Yes.", "Do you remember my name?", True),
    ("Yes, I remember your name.", "Do you remember my name?", True),
    ("Of course I do! 😊", "Do you still remember my name?", True),
    ("Yes, I know where you live.", "Do you know where I live?", True),
    ("记得！", "你还记得我的名字吗？", True),
    ("是的，我记得你的名字。", "你还记得我的名字吗？", True),
    ("Yes, your name is Sofia.", "Do you remember my name?", False),
    ("Sofia!", "Do you remember my name?", False),
    ("No, you haven't told me yet.", "Do you remember my name?", False),
    ("当然记得，你叫许明。", "你还记得我的名字吗？", False),
    ("Yes.", "Is my sister called Mei?", False),  # the yes is the answer there
    ("Yes.", "Do you like tea?", False),
])
def test_a_bare_yes_to_do_you_remember_answers_nothing(reply, question, empty):
    assert answers_nothing(reply, question) is empty


def test_a_reply_that_may_still_be_a_bare_yes_waits():
    assert could_answer_nothing("Yes, I", "Do you remember my name?")
    assert could_answer_nothing("Yes, I remember your na", "Do you remember my name?")
    assert not could_answer_nothing("Yes, your name is So", "Do you remember my name?")
    assert not could_answer_nothing("Yes", "Is my sister called Mei?")


def test_a_bare_yes_to_do_you_remember_is_asked_again_and_never_shown(headless, llm):
    events = []
    client = headless("small", model="local-model",
                      progress=lambda kind, data: events.append((kind, data)))[1]
    llm.play({"text": "Yes, I remember your name."}, {"text": "You're Sofia."})
    answer = client.process_message("Do you remember my name?")
    assert answer["content"] == "You're Sofia." and answer["parroted"] == 1
    assert "".join(d["delta"] for kind, d in events if kind == "text") == "You're Sofia."
    assert "say what it is" in llm.requests[1]["messages"][-1]["content"]


def test_a_yes_that_answers_is_shown_as_it_is(headless, llm):
    client = headless("small", model="local-model")[1]
    llm.play({"text": "Yes."})
    answer = client.process_message("Is my sister called Mei?")
    assert answer["content"] == "Yes." and answer["parroted"] == 0
    assert len([r for r in llm.requests if r.get("stream")]) == 1


def test_an_answer_picked_from_the_words_of_the_question_is_shown_as_it_is(headless, llm):
    client = headless("small", model="local-model")[1]
    llm.play({"text": "Green tea, oolong, pu-erh."})
    answer = client.process_message(
        "Which three teas did I say I love: green tea, oolong, pu-erh or black tea?")
    assert answer["content"] == "Green tea, oolong, pu-erh." and answer["parroted"] == 0
    assert len([r for r in llm.requests if r.get("stream")]) == 1


@pytest.mark.parametrize(("reply", "said", "theirs"), [
    ("对不起，我上个月搬到东京了。", ["其实我上个月搬到东京了。"], True),
    ("Great! My sister lives in Kunming, not Prague. Noted.",
     ["Sorry: my sister lives in Kunming, not Prague."], True),
    ("好的，记住了。你住在东京。", ["其实我上个月搬到东京了。"], False),
    ("Noted, your sister lives in Kunming.", ["My sister lives in Kunming."], False),
    # an answer may be a few of the words a question asks with; the question said back
    # is most of it
    ("Blueberries, coconut milk, gluten-free crust.",
     ["What two main ingredients are in the dessert Joanna shared a photo of, with "
      "blueberries, coconut milk and a gluten-free crust?"], False),
    ("绿茶、乌龙茶、普洱茶。", ["我说过最爱的三种茶是什么？绿茶、乌龙茶、普洱茶还是红茶？"], False),
    ("The two main ingredients are in the dessert Joanna shared a photo of, with "
     "blueberries.", ["What two main ingredients are in the dessert Joanna shared a photo "
                      "of, with blueberries, coconut milk and a gluten-free crust?"], True),
])
def test_the_eval_counts_a_sentence_of_theirs_anywhere_in_a_reply(reply, said, theirs):
    assert has_their_sentence(reply, said) is theirs


def test_their_sentence_said_back_with_a_word_mended_is_never_drawn(headless, llm):
    """"a engineer" said back as "an engineer": 5 of the first 6 words theirs, so the
    sentence was shown at "an", before it was seen whole as theirs (a generated
    conversation's reply, on the real 1.5B model)."""
    events = []
    client = headless("small", model="local-model",
                      progress=lambda kind, data: events.append((kind, data)))[1]
    said = "My dad, Guo Jing, is a engineer in Shenzhen."
    llm.play({"text": "My dad, Guo Jing, is an engineer in Shenzhen."},
             {"text": "How long has he been an engineer?"})
    answer = client.process_message(said)
    assert answer["content"] == "How long has he been an engineer?"
    assert answer["parroted"] == 1
    streamed = "".join(d["delta"] for kind, d in events if kind == Event.TEXT)
    assert "Guo Jing" not in streamed
