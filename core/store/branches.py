"""An edited message branches the conversation instead of discarding what followed it.

Editing an earlier message sends the new text in place of that exchange and the ones after
it; those are kept aside as a branch (hidden the way a deleted exchange is, marked with the
branch's first turn). Every branch of one fork is a row of `branches`, in the order made.
Switching shows another branch, and the memory follows the branch shown: the shown
branch's memory changes are taken back as one undo (kept on its row), and the undo that
took back the other branch's changes is undone (redone). A regenerated reply (the same
message asked again) is no branch: it keeps its earlier replies as versions.
"""

from __future__ import annotations

from typing import Any

from core.errors import ErrorCode
from core.i18n import N_
from core.store import GraphStore, StoreError
from core.store.history import History

BRANCH_SCHEMA = 16  # the schema version that keeps branches


def supported(store: GraphStore) -> bool:
    return store.schema_version() >= BRANCH_SCHEMA


def fork_of(store: GraphStore, first_turn: str) -> str | None:
    row = store.query_one("SELECT fork FROM branches WHERE first_turn = ?", (first_turn,))
    return row["fork"] if row else None


def _rows(store: GraphStore, fork: str) -> list[dict[str, Any]]:
    return store.query("SELECT id, first_turn, undo_change FROM branches WHERE fork = ?"
                       " ORDER BY id", (fork,))


def _add(store: GraphStore, history: History, fork: str, first_turn: str) -> None:
    store.conn.execute("INSERT OR IGNORE INTO branches(conversation_id, fork, first_turn,"
                       " created_at) VALUES (?, ?, ?, ?)",
                       (history.conversation_id, fork, first_turn, store.clock()))


def _shelve(store: GraphStore, history: History, first_turn: str, turns: list[str],
            undo_change: int | None) -> None:
    """Hide `turns` as the branch that starts at `first_turn`, with the undo that took its
    memory changes back."""
    places = ", ".join("?" * len(turns))
    store.conn.execute(
        f"UPDATE messages SET deleted_at = ?, branch_hidden = ? WHERE conversation_id = ?"
        f" AND turn_id IN ({places}) AND deleted_at IS NULL",
        (store.clock(), first_turn, history.conversation_id, *turns))
    store.conn.execute("UPDATE branches SET undo_change = ? WHERE first_turn = ?",
                       (undo_change, first_turn))


def keep_aside(store: GraphStore, history: History, turns: list[str], new_turn: str,
               undo_change: int | None) -> None:
    """An edit of `turns[0]`: keep `turns` as a branch of the fork there (made now if the
    message was not edited before) and make `new_turn` the newest branch of it."""
    fork = fork_of(store, turns[0]) or turns[0]
    with store.conn:
        _add(store, history, fork, turns[0])
        _shelve(store, history, turns[0], turns, undo_change)
        _add(store, history, fork, new_turn)


def positions(store: GraphStore, conversation_id: int | None) -> dict[str, list[int]]:
    """For each first turn of a branch in the conversation: [shown, of], counted from 1,
    where its fork has more than one branch."""
    if not supported(store):
        return {}
    rows = store.query("SELECT fork, first_turn FROM branches WHERE conversation_id IS ?"
                       " ORDER BY id", (conversation_id,))
    forks: dict[str, list[str]] = {}
    for row in rows:
        forks.setdefault(row["fork"], []).append(row["first_turn"])
    return {turn: [i + 1, len(turns)] for turns in forks.values() if len(turns) > 1
            for i, turn in enumerate(turns)}


def _undo_shown(store: GraphStore, turns: list[str]) -> int | None:
    try:
        undo_id, _ids = store.undo_turn(turns[0], later=turns[1:])
    except StoreError as error:
        if error.code is not ErrorCode.NOTHING_TO_DO:
            raise
        return None
    return undo_id


def _redo(store: GraphStore, undo_change: int | None, first_turn: str) -> int | None:
    """Undo the undo that took a branch's memory changes back (a redo)."""
    if undo_change is None:
        return None
    entry = store.change(undo_change)
    if entry is None or entry["undone_by"] is not None:
        return None
    return store.undo_changes([undo_change], "redo",
                              {"change_id": undo_change, "branch": first_turn})


def switch(store: GraphStore, history: History, shown_turn: str, step: int) -> dict[str, Any]:
    """Show the branch `step` places from the one that starts at `shown_turn` (-1 the one
    before, +1 the one after); the memory follows. Raises StoreError when the memory
    cannot follow, with nothing changed."""
    fork = fork_of(store, shown_turn) if supported(store) else None
    if fork is None:
        raise StoreError(N_("that message has no other versions"), ErrorCode.NOT_FOUND)
    rows = _rows(store, fork)
    at = next(i for i, r in enumerate(rows) if r["first_turn"] == shown_turn)
    to = min(max(at + step, 0), len(rows) - 1)
    if to == at:
        return {"shown": at + 1, "of": len(rows), "undone": None, "redone": None}
    turns = history.turns_from(shown_turn)
    if not turns or turns[0] != shown_turn:
        raise StoreError(N_("that message is not shown in this conversation"),
                         ErrorCode.NOT_FOUND)
    wanted = rows[to]
    undone = _undo_shown(store, turns)
    try:
        redone = _redo(store, wanted["undo_change"], wanted["first_turn"])
    except StoreError:
        if undone is not None:  # put the shown branch's memory back as it was
            store.undo_changes([undone], "redo", {"change_id": undone})
        raise
    with store.conn:
        _shelve(store, history, shown_turn, turns, undone)
        store.conn.execute("UPDATE messages SET deleted_at = NULL, branch_hidden = NULL"
                           " WHERE branch_hidden = ? AND conversation_id IS ?",
                           (wanted["first_turn"], history.conversation_id))
        store.conn.execute("UPDATE branches SET undo_change = NULL WHERE id = ?",
                           (wanted["id"],))
    return {"shown": to + 1, "of": len(rows), "undone": undone, "redone": redone}
