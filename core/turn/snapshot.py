"""The compact memory snapshot put in front of the model at the start of every turn."""

from __future__ import annotations

from core.store import GraphStore
from core.store.search import search_edges
from core.tools.base import edge_line
from core.tools.persona import persona_text
from core.tools.tasks import task_line

SNAPSHOT_MEMORIES = 12
SNAPSHOT_TASKS = 5


def memory_snapshot(store: GraphStore, message: str) -> str:
    """Persona, active tasks and the memories most relevant to `message`, bounded."""
    lines = [persona_text(store)]
    tasks = store.query("SELECT * FROM nodes WHERE kind = 'task' AND deleted_at IS NULL"
                        " AND state IN ('in_progress', 'paused') ORDER BY created_at DESC LIMIT ?",
                        (SNAPSHOT_TASKS,))
    lines.append("Active tasks:" + (" none" if not tasks else ""))
    lines += [f"  {task_line(store, t)}" for t in tasks]
    relevant = search_edges(store, message, categories=["general"], limit=SNAPSHOT_MEMORIES)
    lines.append("Relevant memories:" + (" none found" if not relevant else ""))
    lines += [f"  {edge_line(e)}" for e in relevant]
    return quoted("\n".join(lines))


def quoted(text: str) -> str:
    """Stored text cannot close the snapshot's tags and pose as the prompt around it."""
    return text.replace("<memory_snapshot", "‹memory_snapshot").replace(
        "</memory_snapshot", "‹/memory_snapshot")
