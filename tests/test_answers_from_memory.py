"""A question about the person or their people gets the facts that answer it right
before its words, the person's and each relative's apart, in either language."""

from __future__ import annotations

import pytest

from core.endpoint import profiles
from core.protocol.packets import PacketType
from core.turn import answering
from core.turn.prompts import FACT_FIRST_MINE, answer_prompt, system_prompt

FACTS = [("User", "name", "Sofia"), ("User", "lives in", "Osaka"), ("User", "job", "pilot"),
         ("User", "plays", "saxophone"), ("User", "sister", "Omar"),
         ("Omar", "lives in", "Kunming"), ("Omar", "job", "translator"), ("User", "pet", "Max"),
         ("User", "likes", "fishing")]


@pytest.fixture
def remembered(executor, store):
    assert executor.execute("memory_commit", {"triplets": [
        {"subject": s, "relation": r, "object": o} for s, r, o in FACTS]})["success"]
    return store


@pytest.mark.parametrize(("question", "first"), [
    ("Where do I live now?", "the user lives in Osaka"),
    ("我现在住在哪里？", "the user lives in Osaka"),
    ("What do I do for work?", "the user job pilot"),
    ("我是做什么工作的？", "the user job pilot"),
    ("Which city is my sister in?", "Omar lives in Kunming"),
    ("我姐姐住在哪里？", "Omar lives in Kunming"),
    ("我叫什么名字？", "the user name Sofia"),
    ("What's my hobby?", "the user likes fishing"),
    ("我平时喜欢做什么？", "the user likes fishing"),
    ("What instrument do I play?", "the user plays saxophone"),
    ("我的宠物叫什么名字？", "the user pet Max"),
])
def test_the_fact_that_answers_a_question_stands_right_before_it(remembered, question,
                                                                  first):
    shown = answering.render(answering.facts_for(remembered, question)).splitlines()
    assert shown[0] == "What the memory says that answers it:"
    assert shown[1] == f"- {first}"
    assert len(shown) <= answering.MOST + 1


@pytest.mark.parametrize(("question", "first"), [
    ("Où est-ce que j'habite maintenant ?", "the user lives in Osaka"),
    ("Wo wohne ich jetzt?", "the user lives in Osaka"),
    ("¿Cómo se llama mi mascota?", "the user pet Max"),
])
def test_a_question_about_themselves_in_another_language_gets_their_facts(remembered,
                                                                          question, first):
    """"mon", "ich", "mi" are the person as "my" and "I" are: their facts answer it."""
    shown = answering.render(answering.facts_for(remembered, question)).splitlines()
    assert shown[:2] == ["What the memory says that answers it:", f"- {first}"]


def test_a_relatives_question_never_gets_the_persons_own_city(remembered):
    shown = answering.render(answering.facts_for(remembered, "Where does my sister live?"))
    assert "Kunming" in shown and "Osaka" not in shown


@pytest.mark.parametrize("question", [
    "What's left to do for moving house?", "Which steps are still open?",
    "搬家还剩哪些事要做？", "还有什么没做？", "Did I hire the movers yet?"])
def test_a_question_about_what_remains_gets_the_open_tasks_by_their_names(executor, store,
                                                                         question):
    for step in ("pack the boxes", "hire movers", "change my address"):
        assert executor.execute("task_create", {"task_id": step, "description": step})[
            "success"]
    assert executor.execute("task_set_state", {"task_id": "pack the boxes",
                                               "state": "completed"})["success"]
    shown = answering.render([], answering.tasks_for(store, question)).splitlines()
    assert shown == ["Tasks not done yet:", "- hire movers", "- change my address"]
    assert answering.tasks_for(store, "Where do I live?") == []
    assert answering.tasks_for(store, "I hired the movers today.") == []  # no question


def test_a_statement_gets_nothing_added(remembered):
    assert answering.facts_for(remembered, "I moved to Lyon last week.") == []


def test_the_question_goes_out_with_them_and_later_requests_repeat_it_as_sent(headless, llm):
    client = headless("small", model="local-model")[1]
    assert client.execute_tool("memory_commit", {"triplets": [
        {"subject": s, "relation": r, "object": o} for s, r, o in FACTS]})["success"]
    llm.play({"text": "Osaka."}, {"text": "Kunming."})
    client.process_message("Where do I live now?")
    client.process_message("Where does my sister live?")
    first, second = (r["messages"] for r in llm.requests)
    assert first[-1]["content"].endswith(
        "- the user lives in Osaka\n</memory_snapshot>\nWhere do I live now?\n"
        f"(Reply to this in English{FACT_FIRST_MINE})")
    assert second[:len(first)] == first  # the prefix a server caches
    assert "- Omar lives in Kunming\n</memory_snapshot>" in second[-1]["content"]


