"""The chat's turn life cycle: send, stream, end, stop, retry, regenerate, edit, delete.

It listens to the turn's own events (text, tool calls, usage, approvals) on the host and
keeps the chat, the trace and the Memory tab in step with the running turn; the window
only shows what it says (`state_changed`, `said`, `tokens_counted`).
"""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.actions import ActionRegistry
from app.backend_host import BackendHost
from app.chat.memory_line import changed_memory, memory_line
from app.chat.model import ChatMessage, ChatModel, unsent_error
from app.chat.pane import ChatPane
from app.chat.stream_buffer import StreamBuffer
from app.looks.access import announce
from app.trace.model import TraceModel
from core.errors import ErrorCode
from core.i18n import tr
from core.protocol.packets import PacketType


class TurnController(QObject):
    state_changed = Signal(str)  # what the turn is doing, for the status bar
    said = Signal(str, int)  # a confirmation to show for that many ms
    tokens_counted = Signal(int, int)  # the last turn's tokens, the session's
    ended = Signal()  # a turn ended (the conversation's title and place may have changed)
    model_missing = Signal()  # the endpoint does not know the model: offer the ones it has
    running_changed = Signal(bool)  # a turn started (True) or ended
    touched = Signal(object)  # what the ended turn recalled or changed, to highlight
    unsent_settled = Signal()  # messages written before a model was set up came or went

    def __init__(self, host: BackendHost, chat: ChatModel, pane: ChatPane, trace: TraceModel,
                 registry: ActionRegistry, *, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.host, self.chat, self.pane, self.trace = host, chat, pane, trace
        self.registry = registry
        self.running = False
        self.failed_text: str | None = None
        self.deleted: list[str] = []  # exchanges deleted here, newest last: Ctrl+Z brings back
        self.queued: list[str] = []  # messages written before a model was set up, to send
        self.stream = StreamBuffer(self._streamed, self)
        self.session_tokens = 0
        self.last_tokens = 0
        self._told_text_calls = False
        events = host.events
        events.text.connect(lambda data: self.stream.add("text", data["delta"]))
        events.reasoning.connect(lambda data: self.stream.add("reasoning", data["delta"]))
        events.tool_started.connect(self._live(self._tool_started))
        events.tool_finished.connect(self._live(self._flushed(trace.call_finished)))
        events.tool_rejected.connect(self._live(self._flushed(
            lambda data: trace.call_rejected(data["name"], data["reason"],
                                             data.get("why", "other")))))
        events.memory_written.connect(self._memory_written)
        events.usage.connect(self._flushed(trace.set_usage))
        events.approval_requested.connect(self._flushed(pane.approvals.add))
        events.calls_in_text.connect(self._flushed(self._calls_in_text))
        pane.send_requested.connect(self.send)
        pane.input.stop_requested.connect(self.stop)
        pane.stop_button.clicked.connect(self.stop)
        pane.view.retry_requested.connect(self.retry)
        pane.view.regenerate_requested.connect(self.regenerate)
        pane.view.edit_sent.connect(self.resend)
        pane.view.delete_turn_requested.connect(self.delete_turn)
        pane.view.branch_requested.connect(self.switch_branch)
        pane.view.restore_requested.connect(self.restore_deleted)
        pane.approvals.settled.connect(self._settled)
        events.memory_changed.connect(self._maybe_undone)

    def _flushed(self, show: Any) -> Any:
        """What streamed before a tool call shows before it."""
        def run(data: dict[str, Any]) -> None:
            self.stream.flush()
            show(data)
        return run

    @staticmethod
    def _live(show: Any) -> Any:
        """A call of the running turn; the memory-writing step's calls after a reply went
        out arrive together in MEMORY_WRITTEN (a new turn may have begun meanwhile)."""
        def run(data: dict[str, Any]) -> None:
            if not data.get("after_answer"):
                show(data)
        return run

    def _memory_written(self, data: dict[str, Any]) -> None:
        """The memory-writing step finished after its reply: the reply's line, its note
        and the turn's trace entry take in what it did."""
        self.trace.add_written(data)
        for row, message in enumerate(self.chat.messages):
            if message.role == "assistant" and message.turn_id == data.get("turn_id"):
                message.calls = [*(message.calls or []), *data.get("tool_calls", [])]
                message.refused = [*(message.refused or []),
                                   *data.get("rejected_tools", [])]
                self.chat.change(row, content=message.content + (data.get("note") or ""),
                                 calls=message.calls, refused=message.refused)
                self._note_again(row)
        if data.get("touched"):
            self.touched.emit(data["touched"])

    def _tool_started(self, data: dict[str, Any]) -> None:
        self.stream.flush()
        self.trace.call_started(data["name"], data.get("arguments"))
        self.state_changed.emit(tr("Using {tool}…", tool=data["name"]))

    def _calls_in_text(self, data: dict[str, Any]) -> None:
        if not self._told_text_calls:  # once a session: with some local models, every call
            self._told_text_calls = True
            self.said.emit(tr("The model wrote its tool call as text instead of as a call; "
                              "TrulyMEM ran it ({tools}).", tools=", ".join(data["names"])),
                           10000)

    # -- a turn ---------------------------------------------------------------------------

    def send(self, text: str, replaces_turn: str | None = None) -> None:
        """Send `text`; with `replaces_turn`, in place of that turn and every turn after
        it, whose memory changes the backend takes back first."""
        if self.running:
            self.said.emit(tr("A reply is still running: press Esc to stop it, "
                              "or wait, then send."), 5000)
            return
        if replaces_turn is None:
            self.pane.input.accept_sent(text)  # an edit leaves the draft in the box alone
        self.clear_retry()
        self.pane.view.follow_latest()  # what is sent, and its reply, are always seen
        self.pane.view.clearSelection()  # no frame left on an older message
        self.chat.append(ChatMessage("user", text))
        self.chat.append(ChatMessage("assistant", "", streaming=True))
        self.trace.begin_turn(text)
        self.running = True
        self.pane.set_running(True)
        self.running_changed.emit(True)
        self.state_changed.emit(tr("Waiting for the model…"))
        body = {"user_input": text}
        if replaces_turn:
            body["replaces_turn"] = replaces_turn
        self.host.send(PacketType.PROCESS_MESSAGE, body,
                       lambda answer: self._ended(text, answer))

    def _streamed(self, kind: str, text: str) -> None:
        row = self.chat.streaming_row()
        if row is None:
            return
        self.chat.extend_text(row, text, reasoning=kind == "reasoning")
        self.state_changed.emit(tr("Thinking…") if kind == "reasoning" else tr("Replying…"))

    def _announce(self, content: str, answer: dict[str, Any], stopped: bool) -> None:
        """A screen reader hears the finished reply (or what went wrong) without moving
        to it: the person may be typing the next message."""
        if answer["success"] and content.strip():
            announce(self.pane.view, tr("The assistant replied: {reply}", reply=content))
        elif stopped:
            announce(self.pane.view, tr("The reply was stopped."))
        elif answer.get("error"):
            announce(self.pane.view, tr("The reply failed: {error}", error=answer["error"]),
                     urgent=True)

    def _ended(self, text: str, answer: dict[str, Any]) -> None:
        self.stream.flush()
        self.running = False
        self.pane.set_running(False)
        self.trace.end_turn(answer)
        row = self.chat.streaming_row()
        stopped = answer["code"] == ErrorCode.CANCELLED  # the person's choice, no fault
        if row is not None:
            message = self.chat.messages[row]
            content = answer.get("content") or message.content  # keep what streamed in
            # stamped when it ended, as the history keeps it: after a restart a long
            # reply's time was a minute later than the one shown while it streamed
            self.chat.change(row, streaming=False, content=content or "",
                             created_at=time.time(),
                             error=None if answer["success"] or stopped else answer["error"],
                             partial=not answer["success"],
                             memory_note=memory_line(answer.get("tool_calls"),
                                                     answer.get("rejected_tools")),
                             calls=answer.get("tool_calls"),
                             refused=answer.get("rejected_tools"))
            self._announce(content, answer, stopped)
        if answer.get("turn_id"):
            for message in self.chat.messages[-2:]:
                message.turn_id = answer["turn_id"]
        if answer.get("touched"):
            self.touched.emit(answer["touched"])
        self.running_changed.emit(False)
        for request in answer.get("approvals") or []:
            self.pane.approvals.add(request)
        self._count_tokens(answer.get("usage") or {})
        # what lasts in the status bar: nothing runs now (a failure's news goes after a
        # while; "Waiting for the model…" stayed behind it)
        self.state_changed.emit(tr("Ready"))
        if stopped:
            self.state_changed.emit(tr("Stopped"))
        elif not answer["success"]:
            self.queued.clear()  # the rest waits for the person, not for a failing model
            self._failed(text, answer, row)
        self.ended.emit()
        self._send_queued()

    def _settled(self, request: dict[str, Any]) -> None:
        """A call that waited for the person ended: its reply's line and the trace say
        allowed or denied, no longer waiting."""
        self.trace.approval_settled(request)
        for row, message in enumerate(self.chat.messages):
            waited = [c for c in message.calls or [] if c.get("waiting") == request["id"]]
            for call in waited:
                call["approval"], call["outcome"] = request["state"], request.get("outcome")
            if waited:
                self._note_again(row)

    def _maybe_undone(self, event: dict[str, Any]) -> None:
        """Turns whose memory changes were taken back: their replies and trace say so."""
        turns = set(event.get("undone_turns") or ())
        if not turns:
            return
        self.trace.mark_undone(turns)
        for row, message in enumerate(self.chat.messages):
            if message.role == "assistant" and message.turn_id in turns:
                message.undone = True
                self._note_again(row)

    def _note_again(self, row: int) -> None:
        """The line under a reply, from its calls as they stand now."""
        message = self.chat.messages[row]
        self.chat.change(row, memory_note=memory_line(message.calls, message.refused,
                                                      message.undone))

    def _count_tokens(self, usage: dict[str, Any]) -> None:
        self.last_tokens = int(usage.get("total_tokens") or 0)
        self.session_tokens += self.last_tokens
        self.tokens_counted.emit(self.last_tokens, self.session_tokens)

    def _failed(self, text: str, answer: dict[str, Any], row: int | None) -> None:
        if answer["code"] == ErrorCode.NO_KEY and row is not None:
            keys = self.registry.shortcut_text("app.settings")
            self.chat.change(row, unsent=True, error=unsent_error(keys))
            self.unsent_settled.emit()
        self.failed_text = text
        if answer["code"] == ErrorCode.MODEL_NOT_FOUND:
            self.model_missing.emit()  # the message said so; here are the ones that exist
        self.registry.actions["chat.retry"].setEnabled(True)
        self.pane.view.set_retry_row(row)
        self.state_changed.emit(tr("The last message failed: Retry (Ctrl+R) sends it again"))

    def stop(self) -> None:
        if self.running:
            self.host.cancel()
            self.state_changed.emit(tr("Stopping…"))

    # -- again, differently ---------------------------------------------------------------

    def _asked(self, turn: str) -> str | None:
        """The person's message of `turn`."""
        return next((self.chat.messages[r].content for r in self.chat.rows_of(turn)
                     if self.chat.messages[r].role == "user"), None)

    def regenerate(self, turn: object = None) -> None:
        """Ask again for a reply (the newest by default), in place of it and of the
        exchanges after it; what they wrote to the memory is taken back first."""
        turn = turn if isinstance(turn, str) else self.chat.newest_turn()
        asked = None if self.running or turn is None else self._asked(turn)
        if asked is None:
            return
        wrote = any(changed_memory(m.calls) and not m.undone for m in self.chat.messages[
            min(self.chat.rows_of(turn)):])  # this exchange's and the later ones'
        self.resend(turn, asked)
        if wrote:  # said only when something was taken back
            self.said.emit(tr("Regenerating: what the old reply wrote to the "
                              "memory was taken back."), 8000)

    def resend(self, turn: str, text: str) -> None:
        """Your message of `turn`, edited (or as it was), sent in place of that exchange
        and the ones after it: the conversation goes on from there."""
        rows = self.chat.rows_of(turn)
        if self.running or not rows:
            return
        self.clear_retry()
        edited = text != self._asked(turn)
        kept = [] if edited else self._versions_of(turn)
        _shown, branches = self.chat.messages[rows[0]].position()
        self.chat.remove_from(rows[0])
        self.send(text, replaces_turn=turn)
        if kept and self.running:  # the new reply keeps the ones it replaces (as core does)
            self.chat.messages[-1].versions = kept
        if edited and self.running:  # the newest branch of the message (as core keeps it)
            self.chat.change(len(self.chat.messages) - 2,
                             branch=(branches + 1, branches + 1))

    def _versions_of(self, turn: str) -> list[dict[str, Any]]:
        reply = next((m for m in self.chat.messages if m.turn_id == turn
                      and m.role == "assistant"), None)
        if reply is None:
            return []
        current = (reply.latest or {}).get("content", reply.content) \
            if reply.showing is not None else reply.content
        return [*reply.versions, *([{"content": current, "created_at": reply.created_at}]
                                   if current else [])]

    def switch_branch(self, turn: str, step: int) -> None:
        """Show the branch before or after an edited message's; the memory follows it."""
        if self.running:
            return

        row = next(iter(self.chat.rows_of(turn)), None)

        def shown(answer: dict[str, Any]) -> None:
            if not answer["success"]:
                self.said.emit(tr("Not switched: {error}", error=answer["error"]), 10000)
                return
            data = answer["data"]
            self.show_history(data["history"])
            place = (data["shown"], data["of"])
            forks = [r for r, m in enumerate(self.chat.messages) if m.branch == place]
            if forks:  # the edited message, where it was (another fork may say the same)
                index = self.chat.index(min(forks, key=lambda r: abs(r - (row or 0))))
                self.pane.view.setCurrentIndex(index)
                self.pane.view.scrollTo(index, self.pane.view.ScrollHint.PositionAtTop)
            self.said.emit(tr("Version {shown} of {of}: the memory follows it (what the "
                              "version you left wrote to it is taken back).",
                              shown=data["shown"], of=data["of"]), 8000)

        self.host.send(PacketType.SWITCH_BRANCH, {"turn_id": turn, "step": step}, shown)

    def edit_last(self) -> None:
        """Your newest message, in a box on itself (Esc leaves it as it was)."""
        row = next((r for r in range(len(self.chat.messages) - 1, -1, -1)
                    if self.chat.messages[r].role == "user" and self.chat.messages[r].turn_id),
                   None)
        if row is not None and not self.running:
            self.pane.view.start_edit(row)

    # -- messages written before a model was set up -----------------------------------------

    def unsent(self) -> list[tuple[str, str]]:
        """(turn, text) of each message written before a model was set up, oldest first."""
        messages = self.chat.messages
        return [(reply.turn_id, messages[row - 1].content)
                for row, reply in enumerate(messages)
                if reply.unsent and reply.turn_id and row and messages[row - 1].role == "user"]

    def send_unsent(self) -> None:
        """Each of them sent now, in order, in place of its failed exchange."""
        self._put_away(then_send=True)

    def put_unsent_away(self) -> None:
        """They go: the conversation does not keep exchanges nobody answered."""
        self._put_away(then_send=False)

    def _put_away(self, then_send: bool) -> None:
        waiting = self.unsent()
        if self.running or not waiting:
            return
        left = [turn for turn, _text in waiting]

        def gone(turn: str, answer: dict[str, Any]) -> None:
            if answer["success"]:
                self.chat.remove_rows(self.chat.rows_of(turn))
            left.remove(turn)
            if not left:
                self.unsent_settled.emit()
                if then_send:
                    self.queued = [text for _turn, text in waiting]
                    self._send_queued()

        for turn, _text in waiting:
            self.host.send(PacketType.DELETE_TURN, {"turn_id": turn},
                           lambda answer, turn=turn: gone(turn, answer))

    def _send_queued(self) -> None:
        if self.queued and not self.running:
            self.send(self.queued.pop(0))

    def delete_turn(self, turn_id: str) -> None:
        if self.running:
            return

        def done(answer: dict[str, Any]) -> None:
            if answer["success"]:
                self.chat.remove_rows(self.chat.rows_of(turn_id))
                self.deleted.append(turn_id)
                self.pane.view.restorable = True
                self.said.emit(tr("Exchange deleted. Ctrl+Z in the chat brings it back; the "
                                  "memory keeps what it learned (Ctrl+Alt+Z takes that "
                                  "back)."), 10000)
            else:
                self.said.emit(tr("Not deleted: {error}", error=answer["error"]), 8000)

        self.host.send(PacketType.DELETE_TURN, {"turn_id": turn_id}, done)

    def restore_deleted(self) -> None:
        """Bring back the exchange deleted last, where it was."""
        if self.running or not self.deleted:
            return
        turn_id = self.deleted.pop()
        self.pane.view.restorable = bool(self.deleted)

        def done(answer: dict[str, Any]) -> None:
            if not answer["success"]:
                self.said.emit(tr("Not brought back: {error}", error=answer["error"]), 8000)
                return
            self.host.send(PacketType.GET_HISTORY, None, self._shown_again)
            self.said.emit(tr("Exchange brought back."), 5000)

        self.host.send(PacketType.RESTORE_TURN, {"turn_id": turn_id}, done)

    def _shown_again(self, answer: dict[str, Any]) -> None:
        if answer["success"]:
            self.chat.reset(answer["data"]["history"])

    def retry(self) -> None:
        """Send the failed message again in place of the failed turn: one user message,
        no stale error, and nothing the failed attempt wrote to the memory."""
        if not self.failed_text or self.running:
            return
        text, row = self.failed_text, self.pane.view.delegate.retry_message
        turn = row.turn_id if row is not None else None
        first = next((i for i, m in enumerate(self.chat.messages)
                      if turn and m.turn_id == turn), None)
        if first is not None:
            self.chat.remove_from(first)
        self.send(text, replaces_turn=turn)

    def clear_retry(self) -> None:
        self.failed_text = None
        self.registry.actions["chat.retry"].setEnabled(False)
        self.pane.view.set_retry_row(None)

    def show_history(self, history: list[dict[str, Any]]) -> None:
        """Show a conversation's messages (at start, or another conversation chosen)."""
        self.clear_retry()
        self.deleted.clear()
        self.pane.view.restorable = False
        self.chat.reset(history)
        self.trace.load_history(history)
        self.pane.input.sent = [m["content"] for m in history if m["role"] == "user"][-50:]
        self.pane.view.scrollToBottom()
