"""Conversations: listing, switching, creating, renaming, deleting, restoring, searching
and exporting. The memory is the same in all of them; `backend.conversation_id` is the
one shown."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import ErrorCode
from core.i18n import N_
from core.protocol.handlers.table import NAME, WHOLE, Refusal, handles
from core.protocol.handlers.turns import shown_messages
from core.protocol.packets import PacketType
from core.store import conversations, exchange
from core.turn.snapshot import glance

if TYPE_CHECKING:
    from core.protocol.backend_interface import HandlerBackend

WHICH = {"conversation_id": {}}


def _conversation(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    return conversations.get(backend.need_store(), body.get("conversation_id"))


@handles(PacketType.LIST_CONVERSATIONS, {"deleted": {}}, reads=True)
def list_conversations(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    history = backend.history()
    return {"conversations": conversations.listing(history.store, bool(body.get("deleted"))),
            "current": history.conversation_id}


@handles(PacketType.NEW_CONVERSATION, {})
def new_conversation(backend: HandlerBackend, _body: dict[str, Any]) -> dict[str, Any]:
    """A fresh conversation, shown from now on; the memory comes along."""
    history = backend.history()
    store = history.store
    if history.messages(limit=1):  # an empty new chat is reused, not piled up
        backend.show_conversation(conversations.create(store))
    return {"conversation": conversations.get(store, backend.conversation_id),
            "remembered": glance(store)}


@handles(PacketType.OPEN_CONVERSATION, {**WHICH, "turn_id": NAME})
def open_conversation(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    """The conversation `conversation_id`, or the one holding the turn `turn_id` (the
    message a memory came from)."""
    if "turn_id" in body and "conversation_id" not in body:
        found = conversations.holding_turn(backend.need_store(), body["turn_id"])
        if found is None:
            raise Refusal(N_("that message is no longer in any conversation (it was "
                             "deleted)"), ErrorCode.NOT_FOUND)
        body = {"conversation_id": found}
    conversation = _conversation(backend, body)
    if conversation["deleted_at"] is not None:
        raise Refusal(N_("that conversation is deleted; restore it first"),
                      ErrorCode.CONFLICT)
    backend.show_conversation(conversation["id"])
    history = backend.history()
    return {"conversation": conversation, "history": shown_messages(history),
            "remembered": glance(history.store)}


@handles(PacketType.RENAME_CONVERSATION, {**WHICH, "title": {}})
def rename_conversation(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    return {"conversation": conversations.rename(
        backend.need_store(), _conversation(backend, body)["id"], body.get("title"))}


@handles(PacketType.DELETE_CONVERSATION, WHICH)
def delete_conversation(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    """Deleted softly: RESTORE_CONVERSATION brings it back. Deleting the one shown
    shows the one used last (or a new one)."""
    conversation = _conversation(backend, body)
    conversations.set_deleted(backend.need_store(), conversation["id"], True)
    if conversation["id"] == backend.conversation_id:
        backend.show_conversation(None)
    return {"current": backend.history().conversation_id}


@handles(PacketType.RESTORE_CONVERSATION, WHICH)
def restore_conversation(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    conversation = _conversation(backend, body)
    conversations.set_deleted(backend.need_store(), conversation["id"], False)
    return {"conversation": conversations.get(backend.need_store(), conversation["id"])}


@handles(PacketType.SEARCH_CONVERSATIONS, {"query": {"type": "string", "pattern": r"\S"}},
         reads=True)
def search_conversations(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    if "query" not in body:
        raise Refusal(N_("query must be text to look for"))
    return {"results": conversations.search(backend.need_store(), body["query"])}


@handles(PacketType.EXPORT_CONVERSATION, {"conversation_id": WHOLE, "path": NAME},
         long_running=True)
def export_conversation(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    """The conversation as Markdown; with `path`, written there too."""
    store = backend.need_store()
    conversation_id = body.get("conversation_id", backend.history().conversation_id)
    text = conversations.markdown(store, conversation_id)
    path = body.get("path")
    if path is None:
        return {"markdown": text}
    try:
        size = exchange.write_text_atomically(Path(path), text)
    except OSError as error:
        raise Refusal(N_("cannot write {path}: {error}"), ErrorCode.INVALID, path=path,
                      error=error.strerror) from None
    return {"path": path, "bytes": size, "markdown": text}
