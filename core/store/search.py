"""Ranked search over edges (by words, and by meaning where the store has a vector index)
and nodes (by words), and expansion along active edges."""

from __future__ import annotations

import logging
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from concurrent.futures import Future
from typing import Any, Protocol

from core.store.graph import GraphStore, Row
from core.store.text import normalize_name, query_terms

EDGE_SELECT = """
SELECT e.*, s.name AS source_name, s.type AS source_type, s.kind AS source_kind,
       t.name AS target_name, t.type AS target_type, t.kind AS target_kind
FROM edges e JOIN nodes s ON s.id = e.source_id JOIN nodes t ON t.id = e.target_id
"""

# Full-text candidates fetched before filtering by status and re-ranking; a few times the
# rows a recall can show, so filtering rarely starves the result.
CANDIDATE_POOL = 60
# bm25 ranking costs about a microsecond per matching row, so a term found in more rows
# than this is "common": it still adds to a row's rank but no longer selects rows alone.
COMMON_TERM_ROWS = 1000
DAY = 86400.0
log = logging.getLogger(__name__)
# Reciprocal rank fusion of the two rankings: a fact's relevance is the sum over the
# rankings of weight / (RRF_K + rank). A small K lets the first places of either ranking
# stand out; words weigh more, so where a fact shares the question's words it stays first
# and meaning fills in the rest (bench/recall_quality.py measured the choices).
RRF_K = 10
WORDS_WEIGHT = 1.5
# Facts much less similar than the closest one are not offered by meaning at all: a
# question about nothing stored should still find nothing.
MEANING_MARGIN = 0.04
# A question about the person ("what is my profession", "user job", "我的职业") is asked
# of the person's own facts too, so that 30 facts about them are not buried under 20,000
# about other people with the same topics (others' jobs, pets, cities): their nearest few
# are fused in with this weight. So is a question that names nobody ("automobile",
# "家乡"): in a companion's memory, a bare topic is most often the person's own.
ABOUT_PERSON = re.compile(r"\b(i|me|my|mine|myself|user|user's)\b|我", re.IGNORECASE)
PERSON_WEIGHT = 1.0
PERSON_FACTS = 500  # the person's facts compared, the newest first
PERSON_PICKS = 4

class SimilarFacts(Protocol):
    """What the store's `meaning` offers (see core.meaning.indexer.Meaning)."""

    def similar(self, text: str, count: int) -> list[tuple[int, float]]: ...

    def similar_soon(self, text: str, count: int) -> Future[list[tuple[int, float]]]: ...

    def similar_among(self, text: str, ids: list[int]) -> list[tuple[int, float]]: ...


def marks(values: Sequence) -> str:
    """`?, ?, ?` for an SQL `IN (...)` over `values`."""
    return ", ".join("?" for _ in values)


def _filters(categories: Sequence[str] | None, since: float | None) -> tuple[str, list]:
    """SQL conditions for a category and age filter. The unary + keeps them off the
    indexes, so SQLite looks rows up by id or by node, which is always the cheaper way."""
    sql, params = "", []
    if categories:
        sql += f" AND +e.category IN ({marks(categories)})"
        params += list(categories)
    if since is not None:
        sql += " AND +e.updated_at >= ?"
        params.append(since)
    return sql, params


def score(relevance: float, mentions: int, updated_at: float, now: float) -> float:
    """Relevance first; mentions and recency lift rows of similar relevance."""
    age_days = max(0.0, now - updated_at) / DAY
    return relevance * (1 + 0.15 * math.log1p(mentions)) * (1 + 0.25 * math.exp(-age_days / 30))


