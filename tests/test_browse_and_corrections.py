"""The graph browser's reads and the person's corrections, on a real store, each with its
undo."""

import pytest

from core.store import browse
from core.tools import ToolExecutor
from core.tools.corrections import CorrectionError, correct
from tests.conftest import commit


@pytest.fixture
def people(run):
    commit(run, ("Anna", "lives in", "Berlin"), ("Anna", "plays", "the violin"),
           ("Bob", "lives in", "Berlin"), ("小明", "喜欢", "苹果"), ("小明", "住在", "上海"))
    run("task_create", task_id="Trip to Chengdu", description="plan the trip")
    run("persona_update", attributes=[{"attribute": "tone", "value": "warm"}])


def names(store, ids):
    return [r["name"] for r in browse.node_rows(store, ids)]


def node_id(store, name):
    return store.find_node(name)["id"]


def test_lists_sort_filter_and_search_in_english_and_chinese(store, people):
    everything = browse.list_node_ids(store)
    assert len(everything) == store.query_one("SELECT count(*) AS n FROM nodes")["n"]
    assert names(store, browse.list_node_ids(store, sort="mentions", descending=True))[0] \
        in ("Anna", "Berlin", "小明")
    assert names(store, browse.list_node_ids(store, kinds=["task"])) == ["Trip to Chengdu"]
    assert "AI" in names(store, browse.list_node_ids(store, kinds=["persona"]))
    assert names(store, browse.list_node_ids(store, query="violin", sort="relevance"))[0] \
        == "the violin"
    assert set(names(store, browse.list_node_ids(store, query="苹"))) >= {"苹果", "小明"}
    assert "小明" in names(store, browse.list_node_ids(store, query="小明喜欢什么"))
    with pytest.raises(browse.BrowseError, match="unknown kind"):
        browse.list_node_ids(store, kinds=["bogus"])


def test_rows_come_in_the_order_asked_and_pages_are_bounded(store, people):
    ids = browse.list_node_ids(store)[:3]
    assert [r["id"] for r in browse.node_rows(store, ids[::-1])] == ids[::-1]
    with pytest.raises(browse.BrowseError, match="at most"):
        browse.node_rows(store, list(range(1, browse.MAX_PAGE + 2)))


def test_subgraph_to_depth_two_with_a_cap(store, people):
    anna = node_id(store, "Anna")
    one = browse.subgraph(store, anna, depth=1)
    assert {n["name"] for n in one["nodes"]} == {"Anna", "Berlin", "the violin"}
    two = browse.subgraph(store, anna, depth=2)
    assert "Bob" in {n["name"] for n in two["nodes"]} and not two["capped"]
    capped = browse.subgraph(store, anna, depth=2, limit=2)
    assert len(capped["nodes"]) == 2 and capped["capped"]
    assert all(e["source_id"] in {n["id"] for n in capped["nodes"]} for e in capped["edges"])


def test_details_list_edges_both_ways_and_the_history(store, people, run):
    berlin = browse.node_details(store, node_id(store, "Berlin"))
    assert {e["direction"] for e in berlin["edges"]} == {"in"}
    assert len(berlin["edges"]) == 2
    assert berlin["history"][0]["tool"] == "memory_commit"


def test_turn_touched_collects_changed_and_recalled_rows(store):
    executor = ToolExecutor(store)
    executor.execute("memory_commit", {"triplets": [
        {"subject": "Eve", "relation": "likes", "object": "tea"}]}, turn_id="t1",
        actor="model")
    touched = browse.turn_touched(store, "t1", recalled_edges=[])
    assert set(names(store, touched["nodes"])) == {"Eve", "tea"}
    assert len(touched["edges"]) == 1


def undo_restores(store, run_correction):
    before = store.dump()
    answer = run_correction()
    assert store.dump() != before
    store.undo(answer["change_id"])
    assert store.dump() == before
    return answer


def test_rename_then_undo(store, people):
    anna = node_id(store, "Anna")
    answer = undo_restores(store, lambda: correct(store, "rename_node",
                                                  {"node_id": anna, "name": "Anna Schmidt"}))
    assert "Anna Schmidt" in answer["summary"]
    with pytest.raises(CorrectionError, match="merge the two"):
        correct(store, "rename_node", {"node_id": anna, "name": "bob"})


def test_merge_moves_every_edge_and_folds_duplicates(store, people, run):
    commit(run, ("Anne", "lives in", "Berlin"), ("Anne", "likes", "jazz"))
    anna, anne = node_id(store, "Anna"), node_id(store, "Anne")
    edges_before = store.query_one("SELECT count(*) AS n FROM edges")["n"]
    answer = undo_restores(store, lambda: correct(store, "merge_nodes",
                                                  {"keep_id": anna, "merge_id": anne}))
    assert "1 edge(s) moved, 1 folded" in answer["summary"]
    correct(store, "merge_nodes", {"keep_id": anna, "merge_id": anne})
    assert store.find_node("Anne") is None
    assert store.query_one("SELECT count(*) AS n FROM edges")["n"] == edges_before
    lives = store.active_edge(anna, "lives in", node_id(store, "Berlin"))
    assert lives["mention_count"] == 2
    assert "Also called: Anne" in store.row("nodes", anna)["description"]
    assert "Anna" in names(store, browse.list_node_ids(store, query="Anne"))


