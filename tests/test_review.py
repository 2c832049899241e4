"""The review inbox, the one event per committed change, redo, and the counts everyone shows:
through the dispatcher with a real store file and the loopback model."""

from __future__ import annotations

import json

import pytest

from core.protocol.dispatcher import Dispatcher
from core.protocol.packets import Packet, PacketType
from core.store import GraphStore
from core.store.exchange import export_json
from tests.conftest import ask as asked


def commit_call(*triplets):
    return {"name": "memory_commit", "arguments": {"triplets": [
        {"subject": t[0], "relation": t[1], "object": t[2], **(t[3] if len(t) > 3 else {})}
        for t in triplets]}}


@pytest.fixture
def backend(tmp_path, llm, hosted):
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.json").write_text(json.dumps({
        "api_key": "sk-test-key-000000", "base_url": llm.base_url, "model": "test-model"}))
    return hosted


def ask(dispatcher: Dispatcher, type_: PacketType, body=None, events=None):
    answer = asked(dispatcher, type_, body, events)
    assert answer.success, answer.error
    return answer.body


def test_what_the_model_wrote_waits_in_the_inbox_until_kept_even_across_a_restart(
        backend, llm):
    llm.play({"tool_calls": [commit_call(("User", "likes", "green tea"),
                                         ("User", "lives in", "Berlin", {"confidence": 0.4}))]},
             {"text": "Noted."},
             {"tool_calls": [commit_call(("User", "works at", "Bosch"))]},
             {"text": "Noted too."})
    dispatcher = backend()
    ask(dispatcher, PacketType.PROCESS_MESSAGE,
        {"user_input": "I like green tea; I live in Berlin?"})
    ask(dispatcher, PacketType.PROCESS_MESSAGE, {"user_input": "I work at Bosch"})
    ask(dispatcher, PacketType.EXECUTE_TOOL, {"tool_name": "memory_commit", "arguments": {
        "triplets": [{"subject": "User", "relation": "has", "object": "a cat"}]}})
    inbox = ask(dispatcher, PacketType.REVIEW_LIST)
    assert inbox["count"] == 2  # the person's own fact is not theirs to review
    newest, oldest = inbox["changes"]
    assert newest["message"]["content"] == "I work at Bosch"
    assert [(x["verb"], x["text"]) for x in newest["lines"]] == [
        ("added", "User works at Bosch")]
    assert oldest["guess"] and not newest["guess"]
    assert [x["guess"] for x in oldest["lines"]] == [False, True]
    ask(dispatcher, PacketType.REVIEW_KEEP, {"change_ids": [oldest["id"]]})
    dispatcher.backend.close()

    dispatcher = backend()
    inbox = ask(dispatcher, PacketType.REVIEW_LIST)
    assert [c["id"] for c in inbox["changes"]] == [newest["id"]]
    kept = dispatcher.backend.store.query("SELECT relation FROM edges WHERE reviewed_at IS NOT NULL"
                                  " ORDER BY id")
    assert [r["relation"] for r in kept] == ["likes", "lives in"]
    # Keep all keeps what the person saw, not what came after it
    llm.play({"tool_calls": [commit_call(("User", "plays", "go"))]}, {"text": "ok"})
    ask(dispatcher, PacketType.PROCESS_MESSAGE, {"user_input": "I play go"})
    kept = ask(dispatcher, PacketType.REVIEW_KEEP, {"through": newest["id"]})
    assert kept["kept"] == [newest["id"]] and kept["count"] == 1


def test_undo_from_the_inbox_removes_the_item_and_says_what_it_did(backend, llm):
    llm.play({"tool_calls": [commit_call(("Xiao Ming", "likes", "green tea"))]},
             {"text": "Noted."})
    dispatcher = backend()
    ask(dispatcher, PacketType.PROCESS_MESSAGE, {"user_input": "Xiao Ming likes green tea"})
    change = ask(dispatcher, PacketType.REVIEW_LIST)["changes"][0]
    undone = ask(dispatcher, PacketType.UNDO, {"change_id": change["id"]})
    assert undone["message"] == "Undid: added “Xiao Ming likes green tea”"
    assert ask(dispatcher, PacketType.REVIEW_LIST)["count"] == 0
    redone = ask(dispatcher, PacketType.REDO)
    assert redone["message"] == "Redid: added “Xiao Ming likes green tea”"
    assert ask(dispatcher, PacketType.REVIEW_LIST)["count"] == 1  # back, still unreviewed
    again = ask(dispatcher, PacketType.UNDO)  # Ctrl+Z after a redo takes the fact away again
    assert again["undone"] == change["id"]


def test_redo_ends_when_something_new_is_written(backend):
    dispatcher = backend()
    commit = {"tool_name": "memory_commit", "arguments": {"triplets": [
        {"subject": "Anna", "relation": "likes", "object": "tea"}]}}
    ask(dispatcher, PacketType.EXECUTE_TOOL, commit)
    ask(dispatcher, PacketType.UNDO)
    commit["arguments"]["triplets"][0]["object"] = "coffee"
    ask(dispatcher, PacketType.EXECUTE_TOOL, commit)
    refused = dispatcher.handle(Packet.make(PacketType.REDO, {}))
    assert not refused.success and refused.error == "there is nothing to redo"


