"""One recall over facts and the turns they came from: real SQLite files, the real
embedding model where a test is about meaning (marked `meaning`), the real backend and a
scripted model where it is about what the chat is shown."""

from __future__ import annotations

import json
import time
from datetime import date

import pytest

from core.meaning import engine as engines
from core.protocol.packets import PacketType
from core.recall import estimate_tokens, recall
from core.recall.lines import by_day, compact, fact_text, turn_parts, turn_text
from core.recall.timespan import span_of
from core.store import GraphStore, conversations
from core.store.history import History
from tests.conftest import commit

NO_ENGINE = engines.problem() is not None
WAIT = 120.0  # seconds: a ceiling for a cold, loaded machine


def say(store: GraphStore, conversation: int, *lines: tuple[str, str],
        at: float | None = None) -> list[tuple[int, str]]:
    """Messages of a conversation, each exchange its own turn: (message id, turn id)."""
    history = History(store, conversation)
    made, turn = [], ""
    for role, text in lines:
        if role == "user":
            turn = f"t{time.monotonic_ns()}"
        fields = {"turn_id": turn} | ({"created_at": at} if at is not None else {})
        made.append((history.append(role, text, **fields), turn))
    return made


def test_a_fact_brings_the_turn_it_came_from_with_its_day_and_speaker(store, executor):
    earlier = conversations.create(store)
    said = say(store, earlier, ("user", "My sister Mei finally moved to Lisbon in March."),
               ("assistant", "That is a big step for her!"))
    executor.execute("memory_commit", {"triplets": [
        {"subject": "Mei", "relation": "moved to", "object": "Lisbon"}]},
        turn_id=said[0][1])
    found = recall(store, "where did Mei move")
    assert [f["target_name"] for f in found.facts] == ["Lisbon"]
    assert [t["id"] for t in found.turns] == [said[0][0]]  # the person's words, not the reply
    line = turn_text(found.turns[0])
    assert "the user: My sister Mei finally moved to Lisbon in March." in line
    assert line.startswith(f"- {date.fromtimestamp(store.clock()).day} ")
    # what is in the prompt already is not quoted back
    assert recall(store, "where did Mei move", exclude_messages={said[0][0]}).turns == []


def test_a_weak_match_far_down_is_not_shown_even_when_the_budget_has_room(store):
    chat = conversations.create(store)
    best = say(store, chat, ("user", "The cello teacher moved our lesson to Thursday."))
    for n in range(80):
        say(store, chat, ("user", f"Errand {n}: the teacher at the school needs form {n}."))
    found = recall(store, "When is my cello lesson with the teacher?", budget=100_000)
    assert best[0][0] in {t["id"] for t in found.turns}
    # the 40 turns the word ranking keeps all fit the budget; the weakest half is left
    assert len(found.turns) < 30


@pytest.mark.parametrize(("said", "shown"), [
    ("Hey Caroline! I went to the support group.", "I went to the support group."),
    ("Wow, John, that sounds great. [shares a photo: a photo of a dog on a beach]",
     "that sounds great. [photo: a dog on a beach]"),
    ("Thanks, Maria! Thank you so much! It means a lot.", "It means a lot."),
    # words that answer stay, and so does a turn that is nothing but a greeting
    ("Yes, last week.", "Yes, last week."), ("Oh no, the car broke.", "Oh no, the car broke."),
    ("Hey Mel!", "Hey Mel!"), ("谢谢！我昨天去了。", "谢谢！我昨天去了。"),
])
def test_a_turn_is_shown_without_the_words_that_say_nothing(said, shown):
    assert compact(said) == shown


def test_turns_found_by_words_when_the_writer_kept_no_fact(store):
    chat = conversations.create(store)
    said = say(store, chat, ("user", "I started learning the cello at the community school."))
    found = recall(store, "When did I start the cello?")
    assert [t["id"] for t in found.turns] == [said[0][0]] and not found.facts


