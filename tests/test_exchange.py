"""Export and import: the JSON round trip is exact, GraphML is well-formed, and bad or
hostile files are refused with nothing changed."""

import json
import xml.etree.ElementTree as ET

import pytest

from core.store import GraphStore
from core.store.exchange import ExchangeError, export_graphml, export_json, import_json
from core.tools.corrections import correct
from tests.conftest import commit


@pytest.fixture
def lived_in(run, store):
    commit(run, ("Anna", "lives in", "Berlin"), ("小明", "喜欢", "苹果"),
           ("Anna", "likes", "tea"))
    run("task_create", task_id="Trip", description="plan it")
    run("persona_update", attributes=[{"attribute": "tone", "value": "warm"}])
    edge = store.query_one("SELECT id FROM edges WHERE relation = 'likes'")["id"]
    correct(store, "delete_edge", {"edge_id": edge})


def test_export_import_export_is_identical(tmp_path, store, lived_in, clock):
    first = tmp_path / "first.json"
    export_json(store, first)
    empty = GraphStore(tmp_path / "empty.db", clock=clock)
    try:
        report = import_json(empty, first)
        assert report["nodes_added"] == store.query_one("SELECT count(*) AS n FROM nodes")["n"]
        second = tmp_path / "second.json"
        export_json(empty, second)
        assert first.read_bytes() == second.read_bytes()
        empty.undo(report["change_id"])  # an import is one change, undone in one step
        assert empty.query("SELECT id FROM nodes") == []
    finally:
        empty.close()


def test_importing_into_a_store_with_memories_merges_by_name(tmp_path, store, lived_in,
                                                             run, clock):
    path = tmp_path / "export.json"
    export_json(store, path)
    clock.advance(1)  # the other memory learned the same facts later, on its own
    other = GraphStore(tmp_path / "other.db", clock=clock)
    try:
        from core.tools import ToolExecutor

        ToolExecutor(other).execute("memory_commit", {"triplets": [
            {"subject": "anna", "relation": "lives in", "object": "BERLIN"},
            {"subject": "Bob", "relation": "likes", "object": "tea"}]})
        report = import_json(other, path)
        assert report["nodes_matched"] == 3  # anna, BERLIN and tea, by normalised name
        assert report["edges_merged"] == 1
        anna = other.find_node("Anna")
        berlin = other.find_node("Berlin")
        assert other.active_edge(anna["id"], "lives in", berlin["id"])["mention_count"] == 2
        assert other.find_node("小明") is not None
        assert "1 known facts reinforced" in report["summary"]
    finally:
        other.close()


def test_importing_your_own_export_again_changes_nothing(tmp_path, store, lived_in):
    path = tmp_path / "export.json"
    export_json(store, path)
    before = store.dump()
    report = import_json(store, path)
    assert report["nodes_added"] == report["edges_added"] == report["edges_merged"] == 0
    assert report["edges_known"] == len(before["edges"])
    assert store.dump() == before  # no mention counted twice, no history row doubled
    again = tmp_path / "again.json"
    export_json(store, again)
    assert again.read_bytes() == path.read_bytes()


def test_graphml_is_well_formed_with_labels(tmp_path, store, lived_in):
    path = tmp_path / "memory.graphml"
    commit_name = "Ctrl\x01char <&> \"quoted\""
    store_nodes = export_graphml(store, path)["nodes"]
    root = ET.parse(path).getroot()
    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    assert len(root.findall("g:graph/g:node", ns)) == store_nodes
    labels = {d.text for d in root.iter("{http://graphml.graphdrawing.org/xmlns}data")}
    assert {"Anna", "小明", "lives in"} <= labels
    assert commit_name not in labels


def test_graphml_survives_control_characters(tmp_path, store, run):
    commit(run, ("Odd\x01name", "has", "<&>"))
    path = tmp_path / "odd.graphml"
    export_graphml(store, path)
    ET.parse(path)


