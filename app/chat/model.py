"""The conversation as a list model: one row per message, streamed replies grow in place."""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt

from app.chat.memory_line import memory_line
from core.i18n import tr
from core.turn.run import no_key

MessageRole = Qt.ItemDataRole.UserRole + 1
SHOWN_AT_START = 120  # newest messages laid out at start; older ones load on scrolling up
Index = QModelIndex | QPersistentModelIndex


# Each message's own number, never reused: views key their caches on it. (Keyed on id(),
# a message made after one was removed could take the removed one's address and be drawn
# with its words: an edited message showed the exchange after the one it replaced.)
_serials = itertools.count(1)


@dataclass(eq=False)  # compared by identity
class ChatMessage:
    role: str  # user, assistant or system
    content: str
    created_at: float = field(default_factory=time.time)
    reasoning: str = ""
    error: str | None = None
    partial: bool = False
    unsent: bool = False  # a reply that failed because no model was set up yet
    streaming: bool = False
    reasoning_open: bool = False
    turn_id: str | None = None
    memory_note: str = ""  # what the turn did to the memory, under the reply
    calls: list[dict[str, Any]] | None = None  # a reply's tool calls, the note's source
    refused: list[Any] | None = None  # ...and the calls the limits refused
    undone: bool = False  # the person took back what the turn changed
    versions: list[dict[str, Any]] = field(default_factory=list)  # replies it replaced
    showing: int | None = None  # which of them is shown (None: this reply)
    latest: dict[str, Any] | None = None  # this reply, put aside while an earlier shows
    speaker: str | None = None  # who spoke, where an imported conversation names them
    branch: tuple[int, int] | None = None  # an edited message: its branch, and how many
    serial: int = field(default_factory=lambda: next(_serials))

    def position(self) -> tuple[int, int]:
        """(shown, of): which version is shown, counted from 1, and how many there are:
        of an edited message, its branches; of a regenerated reply, its replies."""
        if self.role == "user" and self.branch:
            return self.branch
        total = len(self.versions) + 1
        return (total if self.showing is None else self.showing + 1), total
    version: int = 0  # bumped on every change, so views can cache layouts per version

    @classmethod
    def from_history(cls, row: dict[str, Any]) -> ChatMessage:
        unsent = row["role"] == "assistant" and not row.get("content") \
            and row.get("error") == no_key()
        if unsent:  # said in the window's words (the protocol keeps "API Key not configured")
            row = {**row, "error": unsent_error()}
        # A reply the person stopped is partial without an error: it shows as it did
        # live, "stopped", not as a failure.
        return cls(role=row["role"], content=row.get("content") or "",
                   created_at=row.get("created_at") or time.time(),
                   reasoning=row.get("reasoning") or "", error=row.get("error"),
                   partial=bool(row.get("partial")), turn_id=row.get("turn_id"),
                   memory_note=memory_line(row.get("tool_calls"), row.get("rejected_tools"),
                                           bool(row.get("undone")))
                   if row["role"] == "assistant" else "",
                   calls=row.get("tool_calls"), refused=row.get("rejected_tools"),
                   unsent=unsent,
                   undone=bool(row.get("undone")), versions=list(row.get("versions") or []),
                   speaker=row.get("speaker"),
                   branch=tuple(row["branch"]) if row.get("branch") else None)


def speaker_of(message: ChatMessage) -> str:
    return message.speaker or (tr("You") if message.role == "user" else tr("Assistant"))


def stamp_of(message: ChatMessage) -> str:
    """The time after the speaker (with the day when not today), and what the reply is
    doing."""
    stamp = time.strftime("%H:%M", time.localtime(message.created_at))
    if time.localtime(message.created_at)[:3] != time.localtime()[:3]:
        stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(message.created_at))
    if message.streaming:
        stamp += "  · " + tr("replying…")
    elif message.partial and not message.error:
        stamp += "  · " + tr("stopped")
    return stamp


def unsent_error(keys: str = "") -> str:
    """What a reply that failed for want of a model says: where one is chosen (the notice
    above the chat: a model on this computer, or an API key), "API key" as everywhere
    else in the window."""
    return tr("No model yet: choose one in the notice above (on this computer, or an API "
              "key; Settings: {keys}); this message can be sent then", keys=keys) if keys \
        else tr("No model yet: choose one in the notice above (on this computer, or an API "
                "key); this message can be sent then")


def spoken(message: ChatMessage) -> str:
    """The message as a screen reader says it: who, when, the words, and what went wrong
    or what the memory did."""
    parts = [f"{speaker_of(message)}, {stamp_of(message)}: {message.content}"]
    if message.error:
        parts.append(message.error)
    if message.memory_note:
        parts.append(message.memory_note)
    return " ".join(parts)


