"""Ranked full-text search over edges and nodes, and expansion along active edges."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from core.store.graph import GraphStore, Row
from core.store.text import match_query, normalize_name

EDGE_SELECT = """
SELECT e.*, s.name AS source_name, s.type AS source_type, s.kind AS source_kind,
       t.name AS target_name, t.type AS target_type, t.kind AS target_kind
FROM edges e JOIN nodes s ON s.id = e.source_id JOIN nodes t ON t.id = e.target_id
"""

# Full-text candidates fetched before filtering by status and re-ranking; several times
# the rows a recall can show, so filtering rarely starves the result.
CANDIDATE_POOL = 200
DAY = 86400.0


def _in(values: Sequence) -> str:
    return ", ".join("?" for _ in values)


def score(relevance: float, mentions: int, updated_at: float, now: float) -> float:
    """Relevance first; mentions and recency lift rows of similar relevance."""
    age_days = max(0.0, now - updated_at) / DAY
    return relevance * (1 + 0.15 * math.log1p(mentions)) * (1 + 0.25 * math.exp(-age_days / 30))


def search_edges(store: GraphStore, text: str, *, statuses: Sequence[str] = ("active",),
                 categories: Sequence[str] | None = None, since: float | None = None,
                 limit: int = 50) -> list[Row]:
    """Edges whose subject, relation or object share words with `text`, best first."""
    expression = match_query(text)
    if expression is None:
        return []
    sql = (
        "WITH hits AS (SELECT rowid, rank FROM edge_fts WHERE edge_fts MATCH ?"
        " ORDER BY rank LIMIT ?) "
        + EDGE_SELECT.replace("FROM edges e", "FROM hits h JOIN edges e ON e.id = h.rowid")
        .replace("SELECT e.*", "SELECT -h.rank AS relevance, e.*")
        + f" WHERE e.status IN ({_in(statuses)})"
    )
    params: list = [expression, max(CANDIDATE_POOL, limit * 4), *statuses]
    if categories:
        sql += f" AND e.category IN ({_in(categories)})"
        params += list(categories)
    if since is not None:
        sql += " AND e.updated_at >= ?"
        params.append(since)
    rows = store.query(sql, params)
    now = store.clock()
    for row in rows:
        row["score"] = score(row["relevance"], row["mention_count"], row["updated_at"], now)
    rows.sort(key=lambda r: r["score"], reverse=True)
    return rows[:limit]


def search_nodes(store: GraphStore, text: str, limit: int = 20) -> list[Row]:
    """Nodes whose name (or task description) shares words with `text`, best first."""
    expression = match_query(text)
    if expression is None:
        return []
    return store.query(
        "WITH hits AS (SELECT rowid, rank FROM node_fts WHERE node_fts MATCH ?"
        " ORDER BY rank LIMIT ?) SELECT n.* FROM hits h JOIN nodes n ON n.id = h.rowid"
        " ORDER BY h.rank, n.mention_count DESC", (expression, limit),
    )


def nodes_named(store: GraphStore, names: Iterable[str]) -> list[Row]:
    """The nodes with exactly these names (after normalisation); unknown names are skipped."""
    keys = list(dict.fromkeys(normalize_name(n) for n in names if n.strip()))
    if not keys:
        return []
    return store.query(f"SELECT * FROM nodes WHERE norm_name IN ({_in(keys)})", keys)


def edges_around(store: GraphStore, node_id: int, *, categories: Sequence[str] | None = None,
                 since: float | None = None, limit: int = 20) -> list[Row]:
    """A node's active edges in both directions, most mentioned and newest first."""
    extra, params = "", []
    if categories:
        extra += f" AND e.category IN ({_in(categories)})"
        params += list(categories)
    if since is not None:
        extra += " AND e.updated_at >= ?"
        params.append(since)
    sql = (
        f"SELECT * FROM ({EDGE_SELECT} WHERE e.source_id = ? AND e.status = 'active'{extra}"
        f" UNION ALL {EDGE_SELECT} WHERE e.target_id = ? AND e.status = 'active'"
        f" AND e.source_id != e.target_id{extra})"
        " ORDER BY mention_count DESC, updated_at DESC LIMIT ?"
    )
    return store.query(sql, [node_id, *params, node_id, *params, limit])
