"""The general memory tools in normal use."""

import pytest

from core.tools.base import MAX_CHARS, MAX_ROWS
from tests.conftest import commit


def edge_count(store, **where):
    sql = "SELECT count(*) AS n FROM edges"
    if where:
        sql += " WHERE " + " AND ".join(f"{k} = ?" for k in where)
    return store.query_one(sql, tuple(where.values()))["n"]


# -- memory_commit ----------------------------------------------------------------------

def test_commit_creates_typed_nodes_and_edges(run, store):
    data = run("memory_commit", triplets=[
        {"subject": "Xiao Ming", "relation": "likes", "object": "apples", "confidence": 0.8,
         "object_type": "Food"}], entity_types={"xiao ming": "Person"}, temporal_tag="2026")
    assert data["created"] == 1 and data["change_id"]
    edge = store.query_one("SELECT * FROM edges")
    assert (edge["relation"], edge["confidence"], edge["temporal_tag"]) == ("likes", 0.8, "2026")
    types = {n["name"]: n["type"] for n in store.query("SELECT name, type FROM nodes")}
    assert types == {"Xiao Ming": "Person", "apples": "Food"}


def test_committing_an_active_fact_again_reinforces_it(run, store, clock):
    commit(run, ("Xiao Ming", "likes", "apples"))
    first = store.query_one("SELECT * FROM edges")
    clock.advance(1)
    data = run("memory_commit", triplets=[
        {"subject": "xiao ming", "relation": "LIKES", "object": " Apples ", "confidence": 1.0}])
    assert (data["created"], data["reinforced"]) == (0, 1)
    assert edge_count(store) == 1
    edge = store.query_one("SELECT * FROM edges")
    assert edge["mention_count"] == 2
    assert edge["updated_at"] > first["updated_at"]
    assert edge["confidence"] == 1.0


def test_a_deleted_fact_committed_again_becomes_a_new_active_edge(run, store):
    commit(run, ("a", "r", "b"))
    run("memory_purge", criteria={"subject": "a"})
    commit(run, ("a", "r", "b"))
    assert edge_count(store, status="active") == 1
    assert edge_count(store, status="deleted") == 1


# -- memory_recall ----------------------------------------------------------------------

@pytest.fixture
def family(run):
    commit(run, ("Alice", "mother of", "Bob"), ("Bob", "father of", "Carl"),
           ("Carl", "studies", "chemistry"), ("chemistry", "taught by", "Dr Zed"),
           ("Alice", "likes", "gardening"))


def recalled(run, **args):
    return run("memory_recall", **args)["result"]


def test_recall_expands_along_edges_to_the_requested_depth(run, family):
    one = recalled(run, query_intent="gardening", depth=1)
    assert "Alice -mother of-> Bob" in one and "Bob -father of-> Carl" not in one
    two = recalled(run, query_intent="gardening", depth=2)
    assert "Bob -father of-> Carl" in two and "Carl -studies-> chemistry" not in two
    three = recalled(run, query_intent="gardening", depth=3)
    assert "Carl -studies-> chemistry" in three


def test_recall_starts_from_seed_entities(run, family):
    text = recalled(run, query_intent="family", seed_entities=["carl"], depth=1)
    assert "Carl -studies-> chemistry" in text and "Bob -father of-> Carl" in text
    assert "gardening" not in text


def test_recall_lists_no_row_twice(run, family):
    data = run("memory_recall", query_intent="Alice Bob Carl chemistry", depth=3)
    assert len(data["edge_ids"]) == len(set(data["edge_ids"]))


def test_recall_honours_the_time_range(run, clock):
    commit(run, ("old", "fact about", "rain"))
    clock.advance(10)
    commit(run, ("new", "fact about", "rain"))
    text = recalled(run, query_intent="rain", time_range={"days": 5})
    assert "new -fact about-> rain" in text and "old" not in text


def test_recall_scope_persona_reads_only_the_persona(run):
    commit(run, ("user", "role", "teacher"))
    run("persona_update", attributes=[{"attribute": "role", "value": "tutor"}])
    text = recalled(run, query_intent="role", scope="persona")
    assert "AI -role-> tutor" in text and "teacher" not in text


def test_recall_scope_tasks_reads_only_tasks(run):
    commit(run, ("user", "plans", "trip"))
    run("task_create", task_id="trip planning", description="plan the trip",
        info_nodes=["Paris"])
    text = recalled(run, query_intent="trip", scope="tasks")
    assert "trip planning -CONTAINS_INFO-> Paris" in text and "user -plans" not in text