def keys_for(message: ChatMessage) -> str:
    """What the keyboard does on this message (the buttons drawn on hover are the mouse's
    way to the same)."""
    keys = [tr("Enter reads the text"), tr("Ctrl+C copies")]
    if message.turn_id and message.role == "user":
        keys.append(tr("E edits and sends again"))
    if message.turn_id and message.role == "assistant":
        keys.append(tr("R writes the reply again"))
    shown, total = message.position()
    if total > 1:
        keys.append(tr("Left and Right show the other versions ({shown} of {total})",
                       shown=shown, total=total))
    if message.turn_id:
        keys.append(tr("Delete removes the exchange"))
    keys.append(tr("the menu key shows more"))
    return "; ".join(keys)


class ChatModel(QAbstractListModel):
    """The newest messages are rows; older ones wait in `older` until the person scrolls up,
    so a long history costs no layout work until it is looked at."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.messages: list[ChatMessage] = []
        self.older: list[ChatMessage] = []

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.messages)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self.messages):
            return None
        message = self.messages[index.row()]
        if role == MessageRole:
            return message
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return spoken(message)
        if role == Qt.ItemDataRole.AccessibleDescriptionRole:
            return keys_for(message)
        if role == Qt.ItemDataRole.DisplayRole:
            if message.role == "user":
                return tr("You: {message}", message=message.content)
            return tr("Assistant: {message}", message=message.content)
        return None

    def reset(self, rows: list[dict[str, Any]]) -> None:
        """Show a saved history (GET_HISTORY), replacing what is shown."""
        shown = [ChatMessage.from_history(r) for r in rows
                 if r.get("role") in ("user", "assistant")]
        self.beginResetModel()
        self.older, self.messages = shown[:-SHOWN_AT_START], shown[-SHOWN_AT_START:]
        self.endResetModel()

    def load_older(self, count: int) -> int:
        """Prepend up to `count` older messages; answers how many came."""
        chunk = self.older[-count:] if count > 0 else []
        if not chunk:
            return 0
        self.beginInsertRows(QModelIndex(), 0, len(chunk) - 1)
        self.older = self.older[: len(self.older) - len(chunk)]
        self.messages = chunk + self.messages
        self.endInsertRows()
        return len(chunk)

    def append(self, message: ChatMessage) -> int:
        row = len(self.messages)
        self.beginInsertRows(QModelIndex(), row, row)
        self.messages.append(message)
        self.endInsertRows()
        return row

    def newest_turn(self) -> str | None:
        return next((m.turn_id for m in reversed(self.messages) if m.turn_id), None)

    def rows_of(self, turn_id: str) -> list[int]:
        return [i for i, m in enumerate(self.messages) if m.turn_id == turn_id]

    def remove_rows(self, rows: list[int]) -> None:
        for row in sorted(rows, reverse=True):
            self.beginRemoveRows(QModelIndex(), row, row)
            del self.messages[row]
            self.endRemoveRows()

    def remove_from(self, row: int) -> None:
        """Drop `row` and every row after it (a turn that is replaced)."""
        if 0 <= row < len(self.messages):
            self.beginRemoveRows(QModelIndex(), row, len(self.messages) - 1)
            del self.messages[row:]
            self.endRemoveRows()

    def last(self) -> ChatMessage | None:
        return self.messages[-1] if self.messages else None

    def streaming_row(self) -> int | None:
        last = self.last()
        return len(self.messages) - 1 if last is not None and last.streaming else None

    def change(self, row: int, **changes: Any) -> None:
        """Update one message's fields and tell the views."""
        message = self.messages[row]
        for name, value in changes.items():
            setattr(message, name, value)
        message.version += 1
        index = self.index(row)
        self.dataChanged.emit(index, index)

    def show_version(self, row: int, step: int) -> None:
        """Show the reply before (-1) or after (+1) the one shown: earlier versions are
        for looking back; the newest is the one the conversation goes on from."""
        message = self.messages[row]
        shown, total = message.position()
        wanted = min(max(shown - 1 + step, 0), total - 1)
        if wanted == shown - 1 or message.streaming:
            return
        if message.showing is None:
            message.latest = {"content": message.content, "memory_note": message.memory_note}
        if wanted == total - 1:
            self.change(row, showing=None, **(message.latest or {}))
            return
        self.change(row, showing=wanted, content=message.versions[wanted]["content"],
                    memory_note=tr("an earlier reply: what it wrote to the memory was taken "
                                   "back"))

    def extend_text(self, row: int, delta: str, *, reasoning: bool = False) -> None:
        message = self.messages[row]
        if reasoning:
            self.change(row, reasoning=message.reasoning + delta)
        else:
            self.change(row, content=message.content + delta)

    def last_reply(self) -> ChatMessage | None:
        return next((m for m in reversed(self.messages)
                     if m.role == "assistant" and m.content), None)
