"""Each request repeats the previous one from its start, so a server's prompt cache reads
only what is new: earlier messages go out again exactly as they were sent, and a new
message carries only what changed in the memory since the window's whole snapshot."""

from __future__ import annotations

from itertools import pairwise

import pytest

from core import PacketType
from core.paths import database_path
from core.store import GraphStore, conversations
from core.turn.prompt_window import WINDOW_KEEP, WINDOW_STEP
from core.turn.snapshot import render_full, snapshot_items
from tests.test_recall_evidence import say


@pytest.fixture
def small_local(headless):
    """A local server with a small unnamed model: answers from the snapshot, no tools."""
    return headless("small", model="local-model")[1]


def chat_requests(llm) -> list[list[dict]]:
    """The answering requests' messages (the memory-writing step's are left out)."""
    return [r["messages"] for r in llm.requests if "response_format" not in r]


def commit(client, *facts: tuple[str, str, str]) -> None:
    assert client.execute_tool("memory_commit", {"triplets": [
        {"subject": s, "relation": r, "object": o} for s, r, o in facts]})["success"]


def test_each_request_repeats_the_previous_one_from_its_start(small_local, llm):
    commit(small_local, ("User", "lives in", "Hangzhou"), ("User", "plays", "the cello"))
    for i in range(5):
        llm.play({"text": f"Answer {i}."})
        assert small_local.process_message(f"Question {i}?")["success"]
    requests = chat_requests(llm)
    assert len(requests) == 5
    for before, after in pairwise(requests):
        assert after[:len(before)] == before
        assert after[len(before)]["role"] == "assistant"
    first = requests[0][-1]["content"]
    assert "About the user (you are talking to them):" in first and "plays the cello" in first
    later = requests[-1][-1]["content"]
    assert "No changes since the snapshot above." in later and "cello" not in later


def test_a_change_and_a_forget_reach_the_next_message_as_changes(small_local, llm):
    commit(small_local, ("User", "lives in", "Hangzhou"), ("User", "allergic to", "peanuts"))
    llm.play({"text": "Hi."}, {"text": "Shanghai, then."}, {"text": "Forgotten."})
    small_local.process_message("Hi?")
    commit(small_local, ("User", "lives in", "Shanghai"))  # one place at a time: replaces
    small_local.process_message("And now?")
    changes = chat_requests(llm)[-1][-1]["content"]
    new, gone = changes.split("No longer true (replaced or forgotten):")
    assert "- lives in Shanghai" in new.split("New about the user and their people:")[1]
    assert "- lives in Hangzhou" in gone and "Shanghai" not in gone
    assert small_local.execute_tool("memory_purge", {"criteria": {"object": "peanuts"},
                                                      "mode": "soft"})["success"]
    small_local.process_message("What now?")
    changes = chat_requests(llm)[-1][-1]["content"]
    gone = changes.split("No longer true (replaced or forgotten):")[1]
    assert "- allergic to peanuts" in gone and "Hangzhou" not in gone  # said once only


def test_a_window_starts_anew_after_its_step_with_the_whole_snapshot(small_local, llm):
    commit(small_local, ("User", "plays", "the cello"))
    turns = WINDOW_STEP // 2 + 1
    for i in range(turns):
        llm.play({"text": f"Answer {i}."})
        small_local.process_message(f"Question {i}?")
    requests = chat_requests(llm)
    fresh = [i for i, r in enumerate(requests) if "About the user" in r[-1]["content"]]
    assert fresh == [0, turns - 1]
    renewed = requests[-1]
    earlier = renewed[1:-1]
    assert len(earlier) == WINDOW_KEEP
    assert all("<memory_snapshot" not in m["content"] for m in earlier)  # as words
    assert earlier[-1] == {"role": "assistant", "content": f"Answer {turns - 2}."}


def test_deleting_the_exchange_that_carried_the_snapshot_starts_a_new_window(small_local,
                                                                             llm):
    commit(small_local, ("User", "plays", "the cello"))
    llm.play({"text": "One."}, {"text": "Two."}, {"text": "Three."})
    first = small_local.process_message("First?")["data"]["turn_id"]
    small_local.process_message("Second?")
    assert small_local.request(PacketType.DELETE_TURN, {"turn_id": first})["success"]
    small_local.process_message("Third?")
    last = chat_requests(llm)[-1]
    assert "plays the cello" in last[-1]["content"]  # shown again, whole
    assert "First?" not in str(last)


@pytest.mark.parametrize(("question", "profile_shown"), [
    ("What instruments does Melanie play?", False),  # someone else, by a name it knows
    ("Where does Melanie play?", False),
    ("What's left to do for the Kyoto trip?", True),  # a capital letter is no one
    ("What did Caroline make for the church?", True),  # the person, by their name
    ("Any good book for the weekend?", True),  # no one named: what suits the person
    ("What should I cook tonight?", True),
    ("Melanie plays the clarinet, and I love it.", True),  # not a question
])
def test_a_question_about_someone_else_shows_who_the_person_is_not_all_they_said(
        store, executor, question, profile_shown):
    assert executor.execute("memory_commit", {"triplets": [
        {"subject": s, "relation": r, "object": o} for s, r, o in (
            ("User", "name", "Caroline"), ("User", "likes", "nature"),
            ("User", "plays", "guitar"), ("Melanie", "plays", "clarinet"))]})["success"]
    items = snapshot_items(store, question, plain=True)
    profile = [i.line for i in items if i.section == "profile"]
    assert "- name Caroline" in profile  # who "the user" is, in every case
    assert ("- likes nature" in profile) is profile_shown
    text = render_full(items, plain=True)
    assert "nothing yet" not in text  # left out is not "nothing known"


@pytest.mark.parametrize("question", ["What's left to do for the dinner party?",
                                      "办一场晚宴还剩哪些事要做？"])
def test_what_remains_is_the_task_list_not_the_turn_that_made_the_plan(
        tmp_path, headless, llm, question):
    """The turn that made a plan names its done steps too: quoted beside the open tasks,
    the 1.5B model listed a finished step as left ("去买酒", with "buy the wine" done)."""
    store = GraphStore(database_path(tmp_path / "small"))
    say(store, conversations.create(store),
        ("user", "For the dinner party I need to buy the wine, cook the dessert and clean "
                 "the flat."), ("assistant", "A good plan: wine, dessert, a clean flat."))
    store.close()
    client = headless("small", model="local-model")[1]
    for step in ("buy the wine", "cook the dessert", "clean the flat"):
        assert client.execute_tool("task_create", {"task_id": step, "description": step})[
            "success"]
    assert client.execute_tool("task_set_state", {"task_id": "buy the wine",
                                                  "state": "completed"})["success"]
    client.request(PacketType.NEW_CONVERSATION)
    llm.play({"text": "The dessert and the flat."})
    assert client.process_message(question)["success"]
    shown = chat_requests(llm)[-1][-1]["content"]
    assert "Tasks not done yet:\n- cook the dessert\n- clean the flat" in shown
    assert "wine" not in shown
