"""A turn of the conversation, and what the person does with turns afterwards."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.errors import ErrorCode
from core.i18n import N_
from core.models import local
from core.protocol.handlers.table import NAME, Refusal, handles
from core.protocol.packets import PacketType
from core.store import branches, browse, conversations, describe
from core.store.history import History
from core.tools import approvals
from core.turn.run import Turn, TurnRefused
from core.turn.snapshot import glance

if TYPE_CHECKING:
    from core.protocol.backend_interface import HandlerBackend

SHOWN_CHARS = 200_000  # of one message, as the window loads the history


@handles(PacketType.PROCESS_MESSAGE, {"user_input": {}, "replaces_turn": {}}, long_running=True)
def process_message(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    """One turn of the shown conversation (see `core.turn.run`); its events arrive on
    the packet's progress channel."""
    if backend.session is None and local.is_own(backend.config.base_url):
        backend.make_session()  # its model may have been fetched since the last try
    turn = Turn(backend.need_store(), backend.history(), backend.session, backend.config,
                backend.limiter, progress=backend.progress,
                can_ask_person=backend.can_ask_person,
                answer_first=backend.write_memory_after_answer)
    try:
        answer = turn.run(body.get("user_input"), body.get("replaces_turn"))
        backend.work.after_answer(turn.follow_up)  # run by the host once the answer is out
        return answer
    except TurnRefused as refusal:
        if refusal.code == ErrorCode.NO_KEY and backend.settings.warning:
            # a key was given and refused (a character a header cannot carry…): say why
            raise Refusal(N_("API Key not configured: {why}"), refusal.code, refusal.data,
                          why=backend.settings.warning) from None
        raise Refusal(refusal.template, refusal.code, refusal.data,
                      **refusal.params) from None


@handles(PacketType.UNDO_TURN, {"turn_id": NAME}, long_running=True)
def undo_turn(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    """Take back every memory change one turn made (its approved calls included); without
    a turn_id, the newest turn that still has changes to take back."""
    store = backend.need_store()
    turn_id = body.get("turn_id") or browse.last_undoable_turn(store)
    if turn_id is None:
        raise Refusal(N_("no turn has memory changes left to undo"), ErrorCode.NOTHING_TO_DO)
    change_id, undone = store.undo_turn(turn_id)
    expired = approvals.expire_turn(store, turn_id)
    kept = store.kept_by_undo(change_id)
    return {"change_id": change_id, "undone": undone, "turn_id": turn_id,
            "expired_approvals": expired, "kept": kept,
            "kept_message": describe.kept_words(kept)}


@handles(PacketType.DELETE_TURN, {"turn_id": NAME}, long_running=True)
def delete_turn(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    """Remove one exchange from the conversation, so the model no longer sees it; it is
    kept, marked, for RESTORE_TURN. The memory keeps what it learned (Undo this turn
    takes that back)."""
    if "turn_id" not in body:
        raise Refusal(N_("turn_id must name a turn"))
    removed = backend.history().hide_turn(body["turn_id"], True)
    if not removed:
        raise Refusal(N_("that exchange is not in the conversation"), ErrorCode.NOT_FOUND)
    return {"removed": removed}


@handles(PacketType.RESTORE_TURN, {"turn_id": NAME}, long_running=True)
def restore_turn(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    """Bring a deleted exchange back where it was in its conversation."""
    if "turn_id" not in body:
        raise Refusal(N_("turn_id must name a turn"))
    restored = backend.history().hide_turn(body["turn_id"], False)
    if not restored:
        raise Refusal(N_("no deleted exchange of this conversation has that turn"),
                      ErrorCode.NOT_FOUND)
    return {"restored": restored}


@handles(PacketType.SWITCH_BRANCH, {"turn_id": NAME, "step": {"enum": [-1, 1]}},
         long_running=True)
def switch_branch(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    """Show the branch before (-1) or after (+1) the one an edited message starts; the
    memory follows the branch shown. Answers the conversation as now shown."""
    if "turn_id" not in body or "step" not in body:
        raise Refusal(N_("turn_id must name an edited message and step be -1 or 1"))
    history = backend.history()
    moved = branches.switch(backend.need_store(), history, body["turn_id"], body["step"])
    return {**moved, "history": shown_messages(history)}


@handles(PacketType.TURN_TOUCHED, {"turn_id": NAME}, reads=True)
def turn_touched(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    """The nodes and edges one turn changed (the chat's memory line opens them)."""
    if "turn_id" not in body:
        raise Refusal(N_("turn_id must name a turn"))
    return browse.turn_touched(backend.need_store(), body["turn_id"])


def shown_messages(history: History) -> list[dict[str, Any]]:
    """The conversation's messages as the window shows them: who spoke, how each waited
    call ended, which replies' memory changes were taken back, and where an edited
    message has other branches (‹ 1/2 ›)."""
    messages = conversations.with_speakers(history.store, history.conversation_id,
                                           history.messages(cap=SHOWN_CHARS))
    _with_approvals(history.store, messages)
    _with_undone(history.store, messages)
    where = branches.positions(history.store, history.conversation_id)
    for message in messages:
        if message["role"] == "user" and message.get("turn_id") in where:
            message["branch"] = where[message["turn_id"]]
    return messages


@handles(PacketType.GET_HISTORY, {}, reads=True)
def get_history(backend: HandlerBackend, _body: dict[str, Any]) -> dict[str, Any]:
    history = backend.history()
    messages = shown_messages(history)
    answer = {"history": messages, "conversation_id": history.conversation_id}
    if not messages and not history.legacy:
        answer["remembered"] = glance(history.store)  # what an empty chat shows
    return answer


@handles(PacketType.SAVE_HISTORY, {"messages": {}})
def save_history(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    try:
        backend.history().replace(body.get("messages"))
    except ValueError as error:
        raise Refusal(str(error)) from None
    return {"status": "history_saved"}


@handles(PacketType.CANCEL, {})
def cancel(backend: HandlerBackend, _body: dict[str, Any]) -> dict[str, Any]:
    backend.cancel()
    return {"status": "cancelled"}


@handles(PacketType.SHUTDOWN, {})
def shutdown(backend: HandlerBackend, _body: dict[str, Any]) -> dict[str, Any]:
    backend.close()
    return {"status": "shutdown"}


def _with_undone(store: Any, messages: list[dict[str, Any]]) -> None:
    """A reply whose turn's memory changes were all taken back says so."""
    turns = list({m["turn_id"] for m in messages if m["role"] == "assistant" and
                  m.get("turn_id") and m.get("tool_calls")})
    if not turns:
        return
    undone = {row["turn_id"] for row in store.query(
        f"SELECT turn_id FROM change_log WHERE turn_id IN ({', '.join('?' * len(turns))})"
        " AND undo_of IS NULL AND tool NOT IN ('undo', 'undo_turn', 'redo')"
        " GROUP BY turn_id HAVING count(undone_by) = count(*)", turns)}
    for message in messages:
        if message["role"] == "assistant" and message.get("turn_id") in undone:
            message["undone"] = True


def _with_approvals(store: Any, messages: list[dict[str, Any]]) -> None:
    """A call that waited for the person carries how it ended: allowed, denied, failed,
    or still pending."""
    waiting = [call for m in messages for call in m.get("tool_calls") or []
               if isinstance(call, dict) and isinstance(call.get("waiting"), int)]
    decided = approvals.states(store, [call["waiting"] for call in waiting])
    for call in waiting:
        row = decided.get(call["waiting"])
        call["approval"] = row["state"] if row else "failed"
        call["outcome"] = row["outcome"] if row else None
