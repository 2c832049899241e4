"""Persona and working-memory (task) tools."""

import pytest

from core.tools.persona import persona_edges


def persona(store):
    return {e["relation"]: e["target_name"] for e in persona_edges(store)}


def test_persona_lives_on_the_ai_node_and_merges(run, store):
    run("persona_update", attributes=[{"attribute": "role", "value": "companion"},
                                      {"attribute": "speaking_style", "value": "brief"}])
    run("persona_update", attributes=[{"attribute": "role", "value": "tutor"}])
    assert persona(store) == {"speaking_style": "brief", "role": "tutor"}
    sources = {e["source_name"] for e in persona_edges(store)}
    assert sources == {"AI"}
    assert store.find_node("ai")["kind"] == "persona"
    old = store.query_one("SELECT * FROM edges WHERE status = 'superseded'")
    assert old["superseded_by"] is not None and old["valid_to"] is not None


def test_persona_replace_keeps_only_the_new_attributes(run, store):
    run("persona_update", attributes=[{"attribute": "role", "value": "companion"},
                                      {"attribute": "catchphrase", "value": "onward!"}])
    run("persona_update", attributes=[{"attribute": "role", "value": "coach"}], mode="replace")
    assert persona(store) == {"role": "coach"}


def test_persona_update_with_the_same_value_reinforces(run, store):
    run("persona_update", attributes=[{"attribute": "role", "value": "tutor"}])
    run("persona_update", attributes=[{"attribute": "Role", "value": "Tutor"}])
    assert len(persona_edges(store)) == 1
    assert persona_edges(store)[0]["mention_count"] == 2


def test_persona_remove_and_clear(run, fail, store):
    run("persona_update", attributes=[{"attribute": "role", "value": "tutor"},
                                      {"attribute": "background", "value": "a librarian"}])
    run("persona_remove", attribute="ROLE")
    assert persona(store) == {"background": "a librarian"}
    assert "no attribute 'mood'" in fail("persona_remove", attribute="mood")
    assert "confirm=true" in fail("persona_clear", confirm=False)
    assert persona(store) == {"background": "a librarian"}
    assert run("persona_clear", confirm=True)["removed"] == 1
    assert persona(store) == {}


def chain(store):
    return [(e["source_name"], e["target_name"]) for e in store.query(
        "SELECT s.name AS source_name, t.name AS target_name FROM edges e"
        " JOIN nodes s ON s.id = e.source_id JOIN nodes t ON t.id = e.target_id"
        " WHERE e.relation = 'NEXT_TASK' AND e.status = 'active' ORDER BY e.id")]


def test_tasks_chain_in_creation_order_and_link_their_memories(run, store):
    run("task_create", task_id="t1", description="first", info_nodes=["Paris", "budget"])
    run("task_create", task_id="t2", description="second")
    run("task_create", task_id="t3", description="third")
    assert chain(store) == [("t1", "t2"), ("t2", "t3")]
    task = store.find_node("t1")
    assert (task["kind"], task["state"], task["description"]) == ("task", "in_progress", "first")
    assert "info: Paris, budget" in run("task_query", limit=10)["result"]


@pytest.mark.parametrize(("given", "stored"), [
    ("completed", "completed"), ("paused", "paused"), ("cancelled", "cancelled"),
    ("进行中", "in_progress"), ("已完成", "completed"), ("已暂停", "paused"),
    ("已取消", "cancelled"),
])
def test_task_states_in_english_and_chinese(run, store, given, stored):
    run("task_create", task_id="t", description="d")
    if stored == "in_progress":
        run("task_set_state", task_id="t", state="paused")
    run("task_set_state", task_id="t", state=given)
    assert store.find_node("t")["state"] == stored


def test_set_state_changes_exactly_that_task(run, store, fail):
    run("task_create", task_id="Task_1", description="a")
    run("task_create", task_id="Task_10", description="b")
    run("task_set_state", task_id="task_1", state="completed")
    assert store.find_node("Task_10")["state"] == "in_progress"
    assert "no task 'Task_2'" in fail("task_set_state", task_id="Task_2", state="completed")


def test_task_create_refuses_a_taken_name(run, fail):
    run("task_create", task_id="t", description="d")
    assert "already a task" in fail("task_create", task_id=" T ", description="x")
    run("memory_commit", triplets=[{"subject": "Paris", "relation": "is in", "object": "France"}])
    assert "already a memory" in fail("task_create", task_id="paris", description="x")


def test_task_delete_relinks_the_chain_and_keeps_shared_info_nodes(run, store, fail):
    run("memory_commit", triplets=[{"subject": "Paris", "relation": "is in", "object": "France"}])
    run("task_create", task_id="t1", description="a")
    run("task_create", task_id="t2", description="b", info_nodes=["Paris", "only mine"])
    run("task_create", task_id="t3", description="c")
    data = run("task_delete", task_id="t2")
    assert data["removed_info_nodes"] == 1
    assert chain(store) == [("t1", "t3")]
    # In the trash, not gone: the person can still restore them.
    assert store.find_node("t2")["deleted_at"] is not None
    assert store.find_node("only mine")["deleted_at"] is not None
    assert store.find_node("Paris")["deleted_at"] is None
    assert "in the trash" in fail("task_set_state", task_id="t2", state="completed")
    assert "t2" not in run("task_query")["tasks"]


def test_task_delete_can_keep_info_nodes(run, store):
    run("task_create", task_id="t", description="a", info_nodes=["notes"])
    run("task_delete", task_id="t", delete_info_nodes=False)
    assert store.find_node("notes")["deleted_at"] is None


def test_task_link_info_and_archive(run, store):
    run("task_create", task_id="t", description="a")
    assert run("task_link_info", task_id="t", info_node_names=["x", "y", "x"])["linked"] == 3
    links = store.query("SELECT mention_count FROM edges WHERE relation = 'CONTAINS_INFO'"
                        " ORDER BY id")
    assert [r["mention_count"] for r in links] == [2, 1]
    run("task_archive", task_id="t", summary="done and dusted")
    task = store.find_node("t")
    assert (task["state"], task["summary"]) == ("archived", "done and dusted")
    assert store.query_one("SELECT count(*) AS n FROM edges WHERE status = 'archived'")["n"] == 2


def test_task_query_lists_newest_first_and_filters(run):
    for i in range(5):
        run("task_create", task_id=f"t{i}", description=f"task {i}")
    run("task_set_state", task_id="t1", state="completed")
    data = run("task_query", limit=3)
    assert data["tasks"] == ["t4", "t3", "t2"]
    assert "(3 of 5" in data["result"]
    assert run("task_query", state_filter="已完成")["tasks"] == ["t1"]
    assert "No tasks in state paused" in run("task_query", state_filter="paused")["result"]
