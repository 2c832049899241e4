"""The memory itself: tools run by hand, undo and redo, review, approvals, the trash,
the person's corrections, and export and import."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import ErrorCode
from core.events import Event
from core.i18n import N_
from core.protocol.handlers.table import ID_LIST, NAME, WHOLE, Refusal, handles
from core.protocol.packets import PacketType
from core.store import browse, describe, exchange, review, trash
from core.tools import REGISTRY, ToolExecutor, approvals, corrections

if TYPE_CHECKING:
    from core.protocol.backend_interface import HandlerBackend

IMPORT_STEP = 0.005  # of the whole: an import reports a few hundred progress events


def _outcome(outcome: dict[str, Any]) -> dict[str, Any]:
    """A tool's own answer as a packet's: its data, or a refusal with its words."""
    if not outcome["success"]:
        raise Refusal(outcome["error"], ErrorCode(outcome.get("code") or "invalid"))
    return outcome["data"]


def _reads_only(body: dict[str, Any]) -> bool:
    """A tool that only reads (memory_recall, task_query…) is answered on the read lane
    while long work runs: a recall must not wait minutes behind an import."""
    spec = REGISTRY.get(body.get("tool_name")) if isinstance(body.get("tool_name"), str) \
        else None
    return spec is not None and not spec.writes


@handles(PacketType.EXECUTE_TOOL, {"tool_name": {"type": "string"}, "arguments": {}},
         reads=_reads_only)
def execute_tool(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    if "tool_name" not in body:
        raise Refusal(N_("tool_name must be text"))
    return _outcome(ToolExecutor(backend.need_store()).execute(
        body["tool_name"], body.get("arguments"), actor="user"))


@handles(PacketType.UNDO, {"change_id": WHOLE, "change_ids": {**ID_LIST, "minItems": 1}},
         long_running=True)
def undo(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    """Undo `change_id`, or `change_ids` together as one change (a turn's waiting
    changes in the review inbox), or without either the newest change not yet undone
    (Ctrl+Z)."""
    store = backend.need_store()
    if "change_ids" in body:
        ids = body["change_ids"]
        undo_id = store.undo_changes(ids, "undo", {"change_ids": ids})
        return {"change_id": undo_id, "undone": ids, **_described(store, undo_id, ids)}
    change_id = body.get("change_id")
    if change_id is None:
        change_id = browse.last_undoable(store)
        if change_id is None:
            raise Refusal(N_("there is no change left to undo"), ErrorCode.NOTHING_TO_DO)
    undo_id = store.undo(change_id)  # a StoreError says why not, in the person's words
    return {"change_id": undo_id, "undone": change_id,
            **_described(store, undo_id, [change_id])}


@handles(PacketType.REDO, {}, long_running=True)
def redo(backend: HandlerBackend, _body: dict[str, Any]) -> dict[str, Any]:
    """Take back the newest undo, when nothing but redos came after it."""
    store = backend.need_store()
    undo_id = browse.last_redoable(store)
    if undo_id is None:
        raise Refusal(N_("there is nothing to redo"), ErrorCode.NOTHING_TO_DO)
    # what the undo took back, which the redo brings back (read before it clears the marks)
    back = [r["id"] for r in store.query(
        "SELECT id FROM change_log WHERE undone_by = ? ORDER BY id DESC", (undo_id,))]
    change_id = store.undo_changes([undo_id], "redo", {"change_id": undo_id})
    return {"change_id": change_id, "redone": undo_id,
            **_described(store, change_id, back, redo=True)}


def _described(store: Any, change_id: int, taken: list[int],
               redo: bool = False) -> dict[str, Any]:
    """What an undo or redo did (`lines`), said as the changes it took back or brought back
    (`taken`), and what it left as later changes made it."""
    lines = describe.describe_change(store, change_id)
    kept = store.kept_by_undo(change_id)
    return {"lines": lines, "message": describe.undo_words(store, taken, redo), "kept": kept,
            "kept_message": describe.kept_words(kept)}


@handles(PacketType.MEMORY_STATE, {}, reads=True)
def memory_state(backend: HandlerBackend, _body: dict[str, Any]) -> dict[str, Any]:
    return backend.memory_state()


@handles(PacketType.REVIEW_LIST, {"limit": {}, "before": {}}, reads=True)
def review_list(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    return review.waiting(backend.need_store(), body.get("limit", 200), body.get("before"))


@handles(PacketType.REVIEW_KEEP, {"change_ids": {}, "through": {}})
def review_keep(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    return review.keep(backend.need_store(), body.get("change_ids"), body.get("through"))


@handles(PacketType.LIST_APPROVALS, {}, reads=True)
def list_approvals(backend: HandlerBackend, _body: dict[str, Any]) -> dict[str, Any]:
    return {"approvals": approvals.pending(backend.need_store())}


@handles(PacketType.DECIDE_APPROVAL, {"approval_id": {}, "allow": {}})
def decide_approval(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    return {"approval": approvals.decide(backend.need_store(), body.get("approval_id"),
                                         body.get("allow"))}


@handles(PacketType.TRASH_STATUS, {}, reads=True)
def trash_status(backend: HandlerBackend, _body: dict[str, Any]) -> dict[str, Any]:
    return trash.trash_status(backend.need_store())


@handles(PacketType.EMPTY_TRASH, {"older_than_days": {"type": "number", "minimum": 0}},
         long_running=True)
def empty_trash(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    return trash.empty_trash(backend.need_store(), body.get("older_than_days", 0))


@handles(PacketType.CORRECT_MEMORY, {"action": {}, "arguments": {"type": ["object", "null"]}},
         long_running=True)
def correct_memory(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    return corrections.correct(backend.need_store(), body.get("action"),
                               body.get("arguments") or {})


@handles(PacketType.EXPORT_MEMORY, {"path": NAME, "format": {"enum": ["json", "graphml"]}},
         long_running=True)
def export_memory(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    if "path" not in body:
        raise Refusal(N_("path must name a file"))
    writers = {"json": exchange.export_json, "graphml": exchange.export_graphml}
    path = body["path"]
    try:
        return writers[body.get("format", "json")](backend.need_store(), path)
    except OSError as error:
        raise Refusal(N_("cannot write {path}: {error}"), ErrorCode.INVALID, path=path,
                      error=error.strerror) from None


@handles(PacketType.IMPORT_MEMORY, {"path": NAME}, long_running=True)
def import_memory(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    """Progress arrives as "import" events with `phase` and `done` (0 to 1); CANCEL
    stops it with nothing changed."""
    if "path" not in body:
        raise Refusal(N_("path must name a file"))
    progress, shown = backend.progress, {"phase": "", "done": -1.0}

    def report(phase: str, done: float) -> None:
        if phase != shown["phase"] or done - shown["done"] >= IMPORT_STEP:
            shown.update(phase=phase, done=done)
            progress(Event.IMPORT_PROGRESS, {"phase": phase, "done": round(done, 3)})

    return exchange.import_json(backend.need_store(), Path(body["path"]), report,
                                backend.stopped.is_set)

