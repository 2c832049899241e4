"""The vectors of what was said: one per message of every conversation, live or imported.

Facts are the index of a memory, the conversation is its evidence: a small writer keeps
about one fact per seven turns of a long history, and what it left out is still in the
words. Recall finds those turns by meaning through these vectors, made by the same
background indexer as the facts' (`core.meaning.indexer`), after the facts, and kept in
SQLite beside them (`message_vectors`, schema version 19).
"""

from __future__ import annotations

import heapq
import json
import sqlite3
from collections.abc import Iterable, Iterator

import numpy as np

from core.meaning.engine import MAX_CHARS
from core.meaning.vectors import chunks, matrix_of, save_vectors, text_crc

# What is embedded of a message: its words with the spacing folded, cut where the model
# cuts (the first 600 characters say what a long message is about).
SAID_ROLES = ("user", "assistant")
SHORTEST = 2  # "ok" says nothing to search for; "好的" is two characters too
_NEEDING_SQL = (
    "SELECT m.id, m.content, m.role, c.speakers, v.model, v.text_crc FROM messages m"
    " LEFT JOIN conversations c ON c.id = m.conversation_id LEFT JOIN message_vectors v"
    f" ON v.message_id = m.id WHERE m.id > ? AND m.role IN {SAID_ROLES} AND"
    " m.deleted_at IS NULL ORDER BY m.id")


def turn_text(content: str, role: str = "", speakers: str | None = None) -> str:
    """A message as the embedding model reads it: with its speaker's name where an
    imported conversation names who spoke ("Caroline: I went to the support group"), so
    a question about Caroline is nearer to what she said than to what was said to her."""
    text = " ".join(str(content).split())
    name = _speaker(role, speakers)
    return (f"{name}: {text}" if name else text)[:MAX_CHARS]


def _speaker(role: str, speakers: str | None) -> str:
    if not speakers:
        return ""
    try:
        names = json.loads(speakers)
    except ValueError:
        return ""
    name = names.get(role) if isinstance(names, dict) else None
    return " ".join(name.split()) if isinstance(name, str) else ""


def has_table(conn: sqlite3.Connection) -> bool:
    """Whether the file has message vectors (a file of version 19 or later)."""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name ="
                        " 'message_vectors'").fetchone() is not None


def needing_vectors(conn: sqlite3.Connection, model: str, after: int
                    ) -> tuple[list[int], int]:
    """Ids of the messages after id `after` whose vector is missing, from another model,
    or made from other words (an edit), and the largest message id looked at."""
    needing, top = [], after
    for message_id, content, role, speakers, vector_model, crc in conn.execute(
            _NEEDING_SQL, (after,)):
        top = max(top, message_id)
        text = turn_text(content, role, speakers)
        if len(content.strip()) >= SHORTEST and (vector_model != model or crc != text_crc(text)):
            needing.append(message_id)
    return needing, top


def newest_message(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()[0]


def texts_of(conn: sqlite3.Connection, ids: list[int]) -> dict[int, str]:
    """The text each message's vector is made from (deleted messages are left out)."""
    found: dict[int, str] = {}
    for group in chunks(ids):
        for message_id, content, role, speakers in conn.execute(
                "SELECT m.id, m.content, m.role, c.speakers FROM messages m LEFT JOIN"
                " conversations c ON c.id = m.conversation_id WHERE m.id IN"
                f" ({', '.join('?' * len(group))}) AND m.deleted_at IS NULL", group):
            if len(content.strip()) >= SHORTEST:
                found[message_id] = turn_text(content, role, speakers)
    return found


def save(conn: sqlite3.Connection, model: str, texts: dict[int, str],
         vectors: np.ndarray) -> None:
    """Store one batch in one short transaction, as the facts' are."""
    save_vectors(conn, model, texts, vectors, table="message_vectors", key="message_id")


def stored(conn: sqlite3.Connection, model: str, after_seq: int = 0, batch: int = 20_000
           ) -> Iterator[tuple[np.ndarray, np.ndarray, int]]:
    """The stored vectors of `model` past `after_seq`, as (ids, float16 matrix, newest
    seq) batches: all of them at start, the keeper's new ones for a follower."""
    cursor = conn.execute(
        "SELECT v.message_id, v.vector, v.seq FROM message_vectors v JOIN messages m ON m.id"
        " = v.message_id WHERE v.model = ? AND v.seq > ? AND m.deleted_at IS NULL"
        " ORDER BY v.seq", (model, after_seq))
    while rows := cursor.fetchmany(batch):
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        yield ids, matrix_of([r[1] for r in rows]), rows[-1][2]


def drop_orphans(conn: sqlite3.Connection) -> int:
    """Vectors of messages that no longer exist (a conversation deleted for good)."""
    with conn:
        return conn.execute("DELETE FROM message_vectors WHERE message_id NOT IN"
                            " (SELECT id FROM messages)").rowcount


def newest_first(ids: Iterable[int], count: int) -> list[int]:
    """The `count` largest ids: the newest messages are embedded first."""
    return heapq.nlargest(count, ids)