def test_a_forgotten_fact_and_a_replaced_one_take_their_words_with_them(store, executor,
                                                                       run):
    chat = conversations.create(store)
    allergy, move, forget = (say(store, chat, ("user", text))[0] for text in (
        "I'm allergic to peanuts, by the way.", "I live in Hangzhou and I love peanuts.",
        "Please forget that I'm allergic to peanuts."))
    executor.execute("memory_commit", {"triplets": [
        {"subject": "User", "relation": "is allergic to", "object": "peanuts"}]},
        turn_id=allergy[1])
    executor.execute("memory_commit", {"triplets": [
        {"subject": "User", "relation": "lives in", "object": "Hangzhou"}]},
        turn_id=move[1])
    assert {t["id"] for t in recall(store, "peanuts").turns} == {allergy[0], move[0],
                                                                 forget[0]}
    executor.execute("memory_purge", {"criteria": {"subject": "User", "object": "peanuts"},
                                      "mode": "soft"}, turn_id=forget[1])
    executor.execute("memory_purge", {
        "criteria": {"subject": "User", "relation": "lives in", "object": "Hangzhou"},
        "mode": "supersede", "new_relation": {"relation": "lives in", "target": "Shanghai"}},
        turn_id=move[1] + "-later")
    found = recall(store, "peanuts")
    assert found.turns == []  # neither the words forgotten, nor the request, nor stale words
    assert run("memory_recall", query_intent="peanuts allergy")["result"].startswith(
        "No memories match")


def _imported(store: GraphStore, conversation: int) -> None:
    """Mark a conversation as brought in from a history file."""
    kept = store.conn.execute("INSERT INTO past_imports(file_name, format, created_at)"
                              " VALUES ('history.json', 'locomo', 0)").lastrowid
    store.conn.execute("UPDATE conversations SET import_id = ? WHERE id = ?",
                       (kept, conversation))


@pytest.mark.parametrize("history_replaced_it", [True, False])
def test_an_imported_turn_stays_when_the_history_replaced_its_fact(store, executor,
                                                                    history_replaced_it):
    """A fact of an imported history replaced by a later turn of the history keeps its
    turn (both are the dated record); a change made in a live chat hides it."""
    past = conversations.create(store)
    adopted, moved = (say(store, past, ("user", text))[0] for text in (
        "I just got a new addition to the family, this is Max, in our living room!",
        "We moved to Portland last month."))
    _imported(store, past)
    executor.execute("memory_commit", {"triplets": [
        {"subject": "User", "relation": "lives in", "object": "living room"}]},
        turn_id=adopted[1])
    if history_replaced_it:
        later = moved[1]
    else:
        later = say(store, conversations.create(store), ("user", "I live in Portland."))[0][1]
    executor.execute("memory_purge", {
        "criteria": {"subject": "User", "relation": "lives in", "object": "living room"},
        "mode": "supersede", "new_relation": {"relation": "lives in", "target": "Portland"}},
        turn_id=later)
    shown = {t["id"] for t in recall(store, "When did I adopt Max?").turns}
    assert (adopted[0] in shown) is history_replaced_it