@pytest.mark.parametrize(("question", "first"), [
    ("我的仓鼠叫什么？", "the user hamster Biscuit"),
    ("What is my 仓鼠 called?", "the user hamster Biscuit"),
    ("我的宠物叫什么名字？", "the user hamster Biscuit"),
])
def test_a_question_naming_a_relation_in_the_other_language_gets_that_fact(
        executor, store, question, first):
    assert executor.execute("memory_commit", {"triplets": [
        {"subject": "User", "relation": r, "object": o} for r, o in (
            ("name", "Sofia"), ("hamster", "Biscuit"), ("lives in", "Osaka"))]})["success"]
    shown = answering.render(answering.facts_for(store, question)).splitlines()
    assert shown[1] == f"- {first}"


def test_a_town_after_a_preposition_is_where_someone_lives():
    from core.tools.one_value import family

    assert family("is", "in Cairo") == family("is", "Cairo") == "home"
    assert family("is", "in love") is None
    # a relation that holds its own town, and "生活" (to live) with a town
    assert family("在布拉格生活", "布拉格") == family("lives in Paris", "Paris") == "home"
    assert family("生活在", "西安") == "home" and family("在上海工作", "上海") == "employer"
    assert family("生活", "幸福") is None and family("likes Paris", "Paris") is None


def test_a_question_naming_a_relation_asks_for_it_before_the_slot_its_words_name(
        executor, store):
    assert executor.execute("memory_commit", {"triplets": [
        {"subject": "User", "relation": r, "object": o} for r, o in (
            ("name", "Lucas"), ("rabbit", "Nemo"))]})["success"]
    shown = answering.render(answering.facts_for(store, "What's my rabbit's name?"))
    assert shown.splitlines()[1] == "- the user rabbit Nemo"


@pytest.mark.parametrize(("question", "shown"), [
    ("What's my hobby?", ["- the user likes climbing"]),  # not the erhu beside it
    ("我的仓鼠叫什么？", None),  # a thing's name: not the person's
])
def test_only_what_the_question_asks_for_stands_before_it(executor, store, question,
                                                          shown):
    assert executor.execute("memory_commit", {"triplets": [
        {"subject": "User", "relation": r, "object": o} for r, o in (
            ("name", "Sofia"), ("likes", "climbing"), ("plays", "erhu"),
            ("job", "baker"), ("has", "Biscuit"))]})["success"]
    lines = answering.render(answering.facts_for(store, question)).splitlines()[1:]
    if shown is not None:
        assert lines == shown
    else:
        assert "- the user name Sofia" not in lines[:1]


def test_what_remains_of_a_plan_is_answered_by_its_tasks_even_by_the_app(executor, store):
    assert executor.execute("memory_commit", {"triplets": [
        {"subject": "User", "relation": "home", "object": "莫斯科"}]})["success"]
    for step in ("reserve a hotel", "make an itinerary"):
        assert executor.execute("task_create", {"task_id": step, "description": step})[
            "success"]
    said = answering.reply_from_memory(store, "去莫斯科旅行还有什么没做？")
    assert said == "还没做的：reserve a hotel、make an itinerary。"


OTHERS = [("User", "name", "Caroline"), ("User", "has", "a dream"), ("User", "likes", "nature"),
          ("Melanie", "has", "a book"), ("Melanie", "has", "a kitty"),
          ("Melanie", "plays", "clarinet"), ("Caroline", "made", "a stained glass window")]


@pytest.fixture
def someone_else(executor, store):
    assert executor.execute("memory_commit", {"triplets": [
        {"subject": s, "relation": r, "object": o} for s, r, o in OTHERS]})["success"]
    return store


@pytest.mark.parametrize(("question", "expected", "never"), [
    ("What instruments does Melanie play?", "Melanie plays clarinet", "the user"),
    # "has" names no kind: the kitty answers a question about pets, the book does not
    ("What pets does Melanie have?", "Melanie has a kitty", "a book"),
])
def test_a_question_about_someone_else_gets_their_facts_never_the_persons(
        someone_else, question, expected, never):
    shown = answering.render(answering.facts_for(someone_else, question))
    assert f"- {expected}" in shown.splitlines() and never not in shown


def test_a_question_about_someones_relative_is_not_answered_with_their_own_facts(
        executor, store):
    assert executor.execute("memory_commit", {"triplets": [
        {"subject": s, "relation": r, "object": o} for s, r, o in [
            ("Melanie", "likes", "photography"), ("Melanie", "likes", "nature"),
            ("Melanie", "kids love", "dinosaurs"), ("李娜", "喜欢", "游泳")]]})["success"]
    kids = answering.render(answering.facts_for(store, "What do Melanie's kids like?"))
    assert "dinosaurs" in kids and "photography" not in kids and "nature" not in kids
    assert "photography" in answering.render(answering.facts_for(store, "What does "
                                                                 "Melanie like?"))
    assert answering.facts_for(store, "李娜的丈夫喜欢什么？") == []


@pytest.mark.parametrize("question", [
    "What do you remember about me?", "Do you remember anything about me?", "Who am I?",
    "你都知道我什么？", "你记得关于我的哪些事？"])
