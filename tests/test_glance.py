"""What a new chat shows it already knows about the person, in the person's words."""

from __future__ import annotations

from core.store import GraphStore
from core.tools import ToolExecutor
from core.turn.snapshot import glance


def test_a_fact_that_points_at_the_person_says_you(tmp_path):
    store = GraphStore(tmp_path / "graph_memory.db")
    try:
        ToolExecutor(store).execute("memory_commit", {"triplets": [
            {"subject": "User", "relation": "lives in", "object": "Hangzhou"},
            {"subject": "Mei", "relation": "is the sister of", "object": "User"}]},
            actor="user")
        lines = glance(store)["facts"]
        assert "Mei is the sister of you" in lines and "lives in Hangzhou" in lines
        assert not any(line.endswith("User") for line in lines)
    finally:
        store.close()