def test_a_kept_change_can_still_be_undone(backend, llm):
    llm.play({"tool_calls": [commit_call(("Anna", "likes", "tea"))]}, {"text": "ok"})
    dispatcher = backend()
    ask(dispatcher, PacketType.PROCESS_MESSAGE, {"user_input": "Anna likes tea"})
    change = ask(dispatcher, PacketType.REVIEW_LIST)["changes"][0]
    ask(dispatcher, PacketType.REVIEW_KEEP, {"change_ids": [change["id"]]})
    undone = ask(dispatcher, PacketType.UNDO, {"change_id": change["id"]})
    assert undone["message"] == "Undid: added “Anna likes tea”"


def test_each_committed_change_is_announced_once_with_counts(backend, llm):
    llm.play({"tool_calls": [commit_call(("User", "likes", "tea")),
                             commit_call(("User", "likes", "coffee"))]},
             {"text": "ok"})
    dispatcher = backend()
    events = []
    answer = ask(dispatcher, PacketType.PROCESS_MESSAGE, {"user_input": "I like tea and coffee"},
                 events)
    changed = [data for event, data in events if event == "memory_changed"]
    assert len(changed) == 2  # one per call that wrote, nothing else
    assert changed[0]["actor"] == "model" and changed[0]["turn_id"] == answer["turn_id"]
    assert changed[-1]["counts"]["facts"] == 2 and changed[-1]["review_count"] == 2
    assert changed[-1]["counts_line"] == "2 facts · 3 entities · 0 tasks"
    edges = dispatcher.backend.store.query("SELECT id FROM edges ORDER BY id")
    assert changed[1]["edges"] == [edges[1]["id"]] and changed[1]["nodes"]
    events.clear()
    ask(dispatcher, PacketType.LIST_NODES, {}, events)  # reads announce nothing
    ask(dispatcher, PacketType.CORRECT_MEMORY, {"action": "delete_edge", "arguments": {
        "edge_id": edges[0]["id"]}}, events)
    assert [(e, d["actor"], d["edges"]) for e, d in events] == [
        ("memory_changed", "user", [edges[0]["id"]])]


def test_the_status_counts_and_the_export_say_the_same_numbers(backend, tmp_path):
    dispatcher = backend()
    ask(dispatcher, PacketType.EXECUTE_TOOL, {"tool_name": "memory_commit", "arguments": {
        "triplets": [{"subject": "Anna", "relation": "likes", "object": "tea"},
                     {"subject": "Anna", "relation": "lives in", "object": "Berlin"}]}})
    ask(dispatcher, PacketType.EXECUTE_TOOL, {"tool_name": "persona_update", "arguments": {
        "attributes": [{"attribute": "tone", "value": "warm"}]}})
    ask(dispatcher, PacketType.CORRECT_MEMORY, {"action": "delete_edge", "arguments": {
        "edge_id": 1}})
    state = ask(dispatcher, PacketType.MEMORY_STATE)
    exported = ask(dispatcher, PacketType.EXPORT_MEMORY, {"path": str(tmp_path / "m.json")})
    assert state["counts_line"].startswith("1 fact ·")
    assert exported["summary"].startswith(f"exported {state['counts_line']}, with ")
    assert exported["facts"] + exported["other_facts"] + exported["history"] == \
        exported["edges"]
    data = json.loads((tmp_path / "m.json").read_text())
    assert len(data["edges"]) == exported["edges"] and len(data["nodes"]) == exported["nodes"]


def test_the_review_mark_travels_with_an_export(tmp_path, backend, llm):
    llm.play({"tool_calls": [commit_call(("Anna", "likes", "tea"))]}, {"text": "ok"})
    dispatcher = backend()
    ask(dispatcher, PacketType.PROCESS_MESSAGE, {"user_input": "Anna likes tea"})
    inbox = ask(dispatcher, PacketType.REVIEW_LIST)
    ask(dispatcher, PacketType.REVIEW_KEEP, {"through": inbox["changes"][0]["id"]})
    path = tmp_path / "m.json"
    export_json(dispatcher.backend.store, path)
    fresh = GraphStore(tmp_path / "fresh.db")
    try:
        from core.store.exchange import import_json
        import_json(fresh, path)
        assert fresh.query_one("SELECT reviewed_at FROM edges")["reviewed_at"] is not None
    finally:
        fresh.close()


def test_bad_review_requests_are_refused_plainly(backend):
    dispatcher = backend()
    for body in ({"change_ids": "all"}, {"change_ids": [True]}, {}, {"through": "x"}):
        answer = dispatcher.handle(Packet.make(PacketType.REVIEW_KEEP, body))
        assert not answer.success and "change" in answer.error
    for body in ({"limit": 0}, {"limit": "9"}, {"before": "x"}):
        answer = dispatcher.handle(Packet.make(PacketType.REVIEW_LIST, body))
        assert not answer.success


