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


def test_a_headless_backend_sees_another_programs_writes(tmp_path):
    """`trulymem --tool`, a separate process, writes to the memory a headless backend has
    open: the backend's counts follow the file, and its clients hear memory_changed."""
    import subprocess
    import sys
    import threading
    from pathlib import Path

    from core.events import Event
    from core.protocol.client import BackendClient
    from core.protocol.packets import PacketType
    from core.protocol.server import BackendServer

    heard, told = [], threading.Event()

    def progress(event: str, data: dict) -> None:
        if event == Event.MEMORY_CHANGED and data.get("elsewhere", True):
            heard.append(data)
            told.set()

    home = tmp_path / "home"
    server = BackendServer(home=home, progress=progress)
    server.start()
    client = BackendClient(server)
    try:
        assert client.execute_tool("memory_commit", {"triplets": [
            {"subject": "User", "relation": "likes", "object": "tea"}]})["success"]
        before = client.request(PacketType.MEMORY_STATE)["data"]["counts"]["edges"]
        heard.clear()
        told.clear()
        written = subprocess.run(
            [sys.executable, "-m", "app.main", "--home", str(home), "--tool", "memory_commit",
             '{"triplets": [{"subject": "User", "relation": "owns", "object": "a dog"}]}'],
            cwd=Path(__file__).resolve().parents[1], capture_output=True, text=True,
            timeout=120, check=False)
        assert written.returncode == 0, written.stderr
        # the very next answer counts it, without waiting for a look
        after = client.request(PacketType.MEMORY_STATE)["data"]["counts"]["edges"]
        assert after == before + 1
        assert told.wait(30), "no memory_changed for the other program's write"
        assert any(change.get("tool") == "memory_commit" for change in heard)
    finally:
        server.shutdown()