def test_recall_is_capped_keeps_the_best_rows_and_says_so(run, store):
    triplets = [(f"person {i}", "likes", f"music style {i} " + "x" * 80) for i in range(120)]
    for start in range(0, 120, 40):
        commit(run, *triplets[start:start + 40])
    for _ in range(3):
        commit(run, ("person 7", "likes", triplets[7][2]))
    data = run("memory_recall", query_intent="music likes")
    assert len(data["result"]) <= MAX_CHARS
    assert len(data["edge_ids"]) <= MAX_ROWS
    assert "cap of" in data["result"] and "narrow the query" in data["result"]
    assert data["result"].splitlines()[1].startswith("[")
    assert "person 7 -likes->" in data["result"].splitlines()[1]


def test_recall_of_unknown_things_says_nothing_matches(run, family):
    assert "No memories match" in recalled(run, query_intent="volcanoes")


# -- memory_purge -----------------------------------------------------------------------

@pytest.fixture
def tasks_like(run):
    commit(run, ("Task_1", "has", "step one"), ("Task_10", "has", "step ten"),
           ("Task_1", "owned by", "Ann"))


def test_purge_by_exact_subject_never_touches_a_longer_name(run, store, tasks_like):
    data = run("memory_purge", criteria={"subject": "task_1"})
    assert len(data["edge_ids"]) == 2
    remaining = store.query("SELECT e.status, n.name FROM edges e JOIN nodes n"
                            " ON n.id = e.source_id WHERE e.status = 'active'")
    assert remaining == [{"status": "active", "name": "Task_10"}]


def test_a_criterion_that_matches_no_node_matches_nothing(run, store, tasks_like):
    data = run("memory_purge", criteria={"subject": "Task_1", "target": "no such thing"})
    assert data["edge_ids"] == [] and edge_count(store, status="active") == 3
    data = run("memory_purge", criteria={"subject": "Nobody"})
    assert data["edge_ids"] == [] and edge_count(store, status="active") == 3


def test_purge_criteria_combine(run, store, tasks_like, clock):
    assert len(run("memory_purge", criteria={"subject_contains": "task_1", "relation_type": "HAS"},
                   mode="soft")["edge_ids"]) == 2
    assert len(run("memory_purge", criteria={"target_contains": "ann"})["edge_ids"]) == 1
    assert edge_count(store, status="active") == 0


def test_purge_by_type_and_time(run, store, clock):
    run("memory_commit", triplets=[{"subject": "Ann", "relation": "likes", "object": "tea",
                                    "subject_type": "Person", "object_type": "Drink"}])
    clock.advance(10)
    run("memory_commit", triplets=[{"subject": "Ann", "relation": "likes", "object": "cake",
                                    "object_type": "Food"}])
    assert len(run("memory_purge", criteria={"target_type": "food"})["edge_ids"]) == 1
    commit(run, ("Ann", "likes", "cake"))
    import time
    cutoff = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(clock.now - 5 * 86400))
    data = run("memory_purge", criteria={"source_type": "Person", "time_before": cutoff})
    assert len(data["edge_ids"]) == 1
    active = store.query("SELECT t.name FROM edges e JOIN nodes t ON t.id = e.target_id"
                         " WHERE e.status = 'active'")
    assert active == [{"name": "cake"}]


def test_soft_deleted_edges_are_restorable(executor, run, store, tasks_like):
    before = store.dump()
    data = run("memory_purge", criteria={"subject": "Task_10"})
    assert edge_count(store, status="deleted") == 1
    assert executor.undo(data["change_id"])["success"]
    assert store.dump() == before


def test_supersede_links_the_old_edge_to_its_replacement(run, store, clock):
    commit(run, ("Ann", "lives in", "Paris"))
    clock.advance(1)
    run("memory_purge", criteria={"subject": "Ann", "relation_type": "lives in"},
        mode="supersede", new_relation={"target": "Berlin"})
    old, new = store.query("SELECT * FROM edges ORDER BY id")
    assert old["status"] == "superseded" and old["superseded_by"] == new["id"]
    assert old["valid_to"] == clock.now
    assert new["status"] == "active" and new["relation"] == "lives in"
    assert store.row("nodes", new["target_id"])["name"] == "Berlin"