def test_asked_what_it_knows_of_the_person_every_fact_of_theirs_answers(executor, store,
                                                                       question):
    facts = [("name", "Lin Wei"), ("job", "nurse"), ("lives in", "Shenzhen"),
             ("allergic to", "peanuts"), ("likes", "climbing")]
    assert executor.execute("memory_commit", {"triplets": [
        {"subject": "User", "relation": r, "object": o} for r, o in facts]})["success"]
    shown = answering.render(answering.facts_for(store, question))
    assert all(o in shown for _r, o in facts)
    # a question about someone of theirs is not one about them
    assert "Shenzhen" not in answering.render(answering.facts_for(
        store, "What do you know about my sister?"))


def test_a_question_about_no_one_known_gets_none_of_the_persons_facts(someone_else):
    # Oliver is nobody the memory knows: the person's "has a dream" answered it once
    assert answering.facts_for(someone_else, "Where did Oliver hide his bone once?") == []
    # the person by their name, or by "I", still gets their own facts
    assert answering.facts_for(someone_else, "What does Caroline like?")
    assert answering.facts_for(someone_else, "What do I like?")


@pytest.mark.parametrize("temperature", [None, 0.7])
def test_a_question_of_fact_is_asked_as_one_and_a_chat_stays_a_chat(headless, llm,
                                                                    temperature):
    """Told it is a companion, the 1.5B model answered a question in the words of the
    turn it read; a question of fact goes out with the answer's instructions, at
    temperature 0 unless the person set one, and anything else with the companion's."""
    client = headless("small", model="local-model")[1]
    if temperature is not None:
        assert client.request(PacketType.SET_CONFIG, {"temperature": temperature})["success"]
    llm.play({"text": "Nice!"}, {"text": "{}"}, {"text": "Osaka."})
    client.process_message("I moved to Osaka last spring.")
    client.process_message("Where do I live now?")

    def sent(words: str) -> dict:
        """The reply's request for the message `words` (not the memory-writing step's)."""
        return next(r for r in llm.requests if "response_format" not in r
                    and f"\n{words}\n(Reply to this" in r["messages"][-1]["content"])

    chat, question = sent("I moved to Osaka last spring."), sent("Where do I live now?")
    assert chat["messages"][0]["content"] == system_prompt(False, False)
    assert chat["temperature"] == (temperature or profiles.LOCAL_TEMPERATURE)
    assert question["messages"][0]["content"] == answer_prompt()
    assert question["temperature"] == (temperature or 0)


def test_a_question_of_now_settled_by_a_fact_is_not_shown_other_turns(headless, llm):
    """"Where do I live now?" with the fact that says it: an earlier turn that names
    another city (the mother's) is not shown beside it (the 1.5B model answered with
    it); asked of the past, the turns are shown again."""
    client = headless()[1]
    llm.play({"text": "Noted."})
    client.process_message("Correction: my mother doesn't live in Beijing, I meant Dalian.")
    client.request(PacketType.NEW_CONVERSATION)
    assert client.execute_tool("memory_commit", {"triplets": [
        {"subject": "User", "relation": "lives in", "object": "Suzhou"},
        {"subject": "User", "relation": "mother", "object": "Omar"}]})["success"]
    llm.play({"text": "Suzhou."}, {"text": "Beijing, then Dalian."})
    client.process_message("Where do I live now?")
    now = llm.requests[-1]["messages"][-1]["content"]
    assert "- the user lives in Suzhou" in now
    assert "Dalian" not in now
    client.process_message("Where did my mother live before?")
    assert "I meant Dalian" in llm.requests[-1]["messages"][-1]["content"]


@pytest.mark.parametrize(("message", "said"), [
    ("给一家小面包店起个名字吧。", "抱歉，这次我没能给出回答，请再问一次。"),
    ("Can you write a short poem about the sea?",
     "Sorry, I couldn't put an answer together this time. Please ask again."),
    ("Please explain how rainbows form.",
     "Sorry, I couldn't put an answer together this time. Please ask again."),
    ("My dog is called Biscuit.", "Noted."),
    ("我的狗叫饼干。", "好的，我记下了。"),
])
def test_the_apps_own_reply_never_says_noted_to_a_request(store, message, said):
    """The model said the words back twice: to a request for something made, the app
    says no answer came, not "Noted." (a bare-json replay answered "name a bakery" so)."""
    assert answering.reply_from_memory(store, message) == said


@pytest.mark.parametrize(("message", "said"), [
    ("你还记得我的名字吗？", "根据你告诉我的，你的名字是Sun Hui。"),
    ("What's my name?", "From what you told me, your name is Sun Hui."),
    ("Where do I live?", "From what you told me, you live in 布拉格."),
    ("我的工作是什么？", "根据你告诉我的，你的工作是photographer。"),
])
def test_the_apps_own_answer_names_the_persons_slot_in_their_language(
        executor, store, message, said):
    """The relation is the writer's, often in the other language: the app's own answer
    said "根据你告诉我的：你：name Sun Hui。" (a bare-json replay)."""
    assert executor.execute("memory_commit", {"triplets": [
        {"subject": "User", "relation": "name", "object": "Sun Hui"},
        {"subject": "User", "relation": "居住地", "object": "布拉格"},
        {"subject": "User", "relation": "job", "object": "photographer"}]})["success"]
    assert answering.reply_from_memory(store, message) == said
