"""The change log: every write is recorded with its provenance and can be undone exactly."""

import json

import pytest

from core.store import describe
from core.tools.validation import parse_arguments
from tests.conftest import commit


@pytest.fixture
def world(run, clock):
    commit(run, ("Ann", "likes", "tea"), ("Ann", "lives in", "Paris"), ("Bob", "likes", "tea"))
    run("persona_update", attributes=[{"attribute": "role", "value": "tutor"}])
    run("task_create", task_id="t1", description="a", info_nodes=["Paris"])
    run("task_create", task_id="t2", description="b", info_nodes=["notes"])
    run("task_create", task_id="t3", description="c")
    clock.advance(100)


WRITES = [
    ("memory_commit", {"triplets": [{"subject": "Ann", "relation": "likes", "object": "tea"},
                                    {"subject": "Cy", "relation": "knows", "object": "Ann"}]}),
    ("memory_purge", {"criteria": {"relation_type": "likes"}}),
    ("memory_purge", {"criteria": {"subject": "Ann", "relation_type": "lives in"},
                      "mode": "supersede", "new_relation": {"target": "Rome"}}),
    ("memory_archive", {"days": 30}),
    ("persona_update", {"attributes": [{"attribute": "role", "value": "coach"}],
                        "mode": "replace"}),
    ("persona_remove", {"attribute": "role"}),
    ("persona_clear", {"confirm": True}),
    ("task_create", {"task_id": "t4", "description": "d", "info_nodes": ["Paris", "new"]}),
    ("task_set_state", {"task_id": "t2", "state": "已暂停"}),
    ("task_delete", {"task_id": "t2"}),
    ("task_link_info", {"task_id": "t1", "info_node_names": ["Paris", "more"]}),
    ("task_archive", {"task_id": "t1", "summary": "s"}),
]


@pytest.mark.parametrize(("tool", "args"), WRITES, ids=[w[0] + str(i) for i, w in
                                                         enumerate(WRITES)])
def test_undo_restores_the_exact_previous_state(executor, store, world, tool, args):
    before = store.dump()
    result = executor.execute(tool, args, turn_id="turn-7", actor="model")
    assert result["success"], result
    assert store.dump() != before
    change = store.change(result["data"]["change_id"])
    assert (change["tool"], change["turn_id"], change["actor"]) == (tool, "turn-7", "model")
    assert json.loads(change["arguments"]) == parse_arguments(tool, args)  # names as stored
    assert change["summary"]
    assert executor.undo(change["id"])["success"]
    assert store.dump() == before
    assert store.integrity_problems() == []


def test_cleanup_of_removed_edges_can_be_undone(executor, run, store, world, clock):
    run("memory_purge", criteria={"subject": "Bob"})
    clock.advance(100)
    before = store.dump()
    data = run("memory_cleanup", dry_run=False)
    assert data["removed"] == 1
    assert executor.undo(data["change_id"])["success"]
    assert store.dump() == before
    assert store.query_one("SELECT status FROM edges WHERE id = 3")["status"] == "deleted"


def test_undo_of_an_undo_redoes_the_change(executor, run, store, world):
    data = run("memory_purge", criteria={"subject": "Ann"})
    after = store.dump()
    undo = executor.undo(data["change_id"])
    redo = executor.undo(undo["data"]["change_id"])
    assert redo["success"] and store.dump() == after


def test_undo_keeps_a_fact_said_again_since_and_brings_back_the_rest(executor, run, store,
                                                                    world, clock):
    """Turn A forgets Ann's facts, turn B says one of them again: undoing A brings the
    other back and keeps the restated one once, with the older one's mentions folded in
    (it was all or nothing, refused in SQLite's words)."""
    first = run("memory_purge", criteria={"subject": "Ann"})
    clock.advance(10)
    commit(run, ("Ann", "likes", "tea"))  # a new active copy of a forgotten fact
    before_undo = store.dump()
    result = executor.undo(first["change_id"])
    assert result["success"], result
    active = store.query(
        "SELECT e.relation, t.name AS object, e.mention_count, e.created_at FROM edges e"
        " JOIN nodes s ON s.id = e.source_id JOIN nodes t ON t.id = e.target_id"
        " WHERE s.name = 'Ann' AND e.status = 'active' ORDER BY e.relation")
    assert [(r["relation"], r["object"]) for r in active] == [("likes", "tea"),
                                                             ("lives in", "Paris")]
    tea = active[0]
    assert tea["mention_count"] == 2  # said once before the purge, once after
    assert tea["created_at"] < clock.now  # the older copy's first date
    lines = describe.describe_change(store, result["data"]["change_id"])
    assert {(line["verb"], line["text"]) for line in lines} >= {
        ("kept, said again since", "Ann likes tea"), ("restored", "Ann lives in Paris")}
    # and the undo itself can be taken back, to the memory just before it
    assert executor.undo(result["data"]["change_id"])["success"]
    assert store.dump() == before_undo


