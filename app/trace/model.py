"""Every turn's tool calls as an append-only tree: turns at the top, their calls below.

Rows are only ever added (or the last call of the running turn updated in place), so views
and the filter proxy keep their place while a turn streams in.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt

from core import i18n
from core.errors import ErrorCode
from core.i18n import N_, tr

Index = QModelIndex | QPersistentModelIndex
DetailRole = Qt.ItemDataRole.UserRole + 1
COLUMNS = (N_("Tool"), N_("Arguments"), N_("Result"), N_("Time"))
SHORT = 160  # characters of a result shown in the row; the detail pane shows all of it


@dataclass
class TraceCall:
    name: str
    arguments: Any
    result: str | None = None
    duration_ms: float | None = None
    rejected: str | None = None  # the limiter's reason (what the model read, in English)
    why: str = "other"  # …and why in one word, said in the person's language
    waiting: int | None = None  # the approval it waits on (over the budget)
    approval: str = "pending"  # …and how that ended: allowed, denied, failed
    outcome: str | None = None  # what the allowed call did, or why it failed
    counts: dict[str, int] | None = None  # what it made, reinforced or read (said in words)

    @property
    def arguments_text(self) -> str:
        if isinstance(self.arguments, str):
            try:
                self.arguments = json.loads(self.arguments or "{}")
            except ValueError:
                return self.arguments
        return json.dumps(self.arguments, ensure_ascii=False)

    def detail(self) -> str:
        try:
            pretty = json.dumps(self.arguments if not isinstance(self.arguments, str)
                                else json.loads(self.arguments or "{}"),
                                ensure_ascii=False, indent=2)
        except ValueError:
            pretty = str(self.arguments)
        lines = [f"{self.name}" + (f"  ({self.duration_ms:.1f} ms)"
                                   if self.duration_ms is not None else ""),
                 "", tr("Arguments:"), pretty, ""]
        if self.waiting is not None:
            lines += [self.waiting_text()]
        elif self.rejected:
            lines += [tr("Rejected:"), self.rejected]
        else:
            lines += [tr("Result:"), self.result if self.result is not None
                      else tr("(running…)")]
        return "\n".join(lines)

    def waiting_text(self) -> str:
        """A call over the budget, as the person reads it: not a failure, a question."""
        if self.approval == "allowed":
            return tr("allowed by you: {outcome}", outcome=self.outcome or "")
        if self.approval == "denied":
            return tr("denied by you: nothing was changed")
        if self.approval == "failed":
            return tr("not run: {reason}", reason=self.outcome or "")
        return tr("waiting for you: Allow or Deny it above the message box")


# A finished call's result in the person's language, from its counts (the model's own
# text, in English, stays in the tooltip: it is what the model read).
SAID = {"memory_commit": N_("remembered {created}, reinforced {reinforced}"),
        "memory_recall": N_("recalled {rows}"), "memory_query_archived": N_("found {rows}"),
        "memory_purge": N_("forgot {rows}")}


REFUSED = {"limit": N_("refused: this turn's limit for such calls was reached"),
           "budget": N_("refused: it would remove more than a turn may"),
           "repeat": N_("refused: the same call again"),
           "not_offered": N_("refused: that tool was not offered this turn")}


def refused_words(call: TraceCall) -> str:
    """Why a call was refused, in the person's language (the model's English reason is in
    the tooltip)."""
    said = REFUSED.get(call.why)
    return i18n.tr(said) if said else tr("rejected: {reason}", reason=call.rejected)


def said_in_words(call: TraceCall) -> str | None:
    template = SAID.get(call.name)
    counts = call.counts or {}
    if template is None or not counts or (call.name == "memory_commit" and "created" not in
                                           counts):
        return None
    return i18n.tr(template, created=counts.get("created", 0),
                   reinforced=counts.get("reinforced", 0), rows=counts.get("rows", 0))


@dataclass
class TraceTurn:
    message: str
    started_at: float = field(default_factory=time.time)
    calls: list[TraceCall] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    round_trips: int | None = None
    error: str | None = None
    running: bool = True
    turn_id: str | None = None
    app: str | None = None  # another app's change over MCP, not a turn of this chat
    undone: bool = False  # the person took back what it changed

    def heading(self) -> str:
        """Time and summary first, so a narrow dock still shows what matters."""
        stamp = time.strftime("%H:%M:%S", time.localtime(self.started_at))
        if self.app and len(self.calls) > 1:  # one sync's changes from another device
            return f"{stamp} · {self.app} · " + tr("{count} changes", count=len(self.calls))
        if self.app:
            return f"{stamp} · {self.app} · {self.calls[0].result if self.calls else ''}"
        text = " ".join(self.message.split())
        undone = f" · {tr('taken back')}" if self.undone else ""
        return (f"{stamp} · {self.summary()}{undone}  —  {text[:80]}"
                f"{'…' if len(text) > 80 else ''}")

    def summary(self) -> str:
        rejected = sum(1 for c in self.calls if c.rejected)
        made = len(self.calls) - rejected
        parts = [tr("1 call") if made == 1 else tr("{count} calls", count=made)]
        if rejected:
            parts.append(tr("{count} rejected", count=rejected))
        if self.round_trips is not None:
            parts.append(tr("1 round trip") if self.round_trips == 1
                         else tr("{count} round trips", count=self.round_trips))
        if self.usage.get("total_tokens"):
            parts.append(tr("{count} tokens", count=f"{self.usage['total_tokens']:,}"))
        if self.running:
            parts.append(tr("running…"))
        if self.error:
            parts.append(tr("error: {error}", error=self.error))
        return " · ".join(parts)

    def detail(self) -> str:
        usage = ", ".join(f"{k} {v:,}" for k, v in _flat(self.usage) if k.split(".")[0]
                          != "recall") or tr("not reported")
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.started_at))
        if self.app:
            return "\n".join([tr("Change at {stamp} by {app}", stamp=stamp, app=self.message),
                              *(f"{c.name}: {c.result}" for c in self.calls),
                              tr("It waits in Review (Memory tab), where you can keep or undo "
                                 "it.")])
        return "\n".join([tr("Turn at {stamp}", stamp=stamp),
                          tr("Message: {message}", message=self.message),
                          tr("Summary: {summary}", summary=self.summary()),
                          tr("Usage: {usage}", usage=usage), *self._recalled()])

    def _recalled(self) -> list[str]:
        """What the memory had before the model for the message (`usage["recall"]`). In a
        conversation that goes on, lines recalled for an earlier message and still in front
        of the model are counted too: it is what the model had, not what this message
        added."""
        shown = self.usage.get("recall")
        if not isinstance(shown, dict) or not isinstance(shown.get("budget"), int):
            return []
        facts, turns = shown.get("facts", 0), shown.get("turns", 0)
        line = tr("Recalled: {memories}, {messages}: {tokens} of {budget} tokens",
                  memories=tr("1 memory") if facts == 1 else tr("{count} memories",
                                                                  count=facts),
                  messages=tr("1 earlier message") if turns == 1 else tr(
                      "{count} earlier messages", count=turns),
                  tokens=shown.get("tokens", 0), budget=shown["budget"])
        if isinstance(shown.get("reads_per_second"), int):
            line += tr(" (this model reads about {rate} tokens a second here, and is shown "
                       "what it reads in a few seconds)", rate=shown["reads_per_second"])
        return [line]


class TraceModel(QAbstractItemModel):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.turns: list[TraceTurn] = []

    # -- structure: internalId 0 is a turn, n > 0 a call of turn n - 1 ----------------------

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        if not self.hasIndex(row, column, parent):
            return QModelIndex()
        if not parent.isValid():
            return self.createIndex(row, column, 0)
        return self.createIndex(row, column, parent.row() + 1)

    def parent(self, child: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        if not child.isValid() or child.internalId() == 0:
            return QModelIndex()
        return self.createIndex(child.internalId() - 1, 0, 0)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        if not parent.isValid():
            return len(self.turns)
        if parent.internalId() == 0 and parent.column() == 0:
            return len(self.turns[parent.row()].calls)
        return 0

    def columnCount(self, _parent: Index = QModelIndex()) -> int:  # noqa: B008
        return len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return i18n.tr(COLUMNS[section])
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        if index.internalId() == 0:
            turn = self.turns[index.row()]
            if role == DetailRole:
                return turn.detail()
            if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
                # a turn's row spans the columns in the view: all its text sits in the first
                return turn.heading() if index.column() == 0 else ""
            return None
        call = self.turns[index.internalId() - 1].calls[index.row()]
        if role == DetailRole:
            return call.detail()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._call_cells(call)[index.column()]
        if role == Qt.ItemDataRole.ToolTipRole:
            return call.detail()
        return None

    @staticmethod
    def _call_cells(call: TraceCall) -> tuple[str, str, str, str]:
        if call.waiting is not None:
            result = call.waiting_text()
        elif call.result is not None and (said := said_in_words(call)) is not None:
            result = said
        elif call.rejected:
            result = refused_words(call)
        elif call.result is None:
            result = tr("running…")
        else:
            result = " ".join(call.result.split())
        result = result if len(result) <= SHORT else result[: SHORT - 1] + "…"
        name = f"✕ {call.name}" if call.rejected else call.name
        took = f"{call.duration_ms:.0f} ms" if call.duration_ms is not None else ""
        return name, call.arguments_text, result, took

    def turn_id_at(self, index: QModelIndex) -> str | None:
        """The turn of a turn row or of one of its calls."""
        if not index.isValid():
            return None
        row = index.row() if index.internalId() == 0 else index.internalId() - 1
        return self.turns[row].turn_id if 0 <= row < len(self.turns) else None

    # -- appending ------------------------------------------------------------------------

    def begin_turn(self, message: str, started_at: float | None = None) -> None:
        row = len(self.turns)
        self.beginInsertRows(QModelIndex(), row, row)
        self.turns.append(TraceTurn(message, started_at or time.time()))
        self.endInsertRows()

    def _turn_changed(self) -> None:
        row = len(self.turns) - 1
        self.dataChanged.emit(self.index(row, 0), self.index(row, len(COLUMNS) - 1))

    def _append_call(self, call: TraceCall) -> None:
        if not self.turns:
            self.begin_turn(tr("(turn)"))
        turn_row = len(self.turns) - 1
        calls = self.turns[turn_row].calls
        self.beginInsertRows(self.index(turn_row, 0), len(calls), len(calls))
        calls.append(call)
        self.endInsertRows()
        self._turn_changed()

    def call_started(self, name: str, arguments: Any) -> None:
        self._append_call(TraceCall(name, arguments))

    def _running_call(self, name: str) -> tuple[int, TraceCall] | None:
        if not self.turns:
            return None
        calls = self.turns[-1].calls
        for row in range(len(calls) - 1, -1, -1):
            if calls[row].name == name and calls[row].result is None:
                return row, calls[row]
        return None

    def call_finished(self, record: dict[str, Any]) -> None:
        found = self._running_call(record["name"])
        if found is None:
            self._append_call(TraceCall(record["name"], record.get("arguments"),
                                        record.get("result"), record.get("duration_ms")))
            return
        row, call = found
        call.arguments = record.get("arguments", call.arguments)
        call.result, call.duration_ms = record.get("result", ""), record.get("duration_ms")
        call.waiting = record.get("waiting")
        call.counts = record.get("counts")
        self._call_changed(row)

    def mark_undone(self, turn_ids: set[str]) -> None:
        for row, turn in enumerate(self.turns):
            if turn.turn_id in turn_ids and not turn.undone:
                turn.undone = True
                self.dataChanged.emit(self.index(row, 0), self.index(row, len(COLUMNS) - 1))

    def approval_settled(self, request: dict[str, Any]) -> None:
        """The person decided a call that waited: its entry says how it ended."""
        for t, turn in enumerate(self.turns):
            for row, call in enumerate(turn.calls):
                if call.waiting == request["id"]:
                    call.approval, call.outcome = request["state"], request.get("outcome")
                    parent = self.index(t, 0)
                    self.dataChanged.emit(self.index(row, 0, parent),
                                          self.index(row, len(COLUMNS) - 1, parent))

    def call_rejected(self, name: str, reason: str, why: str = "other") -> None:
        found = self._running_call(name)
        if found is None:
            self._append_call(TraceCall(name, {}, rejected=reason, why=why))
            return
        row, call = found
        call.rejected, call.why = reason, why
        self._call_changed(row)

    def _call_changed(self, row: int) -> None:
        parent = self.index(len(self.turns) - 1, 0)
        self.dataChanged.emit(self.index(row, 0, parent),
                              self.index(row, len(COLUMNS) - 1, parent))
        self._turn_changed()

    def set_usage(self, usage: dict[str, Any]) -> None:
        if self.turns:
            self.turns[-1].usage = dict(usage)
            self._turn_changed()

    def memory_changed(self, event: dict[str, Any]) -> None:
        """Another app's change (its actor is "mcp:<app>") gets an entry; the model's own
        changes are in their turn's calls already."""
        actor = event.get("actor") or ""
        if event.get("device_name"):
            self.synced_change(event["device_name"], event.get("tool", ""),
                               event.get("summary", ""), event.get("arguments"))
        elif actor.startswith("mcp:"):
            self.outside_change(actor[4:], event.get("tool", ""), event.get("summary", ""),
                                event.get("arguments"))

    def synced_change(self, device: str, tool: str, summary: str,
                      arguments: Any = None) -> None:
        """A change made on another device that arrived by sync: the changes of one sync
        from one device gather under one entry."""
        title = tr("From your device “{device}” (sync)", device=device)
        last = next((t for t in reversed(self.turns) if not t.running), None)
        if last is not None and last.message == title and last is self.turns[-1]:
            row = len(self.turns) - 1
            parent = self.index(row, 0)
            self.beginInsertRows(parent, len(last.calls), len(last.calls))
            last.calls.append(TraceCall(tool, arguments, result=summary or tool))
            self.endInsertRows()
            self.dataChanged.emit(parent, parent.siblingAtColumn(len(COLUMNS) - 1))
            return
        self.outside_change(device, tool, summary, arguments, title=title)

    def outside_change(self, app: str, tool: str, summary: str, arguments: Any = None,
                       title: str | None = None) -> None:
        """A change another app made over MCP: a finished entry of its own, kept before a
        turn that is still running so that turn stays the last."""
        entry = TraceTurn(title or tr("{app}, another app using your memory", app=app),
                          running=False,
                          calls=[TraceCall(tool, arguments, result=summary or tool)],
                          app=app)
        row = len(self.turns) - 1 if self.turns and self.turns[-1].running \
            else len(self.turns)
        self.beginInsertRows(QModelIndex(), row, row)
        self.turns.insert(row, entry)
        self.endInsertRows()

    def end_turn(self, answer: dict[str, Any]) -> None:
        """The turn's answer settles the record: the backend's list is the truth."""
        if not self.turns:
            return
        turn = self.turns[-1]
        turn.running = False
        stopped = answer.get("code") == ErrorCode.CANCELLED
        turn.error = None if answer.get("success") else (
            tr("stopped by you") if stopped else answer.get("error"))
        turn.round_trips = answer.get("round_trips", turn.round_trips)
        turn.usage = answer.get("usage") or turn.usage
        turn.turn_id = answer.get("turn_id") or turn.turn_id
        for call in turn.calls:
            if call.result is None and call.rejected is None:
                call.result = tr("(stopped before it finished)")
        self._turn_changed()

    def add_written(self, written: dict[str, Any]) -> None:
        """What the memory-writing step did after a reply went out, added to that turn's
        entry (MEMORY_WRITTEN)."""
        for t, turn in enumerate(self.turns):
            if turn.turn_id != written.get("turn_id"):
                continue
            whys = written.get("refused_why") or []
            added = [TraceCall(c.get("name", "?"), c.get("arguments"), c.get("result"),
                               c.get("duration_ms"), waiting=c.get("waiting"),
                               counts=c.get("counts"))
                     for c in written.get("tool_calls") or []]
            added += [TraceCall(r[0], {}, rejected=r[1], why=whys[n] if n < len(whys)
                                else "other")
                      for n, r in enumerate(written.get("rejected_tools") or [])]
            if added:
                parent = self.index(t, 0)
                self.beginInsertRows(parent, len(turn.calls), len(turn.calls) + len(added) - 1)
                turn.calls += added
                self.endInsertRows()
                self.dataChanged.emit(parent, self.index(t, len(COLUMNS) - 1))
            return

    def load_history(self, messages: list[dict[str, Any]]) -> None:
        """Rebuild past turns from the saved history (their calls, rejections and usage)."""
        self.beginResetModel()
        self.turns = []
        pending: TraceTurn | None = None
        for message in messages:
            if message.get("role") == "user":
                pending = TraceTurn(message.get("content") or "",
                                    message.get("created_at") or time.time(), running=False)
                continue
            if message.get("role") != "assistant" or pending is None:
                continue
            pending.calls = [TraceCall(c.get("name", "?"), c.get("arguments"), c.get("result"),
                                       c.get("duration_ms"), waiting=c.get("waiting"),
                                       approval=c.get("approval") or "pending",
                                       outcome=c.get("outcome"), counts=c.get("counts"))
                             for c in message.get("tool_calls") or []]
            whys = message.get("refused_why") or []
            pending.calls += [TraceCall(r[0], {}, rejected=r[1],
                                        why=whys[n] if n < len(whys) else "other")
                              for n, r in enumerate(message.get("rejected_tools") or [])]
            pending.usage = message.get("usage") or {}
            pending.round_trips = message.get("round_trips")
            pending.error = message.get("error")
            pending.turn_id = message.get("turn_id")
            pending.undone = bool(message.get("undone"))
            if pending.calls or pending.usage:
                self.turns.append(pending)
            pending = None
        self.endResetModel()


def _flat(usage: dict[str, Any], prefix: str = "") -> list[tuple[str, int]]:
    """Token counts with the nested ones named by their path
    ("prompt_tokens_details.cached_tokens")."""
    counts: list[tuple[str, int]] = []
    for key, value in usage.items():
        if isinstance(value, dict):
            counts += _flat(value, f"{prefix}{key}.")
        elif isinstance(value, int) and not isinstance(value, bool):
            counts.append((prefix + key, value))
    return counts