def test_a_time_the_question_names_is_read_as_dates_in_both_languages():
    today = date(2026, 7, 15)
    cases = {
        "what did I do last spring?": (date(2026, 3, 1), date(2026, 6, 1)),
        "where was I in May 2023": (date(2023, 5, 1), date(2023, 6, 1)),
        "what happened two weeks ago": (date(2026, 6, 29), date(2026, 7, 6)),
        "what did she do before 2022": (None, date(2022, 1, 1)),
        "since March what changed": (date(2026, 3, 1), None),
        "我去年去了哪里": (date(2025, 1, 1), date(2026, 1, 1)),
        "去年夏天我们聊了什么": (date(2025, 6, 1), date(2025, 9, 1)),
        "三个月前我在做什么": (date(2026, 4, 1), date(2026, 5, 1)),
        "2023年5月7日发生了什么": (date(2023, 5, 7), date(2023, 5, 8)),
        "上周": (date(2026, 7, 6), date(2026, 7, 13)),
        "what did we eat last night?": (date(2026, 7, 14), date(2026, 7, 15)),
        "昨晚吃了什么": (date(2026, 7, 14), date(2026, 7, 15)),
        "what did I do last Friday?": (date(2026, 7, 10), date(2026, 7, 11)),
        "what did I do last fri?": (date(2026, 7, 10), date(2026, 7, 11)),
        "上周二我做了什么": (date(2026, 7, 7), date(2026, 7, 8)),
        "三天前我说了什么": (date(2026, 7, 12), date(2026, 7, 13)),
        "上礼拜我在忙什么": (date(2026, 7, 6), date(2026, 7, 13)),
        "what did we plan last weekend": (date(2026, 7, 11), date(2026, 7, 13)),
        # the first time named, not the longest: "tomorrow" is ahead, not asked about
        "two weeks ago, or yesterday?": (date(2026, 6, 29), date(2026, 7, 6)),
        "what's on tomorrow, after what I did yesterday?": (date(2026, 7, 14),
                                                             date(2026, 7, 15)),
        # a date with its year wins over a relative word beside it
        "what movie did Nate recently watch on October 6, 2022?": (date(2022, 10, 6),
                                                                   date(2022, 10, 7)),
        "我最近在2022年10月6日看了什么电影？": (date(2022, 10, 6), date(2022, 10, 7)),
        # a range between two dates, the year said once; a length before or after a date
        "where was John between August 11 and August 15 2023?": (date(2023, 8, 11),
                                                                 date(2023, 8, 16)),
        "what did she do from May to July 2023?": (date(2023, 5, 1), date(2023, 8, 1)),
        "from 2021 to 2022, where did I live?": (date(2021, 1, 1), date(2023, 1, 1)),
        "我2023年8月11日到8月15日之间在哪里？": (date(2023, 8, 11), date(2023, 8, 16)),
        "where was Tim in the week before 16 November 2023?": (date(2023, 11, 9),
                                                              date(2023, 11, 16)),
        "what happened the day after 3 May 2023?": (date(2023, 5, 4), date(2023, 5, 5)),
        "what did I do last week of May 2023": (date(2023, 5, 1), date(2023, 6, 1)),
    }
    for question, (start, end) in cases.items():
        span = span_of(question, today)
        assert span is not None and (span.start, span.end) == (start, end), question
    for question in ("did she fall off the bike", "I have 2000 songs", "when did I start"):
        assert span_of(question, today) is None, question
    event = span_of("what did Caroline do before she moved", today)
    assert event is not None and event.anchor == "moved" and event.before
    assert span_of("what did I do last spring?", today).shown() == \
        "1 March 2026 to 31 May 2026"


def test_turns_said_in_the_time_asked_about_come_first_and_the_range_is_shown(
        tmp_path, store, llm, clock):
    chat = conversations.create(store)
    spring = time.mktime(date(2026, 4, 10).timetuple())
    autumn = time.mktime(date(2025, 10, 10).timetuple())
    clock.now = time.mktime(date(2026, 7, 15).timetuple())
    old = say(store, chat, ("user", "We went hiking in the Alps, such a long hike."),
              at=autumn)
    new = say(store, chat, ("user", "We went hiking in the Dolomites this time."), at=spring)
    found = recall(store, "where did we go hiking last spring?", budget=30)
    assert [t["id"] for t in found.turns] == [new[0][0]]
    assert found.span is not None and found.span.shown() == "1 March 2026 to 31 May 2026"
    both = recall(store, "where did we go hiking?")
    assert [t["id"] for t in both.turns] == [old[0][0], new[0][0]]  # as they were said


