"""A new value for a relation that holds one value at a time replaces the old one, kept
as superseded with the time it stopped being true, whatever the model wrote: a small
model stored "moved to Rome" as one more fact beside "lives in Paris"."""

from __future__ import annotations

import pytest

from tests.conftest import commit


def active(store, subject: str = "User") -> list[tuple[str, str]]:
    return sorted((r["relation"], r["object"]) for r in store.query(
        "SELECT e.relation, t.name AS object FROM edges e JOIN nodes s ON s.id = e.source_id"
        " JOIN nodes t ON t.id = e.target_id WHERE s.name = ? AND e.status = 'active'",
        (subject,)))


@pytest.mark.parametrize(("first", "then", "left"), [
    (("User", "lives in", "Paris"), ("User", "moved to", "Rome"), [("moved to", "Rome")]),
    (("User", "住在", "杭州"), ("User", "搬到", "深圳"), [("搬到", "深圳")]),
    (("User", "job", "nurse"), ("User", "works as", "teacher"), [("works as", "teacher")]),
    (("User", "is", "vegetarian"), ("User", "diet", "vegan"), [("diet", "vegan")]),
    (("User", "name", "Ann"), ("User", "is called", "Annie"), [("is called", "Annie")]),
    (("User", "age", "30"), ("User", "age", "31"), [("age", "31")]),
    (("Mia", "lives in", "Oslo"), ("Mia", "lives in", "Bergen"), []),  # anyone's, not only
])
def test_a_new_value_replaces_the_old_one(store, run, clock, first, then, left):
    commit(run, first)
    clock.advance(60)
    data = commit(run, then)
    assert data["replaced"] == 1, data
    subject = first[0]
    assert active(store, subject) == (left or [(then[1], then[2])])
    old = store.query_one("SELECT e.* FROM edges e JOIN nodes t ON t.id = e.target_id"
                          " WHERE t.name = ?", (first[2],))
    assert old["status"] == "superseded" and old["valid_to"] == clock.now
    assert store.row("edges", old["superseded_by"])["status"] == "active"


def test_the_same_value_said_again_in_other_words_is_one_fact(store, run, clock):
    commit(run, ("User", "home", "Shanghai"), ("User", "job", "nurse"))
    clock.advance(60)
    data = commit(run, ("User", "moved", "Shanghai"), ("User", "works as", "nurse"))
    assert data["replaced"] == 2, data
    assert active(store) == [("moved", "Shanghai"), ("works as", "nurse")]


def test_relations_that_hold_many_values_keep_both(store, run):
    commit(run, ("User", "likes", "tea"), ("User", "likes", "coffee"),
           ("User", "plays", "piano"), ("User", "plays", "chess"),
           ("User", "is", "tall"), ("User", "is", "vegetarian"))
    assert len(active(store)) == 6


def test_someone_elses_value_never_replaces_the_persons(store, run):
    commit(run, ("User", "lives in", "Rome"))
    data = commit(run, ("sister", "lives in", "Paris"))
    assert data["replaced"] == 0
    assert active(store) == [("lives in", "Rome")]


def test_a_relation_replaced_before_is_learnt_to_hold_one_value(store, run, executor):
    commit(run, ("User", "drives", "a Golf"))
    run("memory_purge", criteria={"subject": "User", "relation": "drives"}, mode="supersede",
        new_relation={"object": "a Tesla"})
    data = commit(run, ("User", "drives", "a BMW"))
    assert data["replaced"] == 1 and active(store) == [("drives", "a BMW")]
    # never for another subject's "drives" unless it was replaced for that subject too
    commit(run, ("Tom", "drives", "a bus"))
    assert commit(run, ("Tom", "drives", "a van"))["replaced"] == 0


def test_restating_the_current_value_settles_two_that_were_both_kept(store, run, executor):
    """Memories written before this rule may hold two homes: saying one again keeps it."""
    with store.write("old version") as _change:
        user = store.upsert_node("User")
        for city in ("Paris", "Rome"):
            store.add_edge(user["id"], "lives in", store.upsert_node(city)["id"],
                           category="general")
    commit(run, ("User", "lives in", "Rome"))
    assert active(store) == [("lives in", "Rome")]


def test_undo_brings_the_old_value_back(store, run, executor):
    commit(run, ("User", "lives in", "Paris"))
    data = commit(run, ("User", "lives in", "Rome"))
    assert executor.undo(data["change_id"])["success"]
    assert active(store) == [("lives in", "Paris")]