def test_undo_of_a_reinforcement_takes_back_only_its_own_mention(executor, run, store, world):
    first = commit(run, ("Ann", "likes", "tea"))  # reinforces
    commit(run, ("Ann", "likes", "tea"))  # reinforces the same row again
    mentions = store.query_one("SELECT mention_count FROM edges WHERE id = 1")["mention_count"]
    result = executor.undo(first["change_id"])
    assert result["success"], result
    assert store.query_one("SELECT mention_count, status FROM edges WHERE id = 1") == {
        "mention_count": mentions - 1, "status": "active"}


def test_undo_is_refused_only_when_a_later_change_rewrote_every_part(executor, store,
                                                                      world):
    from core.tools.corrections import correct

    first = correct(store, "edit_relation", {"edge_id": 1, "relation": "loves"})
    correct(store, "edit_relation", {"edge_id": 1, "relation": "adores"})
    before = store.dump()
    result = executor.undo(first["change_id"])
    assert not result["success"] and result["code"] == "conflict"
    assert "was changed again later" in result["error"]
    assert store.dump() == before


def _active(store, subject="User"):
    return sorted((r["relation"], r["object"]) for r in store.query(
        "SELECT e.relation, t.name AS object FROM edges e JOIN nodes s ON s.id = e.source_id"
        " JOIN nodes t ON t.id = e.target_id WHERE s.name = ? AND e.status = 'active'",
        (subject,)))


def test_undoing_an_older_turn_leaves_what_a_later_turn_did(executor, store, clock):
    """Turn A stores "User likes tea", turn B "User owns a dog": both touch the person's
    node, and undoing A took nothing back ("“User” was changed again later")."""
    a = executor.execute("memory_commit", {"triplets": [
        {"subject": "User", "relation": "likes", "object": "tea"}]}, turn_id="A")
    clock.advance(5)
    executor.execute("memory_commit", {"triplets": [
        {"subject": "User", "relation": "owns", "object": "dog"}]}, turn_id="B")
    mentions = store.find_node("User")["mention_count"]
    undo_id, undone = store.undo_turn("A")
    assert undone == [a["data"]["change_id"]]
    assert _active(store) == [("owns", "dog")]
    assert store.find_node("tea") is None  # A's own node goes with its fact
    assert store.find_node("User")["mention_count"] == mentions - 1
    assert store.kept_by_undo(undo_id) == []
    assert store.integrity_problems() == []
    # and the undo itself is undone as exactly
    store.undo(undo_id)
    assert _active(store) == [("likes", "tea"), ("owns", "dog")]
    assert store.find_node("User")["mention_count"] == mentions


def test_undoing_an_older_turn_keeps_and_names_only_what_a_later_turn_rewrote(
        executor, store, clock):
    executor.execute("memory_commit", {"triplets": [
        {"subject": "User", "relation": "likes", "object": "tea"},
        {"subject": "User", "relation": "lives in", "object": "Paris"},
        {"subject": "User", "relation": "plays", "object": "chess"}]}, turn_id="A")
    clock.advance(5)
    executor.execute("memory_purge", {"criteria": {"subject": "User", "relation_type":
                     "lives in"}, "mode": "supersede", "new_relation": {"target": "Rome"}},
                     turn_id="B")
    executor.execute("memory_commit", {"triplets": [
        {"subject": "User", "relation": "plays", "object": "chess"}]}, turn_id="C")
    undo_id, _undone = store.undo_turn("A")
    # A's tea goes; B's move to Rome stays and so does Paris, which B replaced; C said
    # chess again, so chess stays C's
    assert _active(store) == [("lives in", "Rome"), ("plays", "chess")]
    assert store.query_one("SELECT status FROM edges e JOIN nodes t ON t.id = e.target_id"
                           " WHERE t.name = 'Paris'")["status"] == "superseded"
    kept = store.kept_by_undo(undo_id)
    assert [(k["row"], k["why"]) for k in kept] == [("“User —lives in→ Paris”", "changed")]
    assert store.integrity_problems() == []
    lines = describe.describe_change(store, undo_id)
    assert ("kept, said again since", "User plays chess") in {
        (line["verb"], line["text"]) for line in lines}
    assert "Paris" in describe.kept_words(kept)


@pytest.mark.parametrize(("later", "expected"), [
    ({"action": "edit_relation", "relation": "loves"}, [("loves", "tea")]),
    ({"action": "delete_edge"}, []),
    ({"action": "rename_node", "name": "green tea"}, []),
])
def test_every_later_change_to_an_older_turns_fact_is_respected(executor, store, clock,
                                                                later, expected):
    """Whatever a later change did to a fact or name an older turn made, undoing the
    older turn leaves that work as it is and says so."""
    from core.tools.corrections import correct

    executor.execute("memory_commit", {"triplets": [
        {"subject": "User", "relation": "likes", "object": "tea"},
        {"subject": "User", "relation": "reads", "object": "novels"}]}, turn_id="A")
    clock.advance(5)
    edge = store.query_one("SELECT id, target_id FROM edges WHERE norm_relation = 'likes'")
    arguments = {k: v for k, v in later.items() if k != "action"}
    arguments["node_id" if later["action"] == "rename_node" else "edge_id"] = (
        edge["target_id"] if later["action"] == "rename_node" else edge["id"])
    assert correct(store, later["action"], arguments)["change_id"]
    undo_id, _ = store.undo_turn("A")
    assert ("reads", "novels") not in _active(store)  # A's untouched fact went back
    assert _active(store) == expected
    kept = store.kept_by_undo(undo_id)
    assert kept and all(k["why"] == "changed" for k in kept)
    if later["action"] == "rename_node":
        assert store.find_node("green tea") is not None  # the person's rename stays
    assert store.integrity_problems() == []