def test_when_something_said_on_the_day_asked_about_matches_other_days_are_left_out(
        store, clock):
    chat = conversations.create(store)
    clock.now = time.mktime(date(2026, 7, 15).timetuple())
    day = {d: time.mktime(date(2022, 10, d).timetuple()) for d in (6, 9, 12)}
    that_day = say(store, chat, ("user", "I watched Little Women recently, it was great!"),
                   at=day[6])
    later = say(store, chat, ("user", "I recently saw a movie that blew my mind: Inception. "
                                      "Best movie I watched and enjoyed this year."), at=day[9])
    say(store, chat, ("user", "The weather is awful today."), at=day[12])
    asked = "What movie did Nate recently watch and enjoy on October 6, 2022?"
    assert [t["id"] for t in recall(store, asked).turns] == [that_day[0][0]]
    # nothing said that day matches: the other days' turns are still the evidence
    other = recall(store, "What movie did Nate recently watch and enjoy on 12 October 2022?")
    assert later[0][0] in [t["id"] for t in other.turns]


def test_a_month_without_a_year_is_the_latest_one_anything_was_said_in(store, clock):
    today = date(2026, 12, 6)
    for question in ("when did she go to a pride parade in August?", "我5月做了什么",
                     "what did we do in the spring?", "夏天去了哪里"):
        assert span_of(question, today).yearless, question
    for question in ("what did I do last spring?", "in August 2023?", "去年夏天",
                     "since 2022", "two weeks ago", "what did I do last August?"):
        found = span_of(question, today)
        assert found is None or not found.yearless, question
    chat = conversations.create(store)
    august = time.mktime(date(2023, 8, 11).timetuple())
    clock.now = time.mktime(today.timetuple())
    parade = say(store, chat, ("user", "I went to a pride parade today, such energy."),
                 at=august)
    say(store, chat, ("user", "Reading a book about birds this week."),
        at=time.mktime(date(2024, 2, 3).timetuple()))
    found = recall(store, "what did I do in August?", budget=60)
    assert found.span.shown() == "1 August 2023 to 31 August 2023"
    assert [t["id"] for t in found.turns][:1] == [parade[0][0]]
    say(store, chat, ("user", "A quiet August at home this year."),
        at=time.mktime(date(2026, 8, 20).timetuple()))
    assert recall(store, "what did I do in August?").span.shown() == \
        "1 August 2026 to 31 August 2026"


def test_what_is_shown_stays_within_the_budget(store, executor):
    chat = conversations.create(store)
    for n in range(60):
        say(store, chat, ("user", f"Note {n}: the garden needs water and the roses need "
                                  f"pruning before the frost, item {n}."))
    commit_all = [{"subject": "garden", "relation": "needs", "object": f"roses pruned, bed {n}"}
                  for n in range(40)]
    executor.execute("memory_commit", {"triplets": commit_all})
    for budget in (80, 300, 450):
        found = recall(store, "what does the garden need, and the roses?", budget=budget)
        # the turns as shown: under their day, written once
        shown = [fact_text(f) for f in found.facts] + by_day(
            [turn_parts(t) for t in found.turns])
        assert found.turns and (found.facts or budget < 450)
        assert sum(estimate_tokens(line) for line in shown) == found.tokens <= budget
        assert found.considered > len(found.facts) + len(found.turns)


def test_the_chat_is_shown_earlier_conversations_words_with_dates(llm, headless):
    _server, backend_client = headless()
    llm.play({"text": "Lovely!"})
    backend_client.process_message("I adopted a greyhound called Pepper from the shelter.")
    backend_client.request(PacketType.NEW_CONVERSATION)
    llm.play({"text": "Pepper."})
    backend_client.process_message("What is my greyhound called?")
    shown = llm.requests[-1]["messages"][-1]["content"]
    assert "From earlier conversations" in shown
    assert "the user: I adopted a greyhound called Pepper from the shelter." in shown
    llm.play({"text": "Pepper, still."})
    backend_client.process_message("Remind me what my greyhound is called?")
    again = llm.requests[-1]["messages"][-1]["content"]
    assert "I adopted a greyhound" not in again  # shown once in a conversation


