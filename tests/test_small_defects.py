"""Smaller defects found on bad days: invisible characters in names, blank names, persona
values re-typing memories, tasks recall could not see, the app's own notes sent back to the
model, and timed-out packets that ran anyway."""

from __future__ import annotations

import threading
import time

import pytest

from core import Packet, PacketType
from tests.conftest import commit


def test_invisible_characters_do_not_make_a_second_name(run, store):
    commit(run, ("Alice\u200b", "likes", "tea"), ("\u202eAlice", "likes", "tea"))
    assert store.query_one("SELECT count(*) AS n FROM nodes WHERE norm_name = 'alice'")["n"] == 1
    assert store.query_one("SELECT count(*) AS n FROM edges")["n"] == 1
    assert store.find_node("alice")["name"] == "Alice"


def test_names_and_relations_without_a_visible_character_are_refused(fail, store):
    assert "no visible character" in fail("memory_commit", triplets=[
        {"subject": " \u200b ", "relation": "likes", "object": "tea"}])
    assert "no visible character" in fail("memory_commit", triplets=[
        {"subject": "Ann", "relation": "\u200b", "object": "tea"}])
    assert "no visible character" in fail("task_create", task_id="\u2060", description="x")
    assert store.dump()["nodes"] == []


def test_a_persona_value_never_retypes_a_general_memory(run, store):
    run("memory_commit", triplets=[{"subject": "Anna", "relation": "works as",
                                    "object": "Teacher", "object_type": "Occupation"}])
    run("persona_update", attributes=[{"attribute": "role", "value": "teacher"}])
    assert store.find_node("Teacher")["type"] == "Occupation"


def test_recall_of_tasks_finds_a_task_without_links_with_its_state_and_description(run):
    run("task_create", task_id="trip", description="plan the trip to Kyoto")
    found = run("memory_recall", query_intent="Kyoto", scope="tasks")["result"]
    assert "[in_progress] trip: plan the trip to Kyoto" in found


def test_the_apps_stopped_note_is_never_sent_back_to_the_model(headless, llm):
    client = headless()[1]
    assert client.update_config(None, max_round_trips=1)["success"]
    llm.play({"text": "Let me look.", "tool_calls": [
        {"name": "memory_recall", "arguments": {"query_intent": "x"}}]},
        {"text": "Fine."})
    first = client.process_message("hello")
    assert first["content"] == "Let me look." and first["rescued"] == 1
    assert client.process_message("and now?")["content"] == "Fine."
    sent = "\n".join(str(m.get("content")) for m in llm.requests[-1]["messages"][1:])
    assert "Let me look." in sent and "[Stopped:" not in sent


@pytest.mark.slow
def test_a_timed_out_packet_never_runs_later_and_stops_only_its_own_turn(headless, llm):
    server, client = headless()
    llm.play({"text": "A slow but whole answer.", "delay": 1.5})
    answers = {}
    slow = threading.Thread(target=lambda: answers.update(
        turn=client.process_message("take your time")))
    slow.start()
    # Wait until the worker is on the turn (the loopback server has its request).
    pause, give_up = threading.Event(), time.monotonic() + 30
    while not llm.requests and time.monotonic() < give_up:
        pause.wait(0.01)
    assert llm.requests
    queued = server.send(Packet.make(PacketType.EXECUTE_TOOL, {
        "tool_name": "memory_commit", "arguments": {"triplets": [
            {"subject": "late", "relation": "was", "object": "written"}]}}), timeout=0.3)
    assert not queued.success and queued.code == "timeout"
    slow.join()
    assert answers["turn"]["success"], answers["turn"]  # the other caller's turn went on
    assert answers["turn"]["content"] == "A slow but whole answer."
    recall = client.execute_tool("memory_recall", {"query_intent": "late written"})
    assert "No memories match" in recall["result"]  # the abandoned commit never ran
