"""Past conversations: keep an export's conversations, build the memory from them
between packets (chat goes on meanwhile), stop, list, and take an import back."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import ErrorCode
from core.events import Event
from core.history_import import building, saving
from core.i18n import N_
from core.protocol.handlers.table import NAME, WHOLE, Refusal, handles
from core.protocol.packets import PacketType
from core.turn.run import no_key

if TYPE_CHECKING:
    from core.protocol.backend_interface import HandlerBackend

REPORT_EVERY = 50  # conversations read between progress events


@handles(PacketType.IMPORT_HISTORY, {"path": NAME}, long_running=True)
def import_history(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    """Read the export and keep its conversations, all or none; nothing is sent to a
    model. Answers what was added and what building the memory would send (`estimate`).
    CANCEL stops the reading with nothing kept."""
    if "path" not in body:
        raise Refusal(N_("path must name a file"))
    store, progress = backend.need_store(), backend.progress

    def report(conversations: int, messages: int) -> None:
        if conversations % REPORT_EVERY == 0:
            progress(Event.HISTORY_IMPORT, {"phase": "reading", "conversations":
                                            conversations, "messages": messages})

    kept = saving.keep(store, Path(body["path"]), report=report,
                        cancelled=backend.stopped.is_set)
    # what is left to remember: of this import, or (nothing new) of any import
    return {**kept, "estimate": building.estimate(store, backend.config, kept["import_id"])}


@handles(PacketType.BUILD_MEMORY, {"import_id": WHOLE})
def build_memory(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    """Start building the memory from the imported conversations not yet remembered (of
    one import, or all); it runs a piece at a time between packets, and tells its
    progress as "history_import" events on the backend's channel."""
    store = backend.need_store()
    if backend.session is None:
        raise Refusal(no_key(), ErrorCode.NO_KEY)
    import_id = body.get("import_id")
    estimate = building.estimate(store, backend.config, import_id)
    if not estimate["pieces"]:
        raise Refusal(N_("every imported conversation is in the memory already"),
                      ErrorCode.NOTHING_TO_DO)
    with store.conn:
        store.conn.execute("UPDATE past_imports SET building = 1 WHERE undone_at IS NULL"
                           + (" AND id = ?" if import_id else ""),
                           (import_id,) if import_id else ())
    backend.start_building(import_id)
    return estimate


@handles(PacketType.STOP_BUILDING, {})
def stop_building(backend: HandlerBackend, _body: dict[str, Any]) -> dict[str, Any]:
    """Stop once the conversation being remembered is done; what is done stays, and
    BUILD_MEMORY later goes on from there."""
    if not backend.work.stop_building():
        raise Refusal(N_("no memory is being built"), ErrorCode.NOTHING_TO_DO)
    store = backend.need_store()
    with store.conn:
        store.conn.execute("UPDATE past_imports SET building = 0")
    return {"stopping": True}


@handles(PacketType.LIST_IMPORTS, {}, reads=True)
def list_imports(backend: HandlerBackend, _body: dict[str, Any]) -> dict[str, Any]:
    """The imports, newest first, and what building the rest of the memory would send."""
    store = backend.need_store()
    if store.schema_version() < saving.PAST_SCHEMA:
        return {"imports": [], "estimate": None}
    rows = store.query("SELECT * FROM past_imports ORDER BY id DESC")
    return {"imports": rows, "estimate": building.estimate(store, backend.config)}


@handles(PacketType.UNDO_IMPORT, {"import_id": WHOLE}, long_running=True)
def undo_import(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    """Take back every fact an import made (the conversations stay), as one change."""
    import_id = body.get("import_id")
    if import_id is None:
        raise Refusal(N_("import_id must name an import"))
    store = backend.need_store()
    backend.work.drop_building(import_id)
    facts = building.standing(store, import_id)  # what the person sees go
    change_id, undone = building.undo_import(store, import_id)
    with store.conn:
        store.conn.execute("UPDATE past_imports SET building = 0, undone_at = ? WHERE id = ?",
                           (store.log_clock(), import_id))
        store.conn.execute("UPDATE conversations SET remembered_to = NULL WHERE"
                           " import_id = ?", (import_id,))
    return {"change_id": change_id, "undone": undone, "import_id": import_id,
            "facts": facts}