@pytest.mark.meaning
@pytest.mark.skipif(NO_ENGINE, reason="no embedding engine on this platform")
def test_a_turn_is_found_by_meaning_with_no_word_in_common(store, meaning):
    chat = conversations.create(store)
    others = ["The weather was rainy all week in Leeds.", "I finished the quarterly report.",
              "My brother fixed the kitchen sink.", "We watched a film about space.",
              "我上周去了一趟成都出差。", "The bakery on the corner closed down."]
    for text in others:
        say(store, chat, ("user", text))
    puppy = say(store, chat, ("user", "We adopted a golden retriever puppy named Biscuit!"))
    question = "Does she have any pets?"
    assert puppy[0][0] not in [t["id"] for t in recall(store, question).turns]  # words only
    indexer = meaning(attached=True)
    assert indexer.wait_idle(WAIT)
    assert indexer.status()["turns_indexed"] == len(others) + 1
    assert puppy[0][0] in [t["id"] for t in recall(store, question, budget=40).turns]
    assert puppy[0][0] in [t["id"] for t in recall(store, "宠物", budget=40).turns]
    # asked again and again, and in a conversation deleted since: the earlier copies of
    # the question are nearest to it, and are no evidence, so they do not crowd it out
    for n in range(45):  # more than the pool the turns nearest in meaning are drawn from
        say(store, chat, ("user", question if n % 2 else "So does she have any pets?"))
    gone = conversations.create(store)
    say(store, gone, ("user", question))
    conversations.set_deleted(store, gone, True)
    assert indexer.wait_idle(WAIT)
    assert puppy[0][0] in [t["id"] for t in recall(store, question, budget=40).turns]


@pytest.mark.meaning
@pytest.mark.skipif(NO_ENGINE, reason="no embedding engine on this platform")
def test_a_turn_of_the_time_asked_about_is_found_by_meaning_among_that_times_turns(
        store, meaning, clock):
    """"Where did I travel in July 2022?" is "I went to Woodhaven" in a July turn that
    shares no word with it, said early that month among many others, while other months
    are full of travel talk."""
    chat = conversations.create(store)
    clock.now = time.mktime(date(2026, 7, 15).timetuple())
    july = time.mktime(date(2022, 7, 2).timetuple())
    went = say(store, chat, ("user", "I went to Woodhaven, a small town in the Midwest, and"
                                     " saw its old library."), at=july)
    for n in range(70):  # more than the newest turns of the time that are ranked by time
        say(store, chat, ("user", f"Batch {n} of cookies came out of the oven fine."),
            at=july + 3600 * (n + 1))
    for n in range(130):  # more than the pool nearest in meaning in the whole conversation
        say(store, chat, ("user", f"We love to travel: trip {n} took us to a new city."),
            at=time.mktime(date(2023, 1 + n % 12, 10).timetuple()))
    indexer = meaning(attached=True)
    assert indexer.wait_idle(WAIT)
    found = recall(store, "Where did I travel to in July 2022?", budget=80)
    assert went[0][0] in [t["id"] for t in found.turns]


@pytest.mark.meaning
@pytest.mark.skipif(NO_ENGINE, reason="no embedding engine on this platform")
def test_a_question_naming_someone_gathers_every_value_of_what_it_asks(store, run, meaning):
    facts = [("Melanie", "has a dog named", "Luna"), ("Melanie", "has a cat named", "Oliver"),
             ("Melanie", "keeps", "a tortoise"), ("Caroline", "has a dog named", "Rex")]
    facts += [("Melanie", verb, thing) for verb, thing in (
        ("likes", "painting"), ("went to", "a concert"), ("works at", "the library"),
        ("lives in", "Denver"), ("plays", "the violin"), ("reads", "mystery novels"),
        ("ran", "a charity race"), ("visited", "the museum"), ("bakes", "sourdough"),
        ("is married to", "Tom"), ("studied", "history"), ("enjoys", "camping"))]
    commit(run, *facts)
    meaning(attached=True)
    assert store.meaning.wait_idle(WAIT)
    found = recall(store, "What pets does Melanie have?")
    shown = {f["target_name"] for f in found.facts if f["source_name"] == "Melanie"}
    assert {"Luna", "Oliver", "a tortoise"} <= shown
    assert "Rex" not in {f["target_name"] for f in found.facts[:3]}