def test_supersede_needs_a_replacement_that_changes_something(fail, run, store, tasks_like):
    assert "needs new_relation" in fail("memory_purge", criteria={"subject": "Ann"},
                                        mode="supersede")
    error = fail("memory_purge", criteria={"target": "Ann"}, mode="supersede")
    assert "new_relation" in error
    error = fail("memory_purge", criteria={"target": "Ann"}, mode="supersede",
                 new_relation={"relation": "owned by"})
    assert "must change" in error
    assert edge_count(store, status="active") == 3


def test_large_purges_need_confirm(run, fail, store):
    commit(run, *[("bulk", "item", f"thing {i}") for i in range(25)])
    error = fail("memory_purge", criteria={"subject": "bulk"})
    assert "25 memories match" in error and "confirm=true" in error
    assert edge_count(store, status="active") == 25
    run("memory_purge", criteria={"subject": "bulk"}, confirm=True)
    assert edge_count(store, status="deleted") == 25


def test_purge_leaves_persona_and_task_edges_alone(run, store):
    run("persona_update", attributes=[{"attribute": "role", "value": "tutor"}])
    run("task_create", task_id="t", description="d", info_nodes=["x"])
    assert run("memory_purge", criteria={"subject": "AI"})["edge_ids"] == []
    assert run("memory_purge", criteria={"subject": "t"})["edge_ids"] == []


# -- archive, query archived, cleanup, introspect ---------------------------------------

def test_archive_moves_only_stale_general_edges(run, store, clock):
    commit(run, ("stale", "fact", "one"))
    run("persona_update", attributes=[{"attribute": "role", "value": "tutor"}])
    run("task_create", task_id="t", description="d", info_nodes=["x"])
    clock.advance(40)
    commit(run, ("fresh", "fact", "two"))
    assert run("memory_archive", days=30)["archived"] == 1
    assert store.query("SELECT category FROM edges WHERE status = 'archived'") == [
        {"category": "general"}]
    assert "stale -fact-> one" not in run("memory_recall", query_intent="stale fact")["result"]


def test_archived_edges_are_found_by_keyword_and_age(run, clock):
    commit(run, ("grandpa", "told", "war stories"), ("grandma", "baked", "bread"))
    clock.advance(40)
    run("memory_archive", days=30)
    found = run("memory_query_archived", keyword="stories")["result"]
    assert "grandpa -told-> war stories" in found and "grandma" not in found
    assert "grandma" in run("memory_query_archived")["result"]
    clock.advance(10)
    assert "No archived" in run("memory_query_archived", keyword="stories", days=5)["result"]
    assert "grandpa" in run("memory_query_archived", keyword="stories", days=20)["result"]


def test_cleanup_removes_only_old_soft_deleted_edges_and_dry_run_changes_nothing(run, store,
                                                                                clock):
    commit(run, ("a", "r", "old"), ("a", "r", "recent"), ("a", "r", "kept"))
    run("memory_purge", criteria={"target": "old"})
    clock.advance(100)
    run("memory_purge", criteria={"target": "recent"})
    assert run("memory_cleanup", older_than_days=90)["removable"] == 1
    assert edge_count(store) == 3
    assert run("memory_cleanup", dry_run=False, older_than_days=90)["removed"] == 1
    assert edge_count(store) == 2 and edge_count(store, status="deleted") == 1


def test_cleanup_unlinks_a_removed_successor(run, store, clock):
    commit(run, ("Ann", "lives in", "Paris"))
    run("memory_purge", criteria={"subject": "Ann"}, mode="supersede",
        new_relation={"target": "Rome"})
    run("memory_purge", criteria={"target": "Rome"})
    clock.advance(100)
    run("memory_cleanup", dry_run=False)
    assert store.query("SELECT status, superseded_by FROM edges") == [
        {"status": "superseded", "superseded_by": None}]
    assert store.integrity_problems() == []


def test_introspect_counts(run):
    commit(run, ("a", "r", "b"), ("a", "r", "c"))
    run("persona_update", attributes=[{"attribute": "role", "value": "tutor"}])
    data = run("memory_introspect")
    assert data["edges"] == {"general/active": 2, "persona/active": 1}
    assert data["nodes"]["persona"] == 1 and data["size_bytes"] > 0
    assert "Most mentioned: a x2" in data["result"]


def test_context_rewrite_hands_the_summary_over(run, store):
    data = run("context_rewrite", summary="looked up Ann: lives in Rome")
    assert data["rewrite_summary"] == "looked up Ann: lives in Rome"
    assert store.dump() == {"nodes": [], "edges": []}