def test_a_change_is_undone_once(executor, run, world):
    data = run("memory_purge", criteria={"subject": "Bob"})
    assert executor.undo(data["change_id"])["success"]
    assert "was undone already" in executor.undo(data["change_id"])["error"]
    assert executor.undo(999)["code"] == "not_found"
    assert "whole number" in executor.undo("7")["error"]


def test_reads_and_no_op_writes_leave_no_change_entry(run, store, world):
    count = store.query_one("SELECT count(*) AS n FROM change_log")["n"]
    run("memory_recall", query_intent="Ann")
    run("task_query")
    run("memory_purge", criteria={"subject": "nobody"})
    run("memory_cleanup", dry_run=True)
    assert store.query_one("SELECT count(*) AS n FROM change_log")["n"] == count


def test_a_removed_facts_id_never_names_another_fact(store, run, executor):
    """Undoing the newest fact removes its row; the next fact must not take its id, or
    the old fact's changes would show in the new one's history."""
    first = commit(run, ("User", "likes", "tea"))
    gone = store.query_one("SELECT max(id) AS id FROM edges")["id"]
    gone_node = store.query_one("SELECT max(id) AS id FROM nodes")["id"]
    assert executor.undo(first["change_id"])["success"]
    assert store.row("edges", gone) is None and store.row("nodes", gone_node) is None
    commit(run, ("User", "likes", "coffee"))
    newest = store.query_one("SELECT max(id) AS id FROM edges")["id"]
    assert newest > gone
    assert store.query_one("SELECT max(id) AS id FROM nodes")["id"] > gone_node
    history = store.query("SELECT DISTINCT change_id FROM change_rows WHERE tbl = 'edges'"
                           " AND row_id = ?", (newest,))
    assert len(history) == 1  # only the change that made it


def test_an_older_file_learns_the_ids_its_history_used(tmp_path):
    """Migrating to the id floor reads the change log: ids of rows removed before the
    migration stay taken."""
    import sqlite3

    from core.store import GraphStore
    from core.store.schema import migrate
    from core.store.text import search_text

    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.create_function("search_text", 1, search_text, deterministic=True)
    migrate(conn, target=10)
    conn.execute("INSERT INTO change_log(created_at, tool, arguments, actor, summary, ops)"
                 " VALUES (0, 'memory_commit', '{}', 'model', '', x'')")
    conn.execute("INSERT INTO change_rows VALUES ('edges', 41, 1)")
    conn.close()
    store = GraphStore(path)
    try:
        assert store.next_id("edges") == 42 and store.next_id("nodes") == 1
    finally:
        store.close()


def test_an_undo_that_cannot_be_done_says_why_in_words_not_numbers(executor, store):
    import re

    from core import i18n
    from core.store import StoreError
    from core.tools.corrections import correct

    executor.execute("memory_commit", {"triplets": [
        {"subject": "User", "relation": "likes", "object": "tea"}]})
    first = correct(store, "edit_relation", {"edge_id": 1, "relation": "enjoys"})["change_id"]
    correct(store, "rename_node", {"node_id": store.find_node("tea")["id"], "name": "green tea"})
    correct(store, "edit_relation", {"edge_id": 1, "relation": "adores"})
    try:
        store.undo(first)
    except StoreError as error:
        english = error.said()
    assert "“User —adores→ green tea” was changed again later" in english, english
    assert "changed the relation of “User enjoys green tea”" in english, english
    assert not re.search(r"change \\d|committed", english)
    try:
        i18n.set_language("zh_CN")
        try:
            store.undo(first)
        except StoreError as error:
            chinese = error.said()
        assert "修改了关系" in chinese, chinese
        assert not re.search(r"committed|change \\d", chinese)
    finally:
        i18n.set_language("en")


def test_undo_of_an_older_turn_through_the_packet(headless, llm):
    """The person's Ctrl+Alt+Z on an older turn, as the window sends it."""
    from core.protocol.packets import PacketType

    server, client = headless()
    for thing in ("tea", "dog"):
        llm.play({"tool_calls": [{"name": "memory_commit", "arguments": {"triplets": [
            {"subject": "User", "relation": "likes", "object": thing}]}}]},
            {"text": "Noted."})
        assert client.process_message(f"I like {thing}")["success"]
    first = client.get_history()["history"][1]["turn_id"]
    answer = client.request(PacketType.UNDO_TURN, {"turn_id": first})
    assert answer["success"], answer
    assert answer["data"]["kept"] == [] and answer["data"]["kept_message"] == ""
    assert _active(server.backend.store) == [("likes", "dog")]