@pytest.mark.meaning
@pytest.mark.skipif(NO_ENGINE, reason="no embedding engine on this platform")
def test_the_memory_tab_finds_by_meaning_in_both_languages_and_says_why_not(
        store, run, meaning):
    from core.store import browse

    commit(run, ("User", "has a dog named", "Luna"), ("User", "养了", "一只小狗"),
           ("Peter", "likes", "trumpets"), ("Anna", "bought", "a carpet"),
           ("User", "drives", "a petrol car"), ("User", "lives in", "Berlin"))
    meaning(attached=True)
    assert store.meaning.wait_idle(WAIT)
    names = {n: r["name"] for r in browse.node_rows(store, browse.list_node_ids(
        store, query="pets")) for n in [r["id"]]}
    assert "Luna" in names.values()  # no word in common: by meaning
    assert "a carpet" not in names.values()  # looks alike, means something else
    # ("trumpets" holds "pets": found by its letters, as a search as you type should)
    found = [r["name"] for r in browse.node_rows(store, browse.list_node_ids(
        store, query="宠物"))]
    assert "一只小狗" in found
    assert browse.list_node_ids(store, query="xylophone") == []
    assert browse.why_nothing(store, "xylophone") == {"meaning": "searched"}
    assert browse.why_nothing(store, "xy") == {"meaning": "short"}
    store.meaning = None
    assert browse.why_nothing(store, "xylophone")["meaning"] == "off"


def test_memory_recall_and_the_apps_quote_the_turns_said(store, executor, run):
    chat = conversations.create(store)
    said = say(store, chat, ("user", "I ran my first marathon in Valencia last December."))
    executor.execute("memory_commit", {"triplets": [
        {"subject": "User", "relation": "ran", "object": "first marathon"}]},
        turn_id=said[0][1])
    answer = run("memory_recall", query_intent="marathon")
    assert "User -ran-> first marathon" in answer["result"]
    assert "said " in answer["result"] and "Valencia last December" in answer["result"]
    assert answer["message_ids"] == [said[0][0]]


def test_a_deleted_conversation_and_a_hidden_branch_are_not_evidence(store):
    chat = conversations.create(store)
    said = say(store, chat, ("user", "The wifi password is on the fridge."),
               ("user", "The spare key is under the wifi router."))
    assert len(recall(store, "wifi").turns) == 2
    History(store, chat).hide_turn(said[1][1], True)  # a version taken back
    assert [t["id"] for t in recall(store, "wifi").turns] == [said[0][0]]
    conversations.set_deleted(store, chat, True)
    assert recall(store, "wifi").turns == []


def test_the_packet_answer_for_an_empty_search_says_why(headless):
    _server, client = headless()
    client.execute_tool("memory_commit", {"triplets": [
        {"subject": "User", "relation": "lives in", "object": "Berlin"}]})
    answer = client.request(PacketType.LIST_NODES, {"query": "zebra"})
    assert answer["data"]["ids"] == [] and answer["data"]["why"]["meaning"] == "off"
    assert answer["data"]["why"]["problem"]
    found = client.request(PacketType.LIST_NODES, {"query": "Berlin"})
    assert found["data"]["ids"] and "why" not in found["data"]


def test_a_matching_question_brings_the_turn_that_answered_it(tmp_path, headless):
    """Imported: both speakers are evidence, and the answer to a question that matches
    comes with it, though it shares no word with what was asked."""
    sample = {"sample_id": "inv-q", "qa": [], "conversation": {
        "speaker_a": "Ada", "speaker_b": "Ben",
        "session_1_date_time": "10:00 am on 8 May, 2023",
        "session_1": [
            {"speaker": "Ada", "dia_id": "D1:1", "text": "How long have you been married?"},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "Five years already! Time flies."},
            {"speaker": "Ada", "dia_id": "D1:3", "text": "The pottery class was fun."},
            {"speaker": "Ben", "dia_id": "D1:4", "text": "Glad to hear it."}]}}
    path = tmp_path / "inv.json"
    path.write_text(json.dumps([sample]), "utf-8")
    _server, client = headless()
    assert client.request(PacketType.IMPORT_HISTORY, {"path": str(path)})["success"]
    said = client.execute_tool("memory_recall", {"query_intent": "How long has Ben been "
                                                                 "married?"})
    text = said["data"]["result"]
    assert "8 May 2023, Ben: Five years already! Time flies." in text
    assert "Ada: How long have you been married?" in text
    assert "pottery" not in text