def bad_file(tmp_path, content):
    path = tmp_path / "bad.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


GOOD_NODE = {"id": 1, "name": "A", "kind": "entity", "created_at": 1.0, "updated_at": 1.0}
GOOD_EDGE = {"id": 1, "source_id": 1, "target_id": 1, "relation": "r", "status": "active",
             "created_at": 1.0, "updated_at": 1.0}


@pytest.mark.parametrize(("content", "needle"), [
    ("{not json", "not valid JSON"),
    ([], "does not hold a JSON object"),
    ({"format": "other", "version": 1, "nodes": [], "edges": []}, "format"),
    ({"format": "trulymem-memory", "version": 1, "nodes": [], "edges": [], "extra": 1},
     "unknown field 'extra'"),
    ({"format": "trulymem-memory", "version": 2, "nodes": [], "edges": []}, "newer TrulyMEM"),
    ({"format": "trulymem-memory", "version": 1, "nodes": []}, "missing edges"),
    ({"format": "trulymem-memory", "version": 1, "nodes": {}, "edges": []},
     "nodes: must be a list"),
    ('{"format": "trulymem-memory", "version": 1, "nodes": [], "nodes": [], "edges": []}',
     "nodes: appears twice"),
    ('{"format": "trulymem-memory", "version": 1, "nodes": [], "edges": []} trailing',
     "not valid JSON"),
    ('{"format": "trulymem-memory", "version": 1, "nodes": [{"id": 1', "not valid JSON"),
    ({"format": "trulymem-memory", "version": 1, "nodes": [GOOD_NODE, GOOD_NODE],
      "edges": []}, "node id 1 appears twice"),
    ('{"format": "trulymem-memory", "version": 1, "nodes": [{"id": 1, "name": "\\ud800",'
     ' "kind": "entity", "created_at": 1, "updated_at": 1}], "edges": []}',
     "nodes/0/name: holds a broken character"),
    ({"format": "trulymem-memory", "version": 1, "nodes": [GOOD_NODE],
      "edges": [GOOD_EDGE, {**GOOD_EDGE, "id": 2}]}, "edge 2 repeats an active fact"),
    ({"format": "trulymem-memory", "version": 1, "nodes": [GOOD_NODE],
      "edges": [{**GOOD_EDGE, "status": "superseded", "superseded_by": 9}]},
     "superseded by an edge the file does not have"),
    ({"format": "trulymem-memory", "version": 1, "nodes": [{**GOOD_NODE, "evil": 1}],
      "edges": []}, "unknown field"),
    ({"format": "trulymem-memory", "version": 1,
      "nodes": [{**GOOD_NODE, "name": "x" * 20000}], "edges": []}, "longer than 10,000"),
    ({"format": "trulymem-memory", "version": 1, "nodes": [{**GOOD_NODE, "kind": "evil"}],
      "edges": []}, "nodes/0/kind: must be one of"),
    ({"format": "trulymem-memory", "version": 1, "nodes": [GOOD_NODE],
      "edges": [{**GOOD_EDGE, "confidence": True}]}, "edges/0/confidence"),
    ({"format": "trulymem-memory", "version": 1, "nodes": [GOOD_NODE],
      "edges": [{**GOOD_EDGE, "target_id": 7}]}, "points at node 7"),
    ({"format": "trulymem-memory", "version": 1, "nodes": [GOOD_NODE, {**GOOD_NODE, "id": 2,
                                                                         "name": " a "}],
      "edges": []}, "same name"),
    ('{"format": "trulymem-memory", "version": 1, "edges": [], "nodes": ['
     + "[" * 100000 + "]" * 100000 + "]}", "not valid JSON"),
])
def test_bad_and_hostile_files_are_refused_and_change_nothing(tmp_path, store, lived_in,
                                                              content, needle):
    before = store.dump()
    with pytest.raises(ExchangeError, match=needle):
        import_json(store, bad_file(tmp_path, content))
    assert store.dump() == before
