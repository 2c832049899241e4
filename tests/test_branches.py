"""An edited message branches the conversation: the exchanges it replaced are kept as a
branch, ‹ 1/2 › switches between branches, each with its own replies, and the memory
follows the branch shown."""

from __future__ import annotations

import pytest

from core import PacketType
from core.store import GraphStore


@pytest.fixture
def backend(headless):
    return headless


def saying(thing: str) -> dict:
    return {"tool_calls": [{"name": "memory_commit", "arguments": {"triplets": [
        {"subject": "User", "relation": "likes", "object": thing}]}}]}


def likes(client) -> str:
    return client.execute_tool("memory_recall", {"query_intent": "likes"})["data"]["result"]


def shown(client) -> list[str]:
    return [m["content"] for m in client.get_history()["history"]]


def edit(client, turn_id: str, text: str) -> dict:
    answer = client._send(PacketType.PROCESS_MESSAGE,
                          {"user_input": text, "replaces_turn": turn_id})
    assert answer["success"], answer
    return answer


def switch(client, turn_id: str, step: int) -> dict:
    return client.request(PacketType.SWITCH_BRANCH, {"turn_id": turn_id, "step": step})


def test_an_edit_keeps_the_old_branch_and_switching_brings_its_replies_and_memory_back(
        backend, llm):
    llm.play(saying("tea"), {"text": "Tea, noted."}, saying("jazz"), {"text": "Jazz too."},
             saying("coffee"), {"text": "Coffee, noted."})
    _, client = backend()
    first = client.process_message("I like tea")
    client.process_message("I like jazz")
    second = edit(client, first["turn_id"], "I like coffee")
    assert shown(client) == ["I like coffee", "Coffee, noted."]
    asked = client.get_history()["history"][0]
    assert asked["branch"] == [2, 2]
    memory = likes(client)
    assert "coffee" in memory and "tea" not in memory and "jazz" not in memory

    back = switch(client, second["turn_id"], -1)
    assert back["success"], back
    assert back["data"]["shown"] == 1 and back["data"]["of"] == 2
    assert [m["content"] for m in back["data"]["history"]] == [
        "I like tea", "Tea, noted.", "I like jazz", "Jazz too."]
    assert back["data"]["history"][0]["branch"] == [1, 2]
    memory = likes(client)
    assert "tea" in memory and "jazz" in memory and "coffee" not in memory

    again = switch(client, first["turn_id"], 1)
    assert again["success"] and again["data"]["shown"] == 2
    assert shown(client) == ["I like coffee", "Coffee, noted."]
    memory = likes(client)
    assert "coffee" in memory and "tea" not in memory and "jazz" not in memory


def test_a_third_version_goes_on_from_the_branch_shown_and_the_ends_do_not_move(
        backend, llm):
    llm.play({"text": "one"}, {"text": "two"}, {"text": "three"}, {"text": "later"})
    _, client = backend()
    first = client.process_message("a")
    second = edit(client, first["turn_id"], "b")
    third = edit(client, second["turn_id"], "c")
    assert client.get_history()["history"][0]["branch"] == [3, 3]
    client.process_message("and then?")
    assert shown(client) == ["c", "three", "and then?", "later"]
    at_end = switch(client, third["turn_id"], 1)
    assert at_end["success"] and at_end["data"]["shown"] == 3  # nothing after the last
    assert switch(client, third["turn_id"], -1)["data"]["shown"] == 2
    assert shown(client) == ["b", "two"]
    assert switch(client, second["turn_id"], -1)["data"]["shown"] == 1
    assert shown(client) == ["a", "one"]
    assert switch(client, first["turn_id"], 1)["data"]["shown"] == 2
    assert switch(client, second["turn_id"], 1)["data"]["shown"] == 3
    assert shown(client) == ["c", "three", "and then?", "later"]  # its later turns came too


def test_a_regenerated_reply_is_no_branch_and_a_message_without_versions_is_refused(
        backend, llm):
    llm.play({"text": "first try"}, {"text": "second try"})
    _, client = backend()
    turn = client.process_message("tell me a joke")["turn_id"]
    again = edit(client, turn, "tell me a joke")
    assert "branch" not in client.get_history()["history"][0]
    refused = switch(client, again["turn_id"], -1)
    assert not refused["success"] and refused["code"] == "not_found"
    bad = client.request(PacketType.SWITCH_BRANCH, {"turn_id": again["turn_id"], "step": 5})
    assert not bad["success"] and bad["code"] == "invalid"


def test_branches_stay_after_a_restart_and_the_model_sees_only_the_branch_shown(
        backend, llm, tmp_path):
    llm.play({"text": "Noted: Lyon."}, {"text": "Noted: Paris."}, {"text": "You said Lyon."})
    server, client = backend()
    first = client.process_message("My sister lives in Lyon")
    second = edit(client, first["turn_id"], "My sister lives in Paris")
    assert switch(client, second["turn_id"], -1)["success"]
    server.shutdown()
    store = GraphStore(tmp_path / "home" / "graph_memory.db")
    try:
        rows = store.query("SELECT fork, first_turn FROM branches ORDER BY id")
    finally:
        store.close()
    assert [r["first_turn"] for r in rows] == [first["turn_id"], second["turn_id"]]
    assert {r["fork"] for r in rows} == {first["turn_id"]}
    _, client = backend()
    assert client.get_history()["history"][0]["branch"] == [1, 2]
    client.process_message("Where does she live?")
    words = " ".join(str(m.get("content")) for m in llm.requests[-1]["messages"])
    assert "Lyon" in words and "Paris" not in words
