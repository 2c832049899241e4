"""The trash: deleted facts and nodes, restorable until the person empties it.

Nothing the model can call removes a row for good sooner than the store's grace period
(`GraphStore.trash_days`); emptying the trash is the person's act alone, logged as one
change like any other.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.i18n import N_, tr
from core.store.graph import DAY_SECONDS, GraphStore

TRASHED_EDGES = "SELECT id FROM edges WHERE status = 'deleted' AND updated_at <= ?"
# Run after the trashed edges are gone: a node goes only when no edge names it any more,
# so an active, archived or superseded fact is never removed because its node was.
TRASHED_NODES = ("SELECT n.id FROM nodes n WHERE n.deleted_at IS NOT NULL AND n.deleted_at <= ?"
                 " AND NOT EXISTS (SELECT 1 FROM edges e WHERE e.source_id = n.id)"
                 " AND NOT EXISTS (SELECT 1 FROM edges e WHERE e.target_id = n.id)")
EMPTIED = N_("emptied the trash: {facts} and {nodes}")
ONE_FACT, FACTS, ONE_NODE, NODES = N_("1 fact"), N_("{n} facts"), N_("1 node"), N_("{n} nodes")


def _english(text: str, **params: Any) -> str:
    return text.format(**params)


def _emptied(facts: int, nodes: int, say: Callable[..., str]) -> str:
    """What emptying removed, in English (`_english`, for the change log) or as shown
    (`tr`)."""
    return say(EMPTIED, facts=say(ONE_FACT) if facts == 1 else say(FACTS, n=facts),
               nodes=say(ONE_NODE) if nodes == 1 else say(NODES, n=nodes))


def trash_status(store: GraphStore) -> dict[str, Any]:
    """What the trash holds: counts, the oldest deletion and the grace period."""
    edges = store.query_one("SELECT count(*) AS n, min(updated_at) AS oldest FROM edges"
                            " WHERE status = 'deleted'")
    nodes = store.query_one("SELECT count(*) AS n, min(deleted_at) AS oldest FROM nodes"
                            " WHERE deleted_at IS NOT NULL")
    oldest = [t for t in (edges["oldest"], nodes["oldest"]) if t is not None]
    return {"edges": edges["n"], "nodes": nodes["n"], "oldest": min(oldest, default=None),
            "trash_days": store.trash_days}


def empty_trash(store: GraphStore, older_than_days: float = 0) -> dict[str, Any]:
    """Remove for good what was deleted more than `older_than_days` ago (0: everything).

    A deleted node goes only once no edge names it any more; a node still holding other
    facts stays in the trash, restorable.
    """
    cutoff = store.clock() - older_than_days * DAY_SECONDS
    with store.write("empty_trash", {"older_than_days": older_than_days},
                     actor="user") as change:
        edges = [r["id"] for r in store.query(TRASHED_EDGES, (cutoff,))]
        for edge_id in edges:
            store.hard_delete_edge(edge_id)
        nodes = [r["id"] for r in store.query(TRASHED_NODES, (cutoff,))]
        for node_id in nodes:
            store.delete("nodes", node_id)
        change.summary = _emptied(len(edges), len(nodes), _english)  # the log keeps English
    return {"removed_edges": len(edges), "removed_nodes": len(nodes),
            "change_id": change.id, "summary": _emptied(len(edges), len(nodes), tr)}
