"""Conversations: each keeps its own messages; the memory graph is shared by all.

A conversation is deleted softly (it can be restored) and found again by full-text
search over every conversation's messages, English and Chinese alike.
"""

from __future__ import annotations

import json
import time
from typing import Any

from core.errors import ErrorCode
from core.i18n import N_
from core.redaction import scrub_known
from core.store.graph import GraphStore, Row, StoreError
from core.store.search import fts_candidates
from core.store.text import display_name, plain_text

NEW_TITLE = "New chat"
TITLE_CHARS = 60
SNIPPET_CHARS = 160


def _now(store: GraphStore) -> float:
    return store.clock() if store.clock else time.time()


def create(store: GraphStore, title: str = NEW_TITLE) -> int:
    now = _now(store)
    with store.conn:
        return store.conn.execute(
            "INSERT INTO conversations(id, title, created_at, updated_at) VALUES (?, ?, ?, ?)",
            (store.new_id("conversations"), title, now, now)).lastrowid


def latest(store: GraphStore) -> int | None:
    """The conversation used last, if there is one."""
    row = store.query_one("SELECT id FROM conversations WHERE deleted_at IS NULL ORDER BY"
                          " updated_at DESC, id DESC LIMIT 1")
    return row["id"] if row else None


def current(store: GraphStore) -> int:
    """The conversation to show at start: the one used last, or a new one."""
    chosen = latest(store)
    return chosen if chosen is not None else create(store)


def get(store: GraphStore, conversation_id: Any) -> Row:
    if isinstance(conversation_id, bool) or not isinstance(conversation_id, int):
        raise StoreError(N_("conversation_id must be a whole number"), ErrorCode.INVALID)
    row = store.query_one("SELECT * FROM conversations WHERE id = ?", (conversation_id,))
    if row is None:
        raise StoreError(N_("that conversation is not there"), ErrorCode.NOT_FOUND,
                         conversation_id=conversation_id)
    return row


def _shown(store: GraphStore) -> str:
    """The messages shown: not those of exchanges the person deleted (a file from before
    version 13 has no such mark)."""
    return " AND m.deleted_at IS NULL" if store.schema_version() >= 13 else ""


def listing(store: GraphStore, deleted: bool = False) -> list[Row]:
    """Newest first, with how many messages each holds and its first words."""
    imported = ", c.import_id IS NOT NULL AS imported" if store.schema_version() >= 15 \
        else ", 0 AS imported"
    return store.query(
        "SELECT c.id, c.title, c.created_at, c.updated_at, c.deleted_at" + imported + ","
        " (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id"
        + _shown(store) + ") AS messages"
        " FROM conversations c WHERE (c.deleted_at IS NOT NULL) = ?"
        " ORDER BY c.updated_at DESC, c.id DESC", (int(deleted),))


def rename(store: GraphStore, conversation_id: int, title: Any) -> Row:
    # a key pasted into a title is masked like one in a message: it would go to the
    # database, every backup and the other devices
    shown = display_name(scrub_known(title))[:200] if isinstance(title, str) else ""
    if not shown:
        raise StoreError(N_("a conversation needs a title with a visible character"),
                         ErrorCode.INVALID)
    get(store, conversation_id)
    with store.conn:
        store.conn.execute("UPDATE conversations SET title = ? WHERE id = ?",
                           (shown, conversation_id))
    return get(store, conversation_id)