def fts_candidates(store: GraphStore, table: str, text: str, pool: int,
                   prefix: bool = False) -> list[tuple[int, float]]:
    """(rowid, relevance) of the rows of an FTS table that best match `text` (with
    `prefix`, its words as beginnings of words: search as you type).

    Rows are selected by the rare terms and ranked by all of them, so a query full of
    common words costs about as much as one with a single rare word. When every term is
    common, rows holding all of them come first, then the newest rows holding any.
    """
    def count(expression: str) -> int:
        return store.conn.execute(
            f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (expression,)).fetchone()[0]

    def ranked(expression: str) -> list[tuple[int, float]]:
        return store.conn.execute(
            f"SELECT rowid, -rank FROM {table} WHERE {table} MATCH ? ORDER BY rank LIMIT ?",
            (expression, pool)).fetchall()

    def newest(expression: str, relevance: float) -> list[tuple[int, float]]:
        rows = store.conn.execute(
            f"SELECT rowid FROM {table} WHERE {table} MATCH ? ORDER BY rowid DESC LIMIT ?",
            (expression, pool)).fetchall()
        return [(r[0], relevance) for r in rows]

    rows_with = {t: count(t) for t in query_terms(text, prefix)}
    terms = [t for t, n in rows_with.items() if n]
    if not terms:
        return []
    rare = [t for t in terms if rows_with[t] <= COMMON_TERM_ROWS]
    any_term = " OR ".join(terms)
    if len(rare) == len(terms):
        return ranked(any_term)
    if rare:
        return ranked(f"({' OR '.join(rare)}) AND ({any_term})")
    every_term = " AND ".join(terms)
    together = rows_with[terms[0]] if len(terms) == 1 else count(every_term)
    hits = ranked(every_term) if together <= COMMON_TERM_ROWS else newest(every_term, 1.0)
    if len(hits) < pool and len(terms) > 1:
        seen = {rowid for rowid, _ in hits}
        hits += [h for h in newest(any_term, 0.1) if h[0] not in seen][: pool - len(hits)]
    return hits


def edge_candidates(store: GraphStore, text: str, pool: int) -> dict[int, float]:
    """(edge id -> relevance) of the facts that share words with `text`, fused with those
    nearest to it in meaning when the store has a vector index."""
    meaning: SimilarFacts | None = store.meaning
    asked = meaning.similar_soon(text, pool) if meaning is not None else None
    by_words = fts_candidates(store, "edge_fts", text, pool)
    try:
        by_meaning = asked.result() if asked is not None else []
    except Exception:  # recall by meaning is a help: a failure leaves recall to words
        log.exception("recall by meaning failed")
        by_meaning = []
    if not by_meaning:
        return dict(by_words)
    relevance: dict[int, float] = defaultdict(float)
    for rank, (rowid, _) in enumerate(by_words):
        relevance[rowid] += WORDS_WEIGHT / (RRF_K + rank + 1)
    closest = by_meaning[0][1]
    for rank, (rowid, similarity) in enumerate(by_meaning):
        if similarity < closest - MEANING_MARGIN:
            break
        relevance[rowid] += 1 / (RRF_K + rank + 1)
    if ABOUT_PERSON.search(text) or not names_someone(store, text):
        for rank, (rowid, _) in enumerate(_person_nearest(store, meaning, text)):
            relevance[rowid] += PERSON_WEIGHT / (RRF_K + rank + 1)
    return relevance


def names_someone(store: GraphStore, text: str) -> bool:
    """Whether `text` names someone or something the memory holds facts about, other
    than the person ("Kira's job", "小明的生日"): a whole name of a fact's subject."""
    return bool(named_subjects(store, text, limit=1))


def named_subjects(store: GraphStore, text: str, limit: int = 3) -> list[Row]:
    """The nodes other than the person that `text` names by a whole name and that facts
    are about, longest name first ("Melanie's pets", "小明的生日")."""
    folded = normalize_name(text)
    found = []
    for node in search_nodes(store, text, limit=10):
        name = node["norm_name"]
        if name != "user" and len(name) > 1 and contains_name(folded, name) and store.query_one(
                "SELECT 1 AS yes FROM edges WHERE source_id = ? AND status = 'active'"
                " LIMIT 1", (node["id"],)):
            found.append(node)
    found.sort(key=lambda n: -len(n["norm_name"]))
    return found[:limit]


