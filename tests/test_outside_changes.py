"""Changes other programs commit to the same file are found, once each, without being told;
this program's own are not told twice."""

from __future__ import annotations

import pytest

from core.store import GraphStore
from core.store.outside import MAX_PER_POLL, OutsideChanges
from core.tools import ToolExecutor


def commit(store: GraphStore, *objects: str, actor: str = "mcp:Cursor") -> list[int]:
    ids = []
    for name in objects:
        result = ToolExecutor(store).execute("memory_commit", {"triplets": [
            {"subject": "User", "relation": "likes", "object": name}]}, actor=actor)
        assert result["success"], result
        ids.append(result["data"]["change_id"])
    return ids


@pytest.fixture
def programs(tmp_path):
    """Two programs on one memory file: the window's store and a server's."""
    path = tmp_path / "graph_memory.db"
    window, server = GraphStore(path), GraphStore(path)
    yield window, server
    window.close()
    server.close()


def test_another_programs_change_is_found_once_and_our_own_is_not(programs):
    window, server = programs
    outside = OutsideChanges(window.conn)
    assert outside.poll() == []
    theirs = commit(server, "tea")
    ours = commit(window, "coffee", actor="user")
    outside.own(ours[0])
    found = outside.poll()
    assert [(c.id, c.actor, c.tool) for c in found] == [
        (theirs[0], "mcp:Cursor", "memory_commit")]
    assert found[0].touched()["edges"] and found[0].arguments["triplets"]
    assert outside.poll() == []  # told once


def test_a_burst_of_changes_is_read_in_pages_and_none_is_lost(programs):
    window, server = programs
    outside = OutsideChanges(window.conn)
    made = commit(server, *[f"book {n}" for n in range(MAX_PER_POLL + 20)])
    first, second, third = outside.poll(), outside.poll(), outside.poll()
    assert len(first) == MAX_PER_POLL and len(second) == 20 and third == []
    assert [c.id for c in first + second] == made


def test_a_damaged_change_row_is_told_as_a_bulk_change(programs):
    window, server = programs
    outside = OutsideChanges(window.conn)
    change_id = commit(server, "tea")[0]
    server.conn.execute("UPDATE change_log SET ops = x'00ff'"
                        " WHERE id = ?", (change_id,))
    found = outside.poll()
    assert [c.id for c in found] == [change_id] and found[0].touched()["bulk"]
