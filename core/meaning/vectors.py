"""The fact vectors in SQLite: which facts need one, and writing them."""

from __future__ import annotations

import re
import sqlite3
import zlib
from collections.abc import Iterable, Iterator

import numpy as np

# Facts that recall can show get a vector: active ones, and archived ones, which recall
# finds when asked to look in the archive.
INDEXED_STATUSES = ("active", "archived")

FACT_TEXT_SQL = """
SELECT e.id, s.name, e.relation, t.name
FROM edges e JOIN nodes s ON s.id = e.source_id JOIN nodes t ON t.id = e.target_id
"""
PERSON_NODE = "User"  # the person talking (core.tools.base); kept here to stay importable
CJK = re.compile(r"[\u3400-\u9fff]")


def fact_text(subject: str, relation: str, obj: str) -> str:
    """A fact as the embedding model reads it. The person asks about themselves in the
    first person ("what is my job", "我住在哪"), so their own facts are written that way:
    among 3,000 facts about other people, "I, the user (我): works as a nurse" put the
    paraphrases at rank 0 (median) where "User works as a nurse" put them at rank 6."""
    if subject == PERSON_NODE:
        subject = "我（用户）：" if CJK.search(relation) else "I, the user (我):"
    if obj == PERSON_NODE:
        obj = "我（用户）" if CJK.search(relation) else "me, the user (我)"
    return f"{subject} {relation} {obj}"


def text_crc(text: str) -> int:
    return zlib.crc32(text.encode("utf-8"))


def chunks(ids: Iterable[int], size: int = 400) -> Iterator[list[int]]:
    """Ids in groups small enough for an SQL `IN (...)` list, even twice over (SQLite
    before 3.32 allows 999 variables)."""
    group: list[int] = []
    for item in ids:
        group.append(item)
        if len(group) == size:
            yield group
            group = []
    if group:
        yield group


def facts_needing_vectors(conn: sqlite3.Connection, model: str, *,
                          edges: Iterable[int] | None = None,
                          nodes: Iterable[int] = ()) -> Iterator[int]:
    """Ids of indexed facts whose vector is missing, from another model, or made from text
    that has since changed (a rename, an edit): all of them when `edges` is None, else
    those among `edges` and around `nodes`."""
    sql = (FACT_TEXT_SQL.replace("SELECT e.id,", "SELECT v.model, v.text_crc, e.id,")
           + " LEFT JOIN edge_vectors v ON v.edge_id = e.id"
           f" WHERE e.status IN {INDEXED_STATUSES}")
    if edges is None:
        selections = [("", [])]
    else:
        selections = [(f" AND e.id IN ({', '.join('?' * len(group))})", group)
                      for group in chunks(edges)]
        selections += [(f" AND (e.source_id IN ({', '.join('?' * len(group))}) OR"
                        f" e.target_id IN ({', '.join('?' * len(group))}))", group + group)
                       for group in chunks(nodes)]
    for condition, params in selections:
        for vector_model, crc, edge_id, *parts in conn.execute(sql + condition, params):
            if vector_model != model or crc != text_crc(fact_text(*parts)):
                yield edge_id


def fact_texts(conn: sqlite3.Connection, ids: list[int]) -> dict[int, str]:
    """The text a fact's vector is made from: subject, relation and object, as one line."""
    if not ids:
        return {}
    rows = conn.execute(FACT_TEXT_SQL + f" WHERE e.id IN ({', '.join('?' * len(ids))})"
                        f" AND e.status IN {INDEXED_STATUSES}", ids)
    return {edge_id: fact_text(*parts) for edge_id, *parts in rows}


def save_vectors(conn: sqlite3.Connection, model: str, texts: dict[int, str],
                 vectors: np.ndarray, *, table: str = "edge_vectors", key: str = "edge_id"
                 ) -> None:
    """Store one batch in one short transaction (float16: 768 bytes a fact, or a message
    in `message_vectors`)."""
    with conn:
        seq = conn.execute(f"SELECT coalesce(max(seq), 0) FROM {table}").fetchone()[0]
        conn.executemany(
            f"INSERT OR REPLACE INTO {table}({key}, model, text_crc, seq, vector)"
            " VALUES (?, ?, ?, ?, ?)",
            [(row_id, model, text_crc(text), seq + 1 + i, vector.astype(np.float16).tobytes())
             for i, ((row_id, text), vector) in enumerate(zip(texts.items(), vectors,
                                                             strict=True))])