def test_questions_the_person_asked_are_not_evidence_and_never_crowd_it_out(store):
    said = say(store, conversations.create(store),
               ("user", "Our neighbour's dog is called Pepper, a lovely beagle."))
    for _ in range(60):  # asked again and again, each time in a new chat
        say(store, conversations.create(store),
            ("user", "What is our neighbour's dog called?"), ("assistant", "Pepper."))
    found = recall(store, "What is our neighbour's dog called?")
    assert [t["id"] for t in found.turns] == [said[0][0]]


def test_a_question_asked_often_does_not_crowd_out_what_answers_it(store):
    said = say(store, conversations.create(store),
               ("user", "I'm a fan of classical music, Bach and Mozart mostly."),
               at=store.clock() - 86_400)
    chat = conversations.create(store)
    for n in range(130):  # more than the words' first pool, all matching it better
        say(store, chat, ("user", "Who likes Bach?" if n % 2 else "Who likes Bach and Mozart?"))
    gone = conversations.create(store)
    say(store, gone, ("user", "Who likes Bach?"), ("assistant", "You like Bach and Mozart."))
    conversations.set_deleted(store, gone, True)
    assert [t["id"] for t in recall(store, "Who likes Bach?").turns] == [said[0][0]]


def test_the_same_words_are_shown_once_where_they_were_first_said(store):
    first = say(store, conversations.create(store), ("user", "I keep bees on the roof."),
                at=store.clock() - 86_400)
    say(store, conversations.create(store), ("user", "I keep  bees on the roof."))
    assert [t["id"] for t in recall(store, "Who keeps bees?").turns] == [first[0][0]]


def test_a_facts_date_is_shown_without_the_relative_words_the_writer_kept():
    fact = {"source_name": "User", "relation": "went to", "target_name": "a poetry reading",
            "temporal_tag": "last Fri, 13 Oct 2023"}
    assert fact_text(fact) == "- went to a poetry reading (13 October 2023)"
    assert fact_text({**fact, "temporal_tag": "the week before 9 June 2023"}).endswith(
        "(the week before 9 June 2023)")
    # every date in the one form the turns' dates have, whatever form the writer kept
    for kept, shown in (("2023-09-13", "13 September 2023"), ("Sept 2023", "September 2023"),
                        ("said 22 October 2023", "said 22 October 2023"),
                        ("2023-13-45", "2023-13-45"), ("octopus season", "octopus season")):
        assert fact_text({**fact, "temporal_tag": kept}).endswith(f"({shown})"), kept


def test_a_fact_whose_relation_already_ends_with_its_object_says_it_once():
    def line(relation: str, target: str) -> str:
        return fact_text({"source_name": "Mel", "relation": relation, "target_name": target})

    assert line("asked about Caroline's pets", "pets") == "- Mel asked about Caroline's pets"
    assert line("喜欢吃辣", "辣") == "- Mel 喜欢吃辣"
    assert line("asked about carpets", "pets") == "- Mel asked about carpets pets"
    assert line("lives in", "Lisbon") == "- Mel lives in Lisbon"


def test_turns_are_shown_under_their_day_written_once():
    assert by_day([("1 May 2023", "Ada: hello"), ("1 May 2023", "Ben: hi"),
                   ("3 May 2023", "Ada: back")]) == [
        "1 May 2023:", "- Ada: hello", "- Ben: hi", "3 May 2023:", "- Ada: back"]