def contains_name(text: str, name: str) -> bool:
    """`name` in `text` as whole words ("Ann" is not in "annual"); a CJK name anywhere,
    since CJK writes no spaces."""
    if not name.isascii():
        return name in text
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) is not None


def _person_nearest(store: GraphStore, meaning: Any, text: str) -> list[tuple[int, float]]:
    """The person's own facts nearest to `text`, within the margin of the closest."""
    among = getattr(meaning, "similar_among", None)
    if among is None:
        return []
    ids = [r["id"] for r in store.query(
        "SELECT e.id FROM edges e JOIN nodes n ON n.id = e.source_id WHERE n.norm_name ="
        " 'user' AND e.status = 'active' AND e.category = 'general' ORDER BY e.id DESC"
        " LIMIT ?", (PERSON_FACTS,))]
    nearest = among(text, ids)[:PERSON_PICKS]
    if not nearest:
        return []
    return [(i, s) for i, s in nearest if s >= nearest[0][1] - MEANING_MARGIN]


def search_edges(store: GraphStore, text: str, *, statuses: Sequence[str] = ("active",),
                 categories: Sequence[str] | None = None, since: float | None = None,
                 limit: int = 50) -> list[Row]:
    """Edges that share words with `text` or are near it in meaning, best first."""
    candidates = edge_candidates(store, text, max(CANDIDATE_POOL, limit * 2))
    if not candidates:
        return []
    ids = list(candidates)
    sql = EDGE_SELECT + f" WHERE e.id IN ({marks(ids)}) AND +e.status IN ({marks(statuses)})"
    extra, extra_params = _filters(categories, since)
    rows = store.query(sql + extra, [*ids, *statuses, *extra_params])
    now = store.clock()
    for row in rows:
        row["relevance"] = candidates[row["id"]]
        row["score"] = score(row["relevance"], row["mention_count"], row["updated_at"], now)
    rows.sort(key=lambda r: r["score"], reverse=True)
    return rows[:limit]


def search_nodes(store: GraphStore, text: str, limit: int = 20) -> list[Row]:
    """Nodes whose name (or task description) shares words with `text`, best first."""
    candidates = fts_candidates(store, "node_fts", text, limit)
    if not candidates:
        return []
    order = {rowid: i for i, (rowid, _) in enumerate(candidates)}
    rows = store.query(f"SELECT * FROM nodes WHERE id IN ({marks(order)})", list(order))
    return sorted(rows, key=lambda r: order[r["id"]])


def nodes_named(store: GraphStore, names: Iterable[str]) -> list[Row]:
    """The nodes with exactly these names (after normalisation); unknown names are skipped."""
    keys = list(dict.fromkeys(normalize_name(n) for n in names if n.strip()))
    if not keys:
        return []
    return store.query(f"SELECT * FROM nodes WHERE norm_name IN ({marks(keys)})", keys)


def edges_around(store: GraphStore, node_id: int, *, categories: Sequence[str] | None = None,
                 since: float | None = None, limit: int = 20) -> list[Row]:
    """A node's active edges in both directions, most mentioned and newest first.

    Each direction is read in index order and stops at `limit`, so a hub node with
    thousands of edges costs no more than a leaf.
    """
    extra, params = _filters(categories, since)
    order = " ORDER BY e.mention_count DESC, e.updated_at DESC LIMIT ?"
    outgoing = store.query(f"{EDGE_SELECT} WHERE e.source_id = ? AND e.status = 'active'"
                           f"{extra}{order}", [node_id, *params, limit])
    incoming = store.query(f"{EDGE_SELECT} WHERE e.target_id = ? AND e.status = 'active'"
                           f" AND e.source_id != e.target_id{extra}{order}",
                           [node_id, *params, limit])
    both = sorted(outgoing + incoming, key=lambda e: (e["mention_count"], e["updated_at"]),
                  reverse=True)
    return both[:limit]
