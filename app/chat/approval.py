"""The approval card: a call of the assistant's that would remove more memories than one
turn may, waiting in the chat for the person's Allow or Deny.

Nothing has been removed while the card is shown; only Allow runs the call, and only if
it would still remove exactly the memories listed.
"""

from __future__ import annotations

import re
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase, QPalette
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core import i18n
from core.i18n import N_, tr
from core.share.identity import claimed_name

LIST_LINES = 4  # the list's height in lines; it scrolls for the rest
# core's summary ("delete 300 memories and supersede 12 memories") is also what the model
# reads: the card says each part it knows in the chosen language
_ACTIONS = {
    "delete": (N_("delete 1 memory"), N_("delete {count} memories")),
    "supersede": (N_("supersede 1 memory"), N_("supersede {count} memories")),
    "archive": (N_("archive 1 memory"), N_("archive {count} memories")),
    "remove for good": (N_("remove for good 1 memory"),
                        N_("remove for good {count} memories")),
    "add or change": (N_("add or change 1 memory"), N_("add or change {count} memories")),
}
_PART = re.compile(r"^(.+) (\d+) memor(?:y|ies)$")


def shown_summary(summary: str) -> str:
    if summary == "change nothing":
        return tr("change nothing")
    said = []
    for part in summary.split(" and "):
        match = _PART.match(part)
        texts = _ACTIONS.get(match.group(1)) if match else None
        if match is None or texts is None:
            said.append(part)
            continue
        count = int(match.group(2))
        said.append(i18n.tr(texts[0]) if count == 1 else i18n.tr(texts[1], count=count))
    shown = said[0] if said else summary
    for part in said[1:]:
        shown = tr("{first} and {second}", first=shown, second=part)
    return shown


# What happens to each memory a request lists, in the person's language
PREVIEW_VERBS = {"deleted": N_("deleted"), "superseded": N_("superseded"),
                 "archived": N_("archived"), "removed for good": N_("removed for good"),
                 "added": N_("added"), "changed": N_("changed")}


def preview_line(line: Any) -> str:
    """One listed memory: "deleted: User -likes-> tea" in the chosen language (a request
    kept by an older version lists plain text)."""
    if not isinstance(line, dict):
        return str(line)
    verb = PREVIEW_VERBS.get(line.get("verb", ""))
    return tr("{verb}: {text}", verb=i18n.tr(verb) if verb else line.get("verb", ""),
              text=line.get("text", ""))


def asker_wants(request: dict[str, Any]) -> str:
    """"The assistant wants to …", or another app by the name it gives itself, which is
    its own word (how it came, which it cannot choose, follows in `why_it_waits`)."""
    action = shown_summary(request["summary"])
    actor = request.get("actor") or "model"
    if not actor.startswith("mcp:"):
        return tr("The assistant wants to {action}.", action=action)
    claimed = claimed_name(actor[4:])
    if claimed is not None:
        return tr("An app that calls itself “{app}”, a name only you and TrulyMEM have, "
                  "wants to {action}.", app=claimed, action=action)
    return tr("An app that calls itself “{app}” wants to {action}.", app=actor[4:],
              action=action)


def why_it_waits(request: dict[str, Any]) -> str:
    if (request.get("actor") or "model").startswith("mcp:"):
        came = request.get("via")
        limit = (tr("That is more than other apps may write in one session or an hour")
                 if request.get("reason") == "writes" else
                 tr("That is more than other apps may remove in one session or an hour"))
        text = tr("{limit}, so nothing has been changed yet. Allow runs it once; Deny "
                  "drops it.", limit=limit)
        if came and came.startswith("HTTP"):
            return text + "\n" + tr("It came over {via}, with the sharing token from "
                                    "Settings.", via=came)
        return text + ("\n" + tr("It came over {via}.", via=came) if came else "")
    if request.get("reason") == "asked":
        return tr("That is more than you asked to forget, so nothing has been removed yet. "
                  "Allow forgets these too; Deny keeps them.")
    return tr("That is more than one turn may remove on its own, so nothing has been removed "
              "yet. Allow runs it once; Deny drops it.")


class ApprovalCard(QFrame):
    decided = Signal(object, bool)  # approval id, allow
    settled = Signal(object)  # the request as it ended (allowed, denied or failed)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("approvalCard")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setBackgroundRole(QPalette.ColorRole.AlternateBase)
        self.setAutoFillBackground(True)
        self.pending: list[dict[str, Any]] = []
        self.title = QLabel()
        self.title.setObjectName("approvalTitle")
        self.title.setWordWrap(True)
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.TextFormat.PlainText)
        self.note.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.rows = QPlainTextEdit()
        self.rows.setObjectName("approvalRows")
        self.rows.setAccessibleName(tr("Memories the request would change"))
        self.rows.setReadOnly(True)
        self.rows.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.rows.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        line = self.rows.fontMetrics().lineSpacing()
        self.rows.setFixedHeight(LIST_LINES * line + 2 * self.rows.frameWidth() + line // 2)
        self.allow = QPushButton(tr("&Allow"))
        self.allow.setObjectName("approvalAllow")
        self.allow.setAccessibleName(tr("Allow the request"))
        self.deny = QPushButton(tr("&Deny"))
        self.deny.setObjectName("approvalDeny")
        self.deny.setAccessibleName(tr("Deny the request"))
        self.deny.setDefault(True)
        self.position = QLabel()
        self.allow.clicked.connect(lambda: self._decide(True))
        self.deny.clicked.connect(lambda: self._decide(False))

        buttons = QHBoxLayout()
        buttons.addWidget(self.position, 1)
        buttons.addWidget(self.deny)
        buttons.addWidget(self.allow)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.note)
        layout.addWidget(self.rows)
        layout.addLayout(buttons)
        self.hide()

    def set_pending(self, requests: list[dict[str, Any]]) -> None:
        self.pending = list(requests)
        self._show_first()

    def add(self, request: dict[str, Any]) -> None:
        if all(r["id"] != request["id"] for r in self.pending):
            self.pending.append(request)
        self._show_first()

    def remove(self, approval_id: int) -> None:
        self.pending = [r for r in self.pending if r["id"] != approval_id]
        self._show_first()

    def settle(self, request: dict[str, Any]) -> None:
        """A request ended: off the card, and the reply and the trace say how."""
        self.remove(request["id"])
        self.settled.emit(request)

    def current(self) -> dict[str, Any] | None:
        return self.pending[0] if self.pending else None

    def _show_first(self) -> None:
        request = self.current()
        if request is None:
            self.hide()
            return
        self.title.setText(asker_wants(request))
        self.note.setText(why_it_waits(request))
        shown = [preview_line(line) for line in request["preview"]]
        more = request["count"] - len(shown)
        self.rows.setPlainText("\n".join(shown) + (
            "\n" + tr("… and {more} more", more=f"{more:,}") if more > 0 else ""))
        self.position.setText(tr("1 of {count} requests", count=len(self.pending))
                              if len(self.pending) > 1 else "")
        self.allow.setEnabled(True)
        self.deny.setEnabled(True)
        self.setAccessibleDescription(self.title.text())
        self.show()

    def _decide(self, allow: bool) -> None:
        request = self.current()
        if request is None:
            return
        self.allow.setEnabled(False)
        self.deny.setEnabled(False)
        self.decided.emit(request["id"], allow)