def title_from(text: str) -> str:
    """A title from the first message: its first line, cut at a word (no known key)."""
    text = scrub_known(text)
    line = " ".join(text.strip().splitlines()[0].split()) if text.strip() else NEW_TITLE
    if len(line) <= TITLE_CHARS:
        return line
    cut = line[:TITLE_CHARS].rsplit(" ", 1)[0]
    return (cut if len(cut) > TITLE_CHARS // 2 else line[:TITLE_CHARS]) + "…"


def touch(store: GraphStore, conversation_id: int, first_text: str | None = None) -> None:
    """A message was added: the conversation moves to the top, and a new chat takes its
    title from its first message."""
    with store.conn:
        store.conn.execute("UPDATE conversations SET updated_at = ? WHERE id = ?",
                           (_now(store), conversation_id))
        if first_text is not None:
            store.conn.execute("UPDATE conversations SET title = ? WHERE id = ? AND title = ?",
                               (title_from(first_text), conversation_id, NEW_TITLE))


def set_deleted(store: GraphStore, conversation_id: int, deleted: bool) -> None:
    get(store, conversation_id)
    with store.conn:
        store.conn.execute("UPDATE conversations SET deleted_at = ? WHERE id = ?",
                           (_now(store) if deleted else None, conversation_id))


def search(store: GraphStore, text: str, limit: int = 50) -> list[Row]:
    """Messages of any conversation (not deleted) that match `text`, best first, each
    with its conversation's title and a snippet around the match."""
    hits = fts_candidates(store, "message_fts", text, max(limit * 3, 60))
    if not hits:
        return []
    order = {rowid: rank for rank, (rowid, _score) in enumerate(hits)}
    marks = ", ".join("?" * len(order))
    rows = store.query(
        "SELECT m.id, m.role, m.content, m.created_at, m.turn_id, m.conversation_id,"
        " c.title FROM messages m JOIN conversations c ON c.id = m.conversation_id"
        f" WHERE m.id IN ({marks}) AND c.deleted_at IS NULL" + _shown(store), list(order))
    rows.sort(key=lambda r: order[r["id"]])
    words = [w.casefold() for w in text.split() if w]
    for row in rows:
        row["snippet"], row["matches"] = _snippet(row.pop("content"),
                                                  words or [text.casefold()])
    return rows[:limit]


def _snippet(content: str, words: list[str]) -> tuple[str, list[list[int]]]:
    """A piece of the message as plain text around the first match, and where in the
    piece each word matched ([start, length] pairs), for the list to highlight."""
    plain = " ".join(plain_text(content).split())
    folded = plain.casefold()
    found = min((i for i in (folded.find(w) for w in words) if i >= 0), default=0)
    start = max(0, found - SNIPPET_CHARS // 3)
    lead = "…" if start else ""
    piece = lead + plain[start:start + SNIPPET_CHARS] + (
        "…" if start + SNIPPET_CHARS < len(plain) else "")
    low = piece.casefold()
    matches = []
    for word in words:
        at = low.find(word)
        while at >= 0 and word:
            matches.append([at, len(word)])
            at = low.find(word, at + len(word))
    return piece, sorted(matches)


def markdown(store: GraphStore, conversation_id: int) -> str:
    """The conversation as Markdown: its title, then each message under who said it."""
    conversation = get(store, conversation_id)
    lines = [f"# {conversation['title']}", ""]
    for message in store.query("SELECT role, content, created_at, error FROM messages m"
                               " WHERE conversation_id = ?" + _shown(store) + " ORDER BY id",
                               (conversation_id,)):
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(message["created_at"]))
        who = "You" if message["role"] == "user" else "Assistant"
        lines += [f"**{who}** · {when}", ""]
        lines += [message["content"] or f"*({message['error'] or 'no reply'})*", ""]
    # messages stored before keys were scrubbed at the history's door may still hold one
    return scrub_known("\n".join(lines).rstrip() + "\n")


def with_speakers(store: GraphStore, conversation_id: int | None,
                  messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages, each with its speaker's name where an imported conversation names
    who spoke (LoCoMo's two people): shown as "Ben", not as the assistant."""
    if conversation_id is None or store.schema_version() < 15:
        return messages
    row = store.query_one("SELECT speakers FROM conversations WHERE id = ?",
                          (conversation_id,))
    try:
        names = json.loads(row["speakers"]) if row and row["speakers"] else {}
    except ValueError:
        names = {}
    if isinstance(names, dict) and names:
        for message in messages:
            name = names.get(message.get("role"))
            if isinstance(name, str) and name.strip():
                message["speaker"] = name.strip()
    return messages


EXCERPT_CHARS = 240


def imported_excerpts(store: GraphStore, text: str, limit: int) -> list[Row]:
    """The messages of imported conversations that best match `text`, each with its
    date and who said it (`speaker`), cut to EXCERPT_CHARS. Remembering a long history
    keeps a few facts of each piece; the words themselves stay searchable."""
    if store.schema_version() < 15 or not store.query_one(
            "SELECT 1 AS yes FROM conversations WHERE import_id IS NOT NULL LIMIT 1"):
        return []
    hits = fts_candidates(store, "message_fts", text, max(limit * 6, 30))
    if not hits:
        return []
    order = {rowid: rank for rank, (rowid, _score) in enumerate(hits)}
    rows = store.query(
        "SELECT m.id, m.role, substr(m.content, 1, ?) AS content, m.created_at,"
        " m.conversation_id FROM messages m JOIN conversations c ON c.id = m.conversation_id"
        f" WHERE m.id IN ({', '.join('?' * len(order))}) AND c.import_id IS NOT NULL AND"
        " c.deleted_at IS NULL AND m.deleted_at IS NULL",
        [EXCERPT_CHARS + 1, *order])
    rows.sort(key=lambda r: order[r["id"]])
    rows = rows[:limit]
    for row in rows:
        with_speakers(store, row["conversation_id"], [row])
        text = " ".join(row["content"].split())
        row["content"] = text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + "…"
    return rows


def holding_turn(store: GraphStore, turn_id: str) -> int | None:
    """The conversation that holds the turn's messages (where a memory came from)."""
    found = store.query_one("SELECT conversation_id FROM messages WHERE turn_id = ? AND"
                            " conversation_id IS NOT NULL LIMIT 1", (turn_id,))
    return None if found is None else found["conversation_id"]