def matrix_of(blobs: list[bytes]) -> np.ndarray:
    """Stored vectors (float16 bytes, as `save_vectors` writes them) as one matrix."""
    return np.frombuffer(b"".join(blobs), dtype=np.float16).reshape(len(blobs), -1)


def stored_vectors(conn: sqlite3.Connection, model: str,
                   batch: int = 20_000) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The vectors of `model` for facts recall can show, as (ids, float16 matrix) batches,
    for building the index."""
    cursor = conn.execute(
        "SELECT v.edge_id, v.vector FROM edge_vectors v JOIN edges e ON e.id = v.edge_id"
        f" WHERE v.model = ? AND e.status IN {INDEXED_STATUSES}", (model,))
    while rows := cursor.fetchmany(batch):
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        yield ids, matrix_of([r[1] for r in rows])


def indexed_ids(conn: sqlite3.Connection, model: str) -> np.ndarray:
    """Ids of the facts the index should hold: shown by recall, with a current vector."""
    rows = conn.execute("SELECT v.edge_id FROM edge_vectors v JOIN edges e ON e.id ="
                        f" v.edge_id WHERE v.model = ? AND e.status IN {INDEXED_STATUSES}",
                        (model,))
    return np.fromiter((r[0] for r in rows), dtype=np.int64)


def vectors_of(conn: sqlite3.Connection, model: str,
               ids: Iterable[int]) -> tuple[np.ndarray, np.ndarray]:
    """(ids, float16 matrix) of the stored vectors of `ids`."""
    found: list[tuple[int, bytes]] = []
    for group in chunks(ids):
        found += conn.execute(
            f"SELECT edge_id, vector FROM edge_vectors WHERE model = ? AND edge_id IN"
            f" ({', '.join('?' * len(group))})", [model, *group]).fetchall()
    return (np.fromiter((i for i, _ in found), dtype=np.int64, count=len(found)),
            matrix_of([v for _, v in found]))


def drop_orphans(conn: sqlite3.Connection) -> int:
    """Vectors of facts that no longer exist (the trash was emptied, an import undone)."""
    with conn:
        return conn.execute("DELETE FROM edge_vectors WHERE edge_id NOT IN"
                            " (SELECT id FROM edges)").rowcount


def state_stamp(conn: sqlite3.Connection, model: str) -> tuple[int, int]:
    """(count, newest seq) of the model's vectors: a saved index matching it is current."""
    row = conn.execute("SELECT count(*), coalesce(max(seq), 0) FROM edge_vectors"
                       " WHERE model = ?", (model,)).fetchone()
    return row[0], row[1]


def similar_now(text: str, facts: list[dict]) -> list[tuple[int, float]]:
    """(fact id, cosine similarity) of a few `facts` (dicts with id, source_name,
    relation, target_name) to `text`, embedded now rather than read from the index: a
    fact written a moment ago may not be indexed yet. [] without an embedding engine."""
    from core.meaning import engine  # noqa: PLC0415  (loads the model on first use)

    # the query role's engine for both: the index role's belongs to the indexer thread
    passages = query = engine.engine("query")
    if query is None or not facts or not text.strip():
        return []
    try:
        matrix = np.asarray(passages.passages([fact_text(
            str(f["source_name"]), str(f["relation"]), str(f["target_name"]))
            for f in facts]), dtype=np.float32)
        vector = np.asarray(query.query(text), dtype=np.float32).reshape(-1)
    except (RuntimeError, ValueError, OSError):
        return []
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-9)
    scores = matrix @ (vector / max(float(np.linalg.norm(vector)), 1e-9))
    return sorted(((int(f["id"]), float(s)) for f, s in zip(facts, scores, strict=True)),
                  key=lambda pair: -pair[1])