def test_a_turns_changes_are_undone_together_and_a_fact_is_edited_whole(backend, llm):
    llm.play({"tool_calls": [commit_call(("Xiao Ming", "likes", "green tea")),
                             commit_call(("Xiao Ming", "lives in", "Shanghai"))]},
             {"text": "ok"})
    dispatcher = backend()
    ask(dispatcher, PacketType.PROCESS_MESSAGE,
        {"user_input": "Xiao Ming likes tea and lives in Shanghai"})
    changes = ask(dispatcher, PacketType.REVIEW_LIST)["changes"]
    line = changes[1]["lines"][0]
    assert (line["subject"], line["relation"], line["object"]) == \
        ("Xiao Ming", "likes", "green tea")
    edited = ask(dispatcher, PacketType.CORRECT_MEMORY, {"action": "edit_fact", "arguments": {
        "edge_id": line["id"], "subject": "Xiao Ming", "relation": "likes",
        "object": "jasmine tea"}})
    assert edited["summary"] == ("changed 'Xiao Ming likes green tea' to "
                                 "'Xiao Ming likes jasmine tea'")
    old = dispatcher.backend.store.row("edges", line["id"])
    assert old["status"] == "superseded" and old["superseded_by"]
    ask(dispatcher, PacketType.UNDO, {"change_id": edited["change_id"]})
    undone = ask(dispatcher, PacketType.UNDO, {"change_ids": [c["id"] for c in changes]})
    assert undone["message"] == ("Undid: 2 changes, the first: added “Xiao Ming lives in "
                                 "Shanghai”")
    assert dispatcher.backend.store.query("SELECT * FROM edges WHERE status = 'active'") == []
    assert ask(dispatcher, PacketType.REVIEW_LIST)["count"] == 0
    bad = dispatcher.handle(Packet.make(PacketType.UNDO, {"change_ids": []}))
    assert not bad.success and "change_ids" in bad.error


def test_counts_kept_from_each_change_match_a_fresh_count(backend, llm, tmp_path):
    from core.store.counts import memory_counts

    llm.play({"tool_calls": [commit_call(("Anna", "likes", "tea"), ("Anna", "lives in", "Rome"))]},
             {"text": "ok"})
    dispatcher = backend()
    ask(dispatcher, PacketType.MEMORY_STATE)  # counted once; changes move it from here
    ask(dispatcher, PacketType.PROCESS_MESSAGE, {"user_input": "Anna likes tea and lives in Rome"})
    ask(dispatcher, PacketType.EXECUTE_TOOL, {"tool_name": "task_create", "arguments": {
        "task_id": "Plan the trip", "description": "Rome in May"}})
    edge = dispatcher.backend.store.query_one("SELECT id FROM edges WHERE relation = 'likes'")["id"]
    ask(dispatcher, PacketType.CORRECT_MEMORY, {"action": "edit_fact", "arguments": {
        "edge_id": edge, "subject": "Anna", "relation": "likes", "object": "coffee"}})
    node = dispatcher.backend.store.find_node("Rome")["id"]
    ask(dispatcher, PacketType.CORRECT_MEMORY, {"action": "delete_node", "arguments": {
        "node_id": node}})
    ask(dispatcher, PacketType.UNDO)
    ask(dispatcher, PacketType.REDO)
    ask(dispatcher, PacketType.EXPORT_MEMORY, {"path": str(tmp_path / "m.json")})
    ask(dispatcher, PacketType.IMPORT_MEMORY, {"path": str(tmp_path / "m.json")})
    events = []
    ask(dispatcher, PacketType.EXECUTE_TOOL, {"tool_name": "memory_commit", "arguments": {
        "triplets": [{"subject": "Bob", "relation": "likes", "object": "tea"}]}}, events)
    assert events[-1][1]["counts"] == memory_counts(dispatcher.backend.store.conn)
    assert ask(dispatcher, PacketType.MEMORY_STATE)["counts"] == \
        memory_counts(dispatcher.backend.store.conn)


def test_the_inbox_reads_facts_as_they_are_now(store):
    from core.store import review
    from core.tools import ToolExecutor
    from core.tools.corrections import correct

    tools = ToolExecutor(store)
    assert tools.execute("memory_commit", {"triplets": [
        {"subject": "User", "relation": "works as", "object": "nurse"}]}, actor="model")["success"]
    nurse = store.find_node("nurse")["id"]
    correct(store, "rename_node", {"node_id": nurse, "name": "registered nurse"})
    [change] = review.waiting(store)["changes"]
    [line] = [line for line in change["lines"] if line["table"] == "edges"]
    assert (line["subject"], line["relation"], line["object"]) == (
        "User", "works as", "registered nurse")
    assert line["text"] == "User works as registered nurse"
