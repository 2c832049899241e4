"""Import of large exports: streamed in bounded memory, one change undone in one step,
checked before anything is written, and stoppable at any point with nothing changed."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from core.protocol.packets import Packet, PacketType
from core.store import GraphStore, StoreError
from core.store.exchange import ImportCancelled, export_json, import_json
from core.testing.sample_export import write_export
from core.tools import ToolExecutor
from tests.conftest import make_dispatcher

pytestmark = pytest.mark.slow  # `-m "not slow"` leaves these out of a quick loop


NODES = 12_000  # more than two batches of staged rows, so progress and cancel are seen


@pytest.fixture(scope="module")
def big_export(tmp_path_factory) -> Path:
    return write_export(tmp_path_factory.mktemp("export") / "big.json", NODES, NODES)


def counts(store: GraphStore) -> tuple[int, int]:
    row = store.query_one("SELECT (SELECT count(*) FROM nodes) AS n,"
                          " (SELECT count(*) FROM edges) AS e")
    return row["n"], row["e"]


def test_a_large_export_round_trips_and_undo_takes_it_all_back(tmp_path, big_export, clock):
    store = GraphStore(tmp_path / "memory.db", clock=clock)
    try:
        phases = []
        report = import_json(store, big_export, lambda phase, done: phases.append(
            (phase, done)))
        assert counts(store) == (NODES, NODES)
        assert phases[0][0] == "reading" and phases[-1] == ("done", 1.0)
        assert [d for _, d in phases] == sorted(d for _, d in phases)  # never goes back
        again = tmp_path / "again.json"
        export_json(store, again)
        export_json(store, tmp_path / "twice.json")
        store2 = GraphStore(tmp_path / "second.db", clock=clock)
        import_json(store2, again)
        export_json(store2, tmp_path / "second.json")
        store2.close()
        assert (tmp_path / "second.json").read_bytes() == again.read_bytes()
        # The change log holds id ranges, not 24,000 row images.
        size = store.query_one("SELECT length(ops) AS n FROM change_log WHERE id = ?",
                               (report["change_id"],))["n"]
        assert size < 1000
        node = store.find_node("Thing 7 東西")
        history = store.query("SELECT change_id FROM change_rows WHERE tbl = 'nodes' AND"
                              " row_id = ?", (node["id"],))
        assert [h["change_id"] for h in history] == [report["change_id"]]
        store.undo(report["change_id"])
        assert counts(store) == (0, 0)
        assert not Path(f"{store.path}.import-staging").exists()
    finally:
        store.close()


def test_undo_of_an_import_is_refused_once_a_later_change_touched_its_rows(tmp_path,
                                                                          big_export, clock):
    store = GraphStore(tmp_path / "memory.db", clock=clock)
    try:
        change = import_json(store, big_export)["change_id"]
        ToolExecutor(store).execute("memory_commit", {"triplets": [
            {"subject": "Thing 5 東西", "relation": "is", "object": "red"}]})
        with pytest.raises(StoreError, match="was changed again later"):
            store.undo(change)
        assert counts(store)[0] == NODES + 1
        store.undo(change + 1)  # the later change first, then the import
        undo = store.undo(change)
        assert counts(store) == (0, 0)
        with pytest.raises(StoreError, match="import the file again"):
            store.undo(undo)
    finally:
        store.close()


def test_a_large_export_merges_into_a_memory_by_name(tmp_path, big_export, clock):
    store = GraphStore(tmp_path / "memory.db", clock=clock)
    try:
        tools = ToolExecutor(store)
        tools.execute("memory_commit", {"triplets": [
            {"subject": "thing 1 東西", "relation": "relates to", "object": "Thing 7920 東西"},
            {"subject": "Anna", "relation": "likes", "object": "tea"}]})
        before = store.dump()
        report = import_json(store, big_export)
        assert report["nodes_matched"] == 2 and report["nodes_added"] == NODES - 2
        assert report["edges_merged"] == 1 and report["edges_added"] == NODES - 1
        one = store.find_node("Thing 1 東西")
        assert one["mention_count"] == 1 + 2  # its own mention and the file's
        replaced = store.query("SELECT e.superseded_by, s.relation FROM edges e JOIN edges s"
                               " ON s.id = e.superseded_by WHERE e.status = 'superseded'"
                               " LIMIT 3")
        assert len(replaced) == 3  # links to the facts that replaced them survive new ids
        store.undo(report["change_id"])
        assert store.dump() == before
    finally:
        store.close()


@pytest.mark.parametrize("phase", ["reading", "checking", "writing"])
def test_a_cancelled_import_changes_nothing_in_any_phase(tmp_path, big_export, clock, phase):
    store = GraphStore(tmp_path / "memory.db", clock=clock)
    try:
        ToolExecutor(store).execute("memory_commit", {"triplets": [
            {"subject": "Anna", "relation": "likes", "object": "tea"}]})
        before = store.dump()
        stop = threading.Event()

        def report(now: str, _done: float) -> None:
            if now == phase:
                stop.set()

        with pytest.raises(ImportCancelled):
            import_json(store, big_export, report, stop.is_set)
        assert store.dump() == before
        assert not Path(f"{store.path}.import-staging").exists()
        ToolExecutor(store).execute("memory_commit", {"triplets": [
            {"subject": "Anna", "relation": "likes", "object": "coffee"}]})  # still writable
    finally:
        store.close()


def test_the_backend_reports_import_progress_and_cancel_stops_it(tmp_path, big_export):
    dispatcher = make_dispatcher(tmp_path / "home" / "graph_memory.db",
                            tmp_path / "home" / "config.json")
    dispatcher.backend.open()
    try:
        events = []

        def progress(event: str, data: dict) -> None:
            events.append((event, data))
            dispatcher.backend.cancel()  # as the window's Cancel button does, from another thread

        packet = Packet.make(PacketType.IMPORT_MEMORY, {"path": str(big_export)})
        answer = dispatcher.handle(packet, progress)
        assert not answer.success and answer.code == "cancelled"
        assert events[0][0] == "import" and 0 <= events[0][1]["done"] < 1
        assert dispatcher.backend.store.query_one("SELECT count(*) AS n FROM nodes")["n"] == 0
        dispatcher.backend.reset_cancel()  # the next packet starts afresh
        answer = dispatcher.handle(packet)
        assert answer.success, answer.error
        assert answer.data["nodes_added"] == NODES
    finally:
        dispatcher.backend.close()


def test_a_full_disk_during_an_import_saves_nothing_and_leaves_no_staging_file(
        tmp_path, big_export, clock):
    store = GraphStore(tmp_path / "memory.db", clock=clock)
    try:
        pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
        store.conn.execute(f"PRAGMA max_page_count = {pages + 50}")  # "disk full" soon
        with pytest.raises(sqlite3.OperationalError, match="full"):
            import_json(store, big_export)
        assert counts(store) == (0, 0)
        assert not Path(f"{store.path}.import-staging").exists()
        store.conn.execute("PRAGMA max_page_count = 1073741823")  # space is back
        assert import_json(store, big_export)["nodes_added"] == NODES
    finally:
        store.close()
