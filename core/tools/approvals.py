"""Calls over the destroyed-rows budget wait for the person: Allow runs them, Deny drops them.

The model's own `confirm` never lifts the budget, and other apps' calls over their
budgets (what they may write or take away) wait here too, under the app's name. A refused
call is kept here with exactly the rows it would have taken away; allowing it runs the
same call, as its asker's change (the model's in its turn, so "Undo this turn" still
takes it back), only if it would take away exactly those rows. If the memory changed in
between, nothing is written and the person is told.
"""

from __future__ import annotations

import json
from typing import Any

from core.errors import CodedError, ErrorCode
from core.i18n import tr
from core.store import GraphStore, Row
from core.tools.executor import ToolExecutor

FIELDS = ("id, turn_id, tool, arguments, summary, count, preview, state, outcome, change_id,"
          " created_at, decided_at, actor, via, reason")
# Requests other apps may leave waiting at once: past any of these bounds a call is
# refused outright, so no app can bury the person's window under requests. The name is
# the app's own word, so it is not the only bound: the connection (how it came, which it
# cannot choose), the one HTTP sharing token all HTTP apps hold, and all apps together.
PENDING_PER_APP = 3
PENDING_PER_CONNECTION = 3
PENDING_PER_TOKEN = 5
PENDING_FROM_APPS = 8
APPS_LIKE = "mcp:%"


class ApprovalError(CodedError, ValueError):
    """The approval asked for does not exist or was decided already."""


def request(store: GraphStore, turn_id: str | None, over_budget: dict[str, Any],
            actor: str = "model", via: str | None = None) -> Row:
    """Keep a refused call for the person to decide; answers it as `approval()` does.
    `actor` is whose call it is (the model, or an app: "mcp:<name>")."""
    # One statement, committed on its own: a request is not a change to the memory.
    return approval(store, _insert(store, turn_id, over_budget, actor, via))


def _insert(store: GraphStore, turn_id: str | None, over_budget: dict[str, Any], actor: str,
            via: str | None) -> int:
    cursor = store.conn.execute(
        "INSERT INTO approvals (turn_id, tool, arguments, summary, count, rows, preview,"
        " created_at, actor, via, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (turn_id, over_budget["tool"], json.dumps(over_budget["arguments"], ensure_ascii=False),
         over_budget["summary"], over_budget["count"], json.dumps(over_budget["rows"]),
         json.dumps(over_budget["preview"], ensure_ascii=False), store.clock(), actor, via,
         over_budget.get("reason", "removes")))
    return cursor.lastrowid


def app_request(store: GraphStore, over_budget: dict[str, Any], actor: str,
                via: str | None) -> tuple[Row | None, str | None]:
    """Keep an app's refused call for the person unless a bound on waiting requests is
    reached; answers (the request, None) or (None, which bound: "app", "connection",
    "token" or "all"). Counted and kept in one transaction, so apps in other processes
    cannot slip past a bound together."""
    store.conn.execute("BEGIN IMMEDIATE")
    try:
        by_app, by_connection, by_token, total = store.conn.execute(
            "SELECT count(*) FILTER (WHERE actor = :actor),"
            " count(*) FILTER (WHERE via IS :via), count(*) FILTER (WHERE via LIKE 'HTTP%'),"
            " count(*) FROM approvals WHERE state = 'pending' AND actor LIKE :apps",
            {"actor": actor, "via": via, "apps": APPS_LIKE}).fetchone()
        over_http = (via or "").startswith("HTTP")
        for bound, count, most in (("app", by_app, PENDING_PER_APP),
                                   ("connection", by_connection, PENDING_PER_CONNECTION),
                                   ("token", by_token if over_http else 0, PENDING_PER_TOKEN),
                                   ("all", total, PENDING_FROM_APPS)):
            if count >= most:
                store.conn.execute("ROLLBACK")
                return None, bound
        kept = _insert(store, None, over_budget, actor, via)
        store.conn.execute("COMMIT")
    except BaseException:
        if store.conn.in_transaction:
            store.conn.execute("ROLLBACK")
        raise
    return approval(store, kept), None


def waiting_from(store: GraphStore, actor: str) -> int:
    """How many of `actor`'s requests wait for the person."""
    return store.conn.execute("SELECT count(*) FROM approvals WHERE state = 'pending' AND"
                              " actor = ?", (actor,)).fetchone()[0]


def _shape(row: Row) -> Row:
    row["arguments"] = json.loads(row["arguments"])
    row["preview"] = json.loads(row["preview"])
    return row


def approval(store: GraphStore, approval_id: Any) -> Row:
    if isinstance(approval_id, bool) or not isinstance(approval_id, int):
        raise ApprovalError(tr("approval_id must be a whole number"))
    row = store.query_one(f"SELECT {FIELDS} FROM approvals WHERE id = ?", (approval_id,))
    if row is None:
        raise ApprovalError(tr("there is no approval {id}", id=approval_id), ErrorCode.NOT_FOUND)
    return _shape(row)


def pending(store: GraphStore) -> list[Row]:
    """Requests still waiting for the person, oldest first."""
    return [_shape(r) for r in store.query(
        f"SELECT {FIELDS} FROM approvals WHERE state = 'pending' ORDER BY id")]


def states(store: GraphStore, approval_ids: list[int]) -> dict[int, Row]:
    """The state and outcome of each of these requests, by id (those that exist)."""
    if not approval_ids:
        return {}
    rows = store.query(f"SELECT id, state, outcome FROM approvals WHERE id IN"
                       f" ({', '.join('?' * len(approval_ids))})", approval_ids)
    return {row["id"]: row for row in rows}


def expire_turn(store: GraphStore, turn_id: str) -> int:
    """The turn was undone: its pending requests no longer stand. Answers how many."""
    cursor = store.conn.execute(
        "UPDATE approvals SET state = 'failed', outcome = 'its turn was undone; nothing was"
        " changed', decided_at = ? WHERE turn_id = ? AND state = 'pending'",
        (store.clock(), turn_id))
    return cursor.rowcount


def decide(store: GraphStore, approval_id: Any, allow: Any) -> Row:
    """Allow (run the call) or deny one pending request; answers the request as it ends."""
    if not isinstance(allow, bool):
        raise ApprovalError(tr("allow must be true or false"))
    asked = approval(store, approval_id)
    if asked["state"] != "pending":
        states = {"allowed": tr("allowed"), "denied": tr("denied"), "failed": tr("failed")}
        raise ApprovalError(tr("approval {id} was already decided ({state})", id=approval_id,
                               state=states.get(asked["state"], asked["state"])),
                            ErrorCode.CONFLICT)
    state, outcome, change_id = "denied", "denied by the person; nothing was changed", None
    if allow:
        rows = json.loads(store.query_one("SELECT rows FROM approvals WHERE id = ?",
                                          (approval_id,))["rows"])
        result = ToolExecutor(store).execute(
            asked["tool"], asked["arguments"], turn_id=asked["turn_id"], actor=asked["actor"],
            approved_rows=[tuple(r) for r in rows], via=asked["via"])
        if result["success"]:
            state, change_id = "allowed", result["data"].get("change_id")
            outcome = result["data"]["result"].splitlines()[0]
        else:
            state, outcome = "failed", result["error"]
    store.conn.execute("UPDATE approvals SET state = ?, outcome = ?, change_id = ?,"
                       " decided_at = ? WHERE id = ?",
                       (state, outcome, change_id, store.clock(), approval_id))
    return approval(store, approval_id)