def test_a_merge_keeps_the_copy_of_a_fact_made_first_as_sync_does(store, run):
    """Whichever node the person keeps, of two copies that become one fact the earlier
    stays (as every device applying a merge does), with both copies' mentions."""
    commit(run, ("Zoe", "plays", "cello"))  # the earlier copy, on the node merged away
    commit(run, ("Zoey", "plays", "cello"), ("Zoey", "plays", "cello"))
    zoe, zoey = node_id(store, "Zoe"), node_id(store, "Zoey")
    cello = node_id(store, "cello")
    earlier = store.active_edge(zoe, "plays", cello)
    later = store.active_edge(zoey, "plays", cello)
    assert earlier["id"] < later["id"]
    correct(store, "merge_nodes", {"keep_id": zoey, "merge_id": zoe})
    kept = store.row("edges", earlier["id"])
    assert (kept["status"], kept["source_id"]) == ("active", zoey)
    assert kept["mention_count"] == earlier["mention_count"] + later["mention_count"]
    stepped_aside = store.row("edges", later["id"])
    assert (stepped_aside["status"], stepped_aside["superseded_by"]) == \
        ("superseded", earlier["id"])


def test_edit_relation_delete_and_restore_an_edge(store, people):
    edge = store.query_one("SELECT id FROM edges WHERE relation = 'plays'")["id"]
    undo_restores(store, lambda: correct(store, "edit_relation",
                                         {"edge_id": edge, "relation": "is learning",
                                          "confidence": 0.7}))
    undo_restores(store, lambda: correct(store, "delete_edge", {"edge_id": edge}))
    correct(store, "delete_edge", {"edge_id": edge})
    assert store.row("edges", edge)["status"] == "deleted"
    undo_restores(store, lambda: correct(store, "restore_edge", {"edge_id": edge}))
    with pytest.raises(CorrectionError, match="already deleted"):
        correct(store, "delete_edge", {"edge_id": edge})


def test_deleting_a_node_deletes_its_facts_and_restoring_brings_them_back(store, people):
    anna = node_id(store, "Anna")
    undo_restores(store, lambda: correct(store, "delete_node", {"node_id": anna}))
    correct(store, "delete_node", {"node_id": anna})
    assert store.query("SELECT id FROM edges WHERE source_id = ? AND status = 'active'",
                       (anna,)) == []
    assert anna in browse.list_node_ids(store, status="deleted")
    assert anna not in browse.list_node_ids(store, status="active")
    answer = correct(store, "restore_node", {"node_id": anna})
    assert "2 of its facts" in answer["summary"]
    with pytest.raises(CorrectionError, match="persona"):
        correct(store, "delete_node", {"node_id": node_id(store, "AI")})


@pytest.mark.parametrize(("action", "arguments", "needle"), [
    ("nope", {}, "unknown correction"),
    ("rename_node", {"node_id": "1", "name": "x"}, "whole number"),
    ("rename_node", {"node_id": 99999, "name": "x"}, "no longer in the memory"),
    ("rename_node", {"node_id": 1, "name": "  "}, "non-empty"),
    ("delete_edge", {"edge_id": 1, "extra": 1}, "not extra"),
    ("merge_nodes", {"keep_id": 1, "merge_id": 1}, "itself"),
])
def test_bad_corrections_are_refused_and_write_nothing(store, people, action, arguments,
                                                       needle):
    before = store.dump()
    with pytest.raises(CorrectionError, match=needle):
        correct(store, action, arguments)
    assert store.dump() == before


def test_merging_two_names_of_one_person_leaves_no_fact_from_them_to_themselves(store, run):
    commit(run, ("User", "is named", "Alex"), ("Alex", "plays", "cello"))
    user, alex = node_id(store, "User"), node_id(store, "Alex")
    answer = undo_restores(store, lambda: correct(store, "merge_nodes",
                                                  {"keep_id": user, "merge_id": alex}))
    assert "1 between the two deleted" in answer["summary"]
    correct(store, "merge_nodes", {"keep_id": user, "merge_id": alex})
    loops = store.query("SELECT relation FROM edges WHERE source_id = target_id AND"
                        " status = 'active'")
    assert loops == []
    assert store.active_edge(user, "plays", node_id(store, "cello")) is not None
    assert "Also called: Alex" in store.row("nodes", user)["description"]


def test_search_as_you_type_matches_beginnings_of_words_and_types_best_first(store, run):
    commit(run, ("User", "plays", "cello"), ("User", "lives in", "Berlin"),
           ("User", "likes", "black coffee"), ("Berlin", "is in", "Germany"),
           ("Mia", "reads", "Murakami novels"), ("User", "uses", "a used bike"))
    store.conn.execute("UPDATE nodes SET type = 'Instrument' WHERE name = 'cello'")

    def found(query: str) -> list[str]:
        return names(store, browse.list_node_ids(store, query=query, sort="relevance"))

    assert found("Ber")[0] == "Berlin"
    assert found("cof")[0] == "black coffee"
    assert found("cel")[0] == "cello"
    assert found("Instr") == ["cello"]  # by its type
    assert found("use")[:2] == ["User", "a used bike"]  # the name first, then a word
    assert found("Murakami nov")[0] == "Murakami novels"
    assert found("绿") == []
    assert "Berlin" in found("germ")  # through the fact that names it
