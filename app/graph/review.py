"""The review inbox: what the assistant wrote to the memory that the person has not looked
at, grouped by the turn (and the message) that caused it. Keyboard first: arrows move, K
keeps, U or Delete undoes, E edits the fact, O opens the message in the chat, Shift+K
keeps everything. Every read and write goes through the backend host."""

from __future__ import annotations

import time
from typing import Any, ClassVar

from PySide6.QtCore import QModelIndex, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QKeyEvent, QPalette, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QMenu,
    QMessageBox,
    QPushButton,
    QStyledItemDelegate,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from app.backend_host import BackendHost
from app.graph.fact_form import FactDialog
from app.graph.node_model import shown_name, shown_relation
from app.looks.sizes import chars
from app.status.status_parts import as_sentence
from core import i18n
from core.i18n import N_, tr
from core.protocol.packets import PacketType

ChangeRole = Qt.ItemDataRole.UserRole + 1  # the change dict (on change rows)
TurnRole = Qt.ItemDataRole.UserRole + 2  # the turn id (on group rows)
PAGE = 200
MORE = 100  # changes per page while scrolling: small enough not to stall the window
GUESS_TINT = QColor(255, 170, 0, 46)  # amber over the base colour: light and dark alike
VERB_MARKS = {"added": "+", "removed": "−", "deleted": "−", "replaced": "↻",
              "reinforced": "↑", "restored": "↺", "archived": "▣", "brought back": "↺",
              "kept, said again since": "="}
# The verbs the backend's change lines use, as the person reads them (others as they are).
VERB_WORDS = {"added": N_("added"), "removed": N_("removed"), "deleted": N_("deleted"),
              "replaced": N_("replaced"), "reinforced": N_("reinforced"),
              "restored": N_("restored"), "archived": N_("archived"),
              "brought back": N_("brought back"), "updated": N_("updated"),
              "renamed": N_("renamed"), "set": N_("set"), "imported": N_("imported"),
              "took back": N_("took back"), "changed": N_("changed"),
              "kept, said again since": N_("kept, said again since")}


def _when(timestamp: float) -> str:
    today = time.strftime("%Y-%m-%d")
    day = time.strftime("%Y-%m-%d", time.localtime(timestamp))
    return time.strftime("%H:%M" if day == today else "%Y-%m-%d %H:%M",
                         time.localtime(timestamp))


def app_name(actor: str | None) -> str | None:
    """The app's name when another app made the change over MCP ("mcp:Cursor")."""
    return actor[4:] if actor and actor.startswith("mcp:") else None


def change_text(change: dict[str, Any]) -> str:
    """The change as the person reads it: one line per fact or node it wrote."""
    rows = []
    for line in change["lines"] or [{"verb": "changed", "text": change["summary"]}]:
        verb = line["verb"]
        mark = VERB_MARKS.get(verb, "•")
        said = i18n.tr(VERB_WORDS[verb]) if verb in VERB_WORDS else verb
        fact = line["text"]
        if line.get("table") == "edges" and line.get("relation"):  # as it reads now
            fact = " ".join((shown_name(line["subject"]), shown_relation(line["relation"]),
                             shown_name(line["object"])))
        text = tr("{mark} {verb}: {text}", mark=mark, verb=said, text=fact)
        if line.get("guess"):
            text += "   " + tr("— a guess (confidence {confidence})",
                                confidence=f"{line['confidence']:.1f}")
        rows.append(text)
    return "\n".join(rows)


class Spaced(QStyledItemDelegate):
    """Air between the changes and above each turn, so the list reads as groups."""

    def sizeHint(self, option, index):
        hint = super().sizeHint(option, index)
        line = option.fontMetrics.height()
        return QSize(hint.width(), hint.height() + (line if not index.parent().isValid()
                                                    else line // 3))


class ReviewList(QTreeView):
    """The inbox's tree; its keys are the view's commands."""

    key_command = Signal(str)
    KEYS: ClassVar[dict[Qt.Key, str]] = {
        Qt.Key.Key_K: "keep", Qt.Key.Key_U: "undo", Qt.Key.Key_Delete: "undo",
        Qt.Key.Key_Backspace: "undo", Qt.Key.Key_E: "edit", Qt.Key.Key_O: "open"}

    def keyPressEvent(self, event: QKeyEvent) -> None:
        modifiers = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        if event.key() == Qt.Key.Key_K and modifiers == Qt.KeyboardModifier.ShiftModifier:
            self.key_command.emit("keep_all")
            return
        command = self.KEYS.get(event.key()) if not modifiers else None
        if command is None and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) \
                and not modifiers:
            command = "open"
        if command is not None:
            self.key_command.emit(command)
            return
        super().keyPressEvent(event)


class ReviewView(QWidget):
    count_changed = Signal(int)
    message_requested = Signal(str)  # a turn id: show that message in the chat
    status_message = Signal(str)

    def __init__(self, host: BackendHost, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("reviewView")
        self.host = host
        self.count = -1  # not counted yet: the first count is always announced
        self.more = False
        self.loading = False
        self.stale = True
        self.newest_shown: int | None = None
        self.model = QStandardItemModel(self)
        self._items: dict[int, QStandardItem] = {}  # each change's row, by change id
        self._make_tree()
        self._make_bar()
        self._reload_timer = QTimer(self, singleShot=True, interval=0)
        self._reload_timer.timeout.connect(self.reload)
        self._show_state()

    def _make_tree(self) -> None:
        self.tree = ReviewList()
        self.tree.setObjectName("reviewList")
        self.tree.setAccessibleName(tr("Changes to review"))
        self.tree.setModel(self.model)
        self.tree.setItemDelegate(Spaced(self.tree))
        self.tree.setHeaderHidden(True)
        self.tree.setRootIsDecorated(False)
        self.tree.setItemsExpandable(False)
        self.tree.setExpandsOnDoubleClick(False)
        self.tree.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.setWordWrap(False)  # lines end at newlines; wrapping costs a text layout
        self.tree.setIndentation(chars(self, 3))
        self.tree.setAlternatingRowColors(False)
        self.tree.key_command.connect(self.run)
        self.tree.doubleClicked.connect(lambda _index: self.run("open"))
        self.tree.verticalScrollBar().valueChanged.connect(self._maybe_more)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._menu)

    def _make_bar(self) -> None:
        self.summary = QLabel()
        self.summary.setObjectName("reviewSummary")
        self.summary.setWordWrap(True)
        self.keys = QLabel(tr("K keep · U undo · E edit · O open the message · Shift+K keep all"))
        self.keys.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.buttons: dict[str, QPushButton] = {}
        bar = QHBoxLayout()
        bar.addWidget(self.summary, 1)
        for name, text in (("keep", tr("&Keep")), ("undo", tr("&Undo")), ("edit", tr("&Edit…")),
                           ("keep_all", tr("Keep &all"))):
            button = QPushButton(text)
            button.setObjectName(f"review_{name}")
            button.clicked.connect(lambda _c=False, n=name: self.run(n))
            bar.addWidget(button)
            self.buttons[name] = button
        self.empty = QLabel()
        self.empty.setObjectName("reviewEmpty")
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.keys)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.empty, 1)

    # -- loading --------------------------------------------------------------------------

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self.stale:
            self.reload()

    def changed_elsewhere(self, review_count: int) -> None:
        """A memory change was committed: the count is new; the list is read again when
        it is in view (once, however many changes came at once), else when next shown."""
        self.set_count(review_count)
        self.stale = True
        if self.isVisible():
            self._reload_timer.start()

    def reload(self) -> None:
        self.stale = False
        self.loading = True
        self.host.send(PacketType.REVIEW_LIST, {"limit": PAGE}, self._first_page)

    def _first_page(self, answer: dict[str, Any]) -> None:
        self.loading = False
        if not answer["success"]:
            self.status_message.emit(tr("Review: {error}", error=answer["error"]))
            return
        keep = self._selected_change_id()
        row = self.tree.currentIndex().row() if self.tree.currentIndex().isValid() else 0
        self.model.clear()
        self._items.clear()
        self._append(answer["changes"])
        self.more = answer["more"]
        self.newest_shown = answer["changes"][0]["id"] if answer["changes"] else None
        self.set_count(answer["count"])
        self._select(keep, row)

    def _maybe_more(self, value: int) -> None:
        bar = self.tree.verticalScrollBar()
        if self.more and not self.loading and value >= bar.maximum() - bar.pageStep():
            self.load_more()

    def load_more(self) -> None:
        oldest = self._oldest_id()
        if oldest is None:
            return
        self.loading = True
        self.host.send(PacketType.REVIEW_LIST, {"limit": MORE, "before": oldest},
                       self._next_page)

    def _next_page(self, answer: dict[str, Any]) -> None:
        self.loading = False
        if answer["success"]:
            self._append(answer["changes"])
            self.more = answer["more"]

    def _append(self, changes: list[dict[str, Any]]) -> None:
        root = self.model.invisibleRootItem()
        last = root.child(root.rowCount() - 1) if root.rowCount() else None
        groups = []
        for change in changes:
            turn = change["turn_id"] or f"change-{change['id']}"
            if last is None or last.data(TurnRole) != turn:
                last = self._group(change, turn)
                groups.append(last)
            item = self._item(change)
            self._items[change["id"]] = item
            last.appendRow(item)
        if groups:
            root.appendRows(groups)
        for group in groups:  # only the new ones: expanding all lays out every row again
            self.tree.expand(group.index())
        self._show_state()

    def _group(self, change: dict[str, Any], turn: str) -> QStandardItem:
        message = change.get("message")
        when = _when(change["created_at"])
        app = app_name(change.get("actor"))
        if message:
            text = " ".join(message["content"].split())
            said = f"{text[:160]}{'…' if len(text) > 160 else ''}"
            if message.get("import_id") is not None:
                # when it was said, not when the file was imported (the build ran today)
                head = tr("{when} · {who} said, in an imported conversation: “{said}”",
                          when=_when(message["created_at"]),
                          who=message.get("speaker") or tr("You"), said=said)
            else:
                head = tr("{when} · You said: “{said}”", when=when, said=said)
        elif app:
            head = tr("{when} · From {app}, another app using your memory", when=when, app=app)
        else:
            head = tr("{when} · not from a message in a conversation", when=when)
        item = QStandardItem(head)
        font = QFont()  # bold only: the size is the list's (text zoom changes it)
        font.setBold(True)
        item.setFont(font)
        item.setData(turn, TurnRole)
        item.setToolTip(tr("K keeps and U undoes everything under it") if app else
                        tr("O or Enter opens this message in the chat; K keeps and U undoes "
                           "everything under it"))
        return item

    def _item(self, change: dict[str, Any]) -> QStandardItem:
        item = QStandardItem(change_text(change))
        item.setData(change, ChangeRole)
        if change["guess"]:
            item.setBackground(GUESS_TINT)
            item.setToolTip(tr("The assistant marked this as a guess: check it"))
        return item

    def set_count(self, count: int) -> None:
        if count != self.count:
            self.count = count
            self.count_changed.emit(count)
        self._show_state()

    def _show_state(self) -> None:
        has_rows = self.model.rowCount() > 0
        self.tree.setVisible(has_rows)
        self.keys.setVisible(has_rows)
        self.empty.setVisible(not has_rows)
        for button in self.buttons.values():
            button.setEnabled(has_rows)
        if self.count == 1:
            self.summary.setText(tr("1 change to review, newest first."))
        elif self.count > 0 and not self.more:  # counted as the list shows them
            groups = self.model.invisibleRootItem().rowCount()
            self.summary.setText(tr("{n} changes to review, from {groups} messages or apps, "
                                    "newest first.", n=f"{self.count:,}", groups=f"{groups:,}")
                                 if groups > 1 else tr("{n} changes to review, newest first.",
                                                       n=f"{self.count:,}"))
        elif self.count > 0:
            self.summary.setText(tr("{n} changes to review, newest first.",
                                    n=f"{self.count:,}"))
        else:
            self.summary.setText(tr("Nothing to review."))
        self.empty.setText(tr(
            "Everything the assistant wrote to its memory has been reviewed.\n\n"
            "When it remembers something new from a chat, or another app you share the "
            "memory with changes it, it shows up here for you to keep, correct or undo."))

    # -- selection ------------------------------------------------------------------------

    def _oldest_id(self) -> int | None:
        """The last change row's id (newest first, so the oldest shown): not a walk over
        thousands of rows on every page."""
        root = self.model.invisibleRootItem()
        if not root.rowCount():
            return None
        group = root.child(root.rowCount() - 1)
        return group.child(group.rowCount() - 1).data(ChangeRole)["id"]

    def _changes(self) -> list[dict[str, Any]]:
        root = self.model.invisibleRootItem()
        return [root.child(g).child(c).data(ChangeRole) for g in range(root.rowCount())
                for c in range(root.child(g).rowCount())]

    def _selected_change_id(self) -> int | None:
        change = self.tree.currentIndex().data(ChangeRole)
        return change["id"] if change else None

    def chosen(self) -> tuple[list[dict[str, Any]], str | None]:
        """The changes the current row stands for (a group: all of its), and its turn."""
        index = self.tree.currentIndex()
        if not index.isValid():
            return [], None
        item = self.model.itemFromIndex(index)
        if item.parent() is None:  # a group row
            return [item.child(r).data(ChangeRole) for r in range(item.rowCount())], \
                item.data(TurnRole)
        change = item.data(ChangeRole)
        return [change], item.parent().data(TurnRole)

    def _select(self, change_id: int | None, fallback_row: int = 0) -> None:
        """Select the change with that id, or the first change at about the same place."""
        root = self.model.invisibleRootItem()
        first: QModelIndex | None = None
        for g in range(root.rowCount()):
            group = root.child(g)
            for c in range(group.rowCount()):
                index = group.child(c).index()
                if first is None or (change_id is None and g <= fallback_row):
                    first = index
                if group.child(c).data(ChangeRole)["id"] == change_id:
                    self.tree.setCurrentIndex(index)
                    return
        if first is not None:
            self.tree.setCurrentIndex(first)

    def focus_first(self) -> None:
        """Opening Review by any route puts the keyboard on a change, so K, U, E and O
        work at once."""
        if not self.tree.currentIndex().isValid():
            self._select(None)
        self.tree.setFocus(Qt.FocusReason.OtherFocusReason)

    def _remove(self, change_ids: set[int]) -> None:
        """Take rows out after keep or undo, and select what comes next."""
        root = self.model.invisibleRootItem()
        current = self.tree.currentIndex()
        place = (current.parent().row() if current.parent().isValid() else current.row(),
                 current.row() if current.parent().isValid() else 0)
        if len(change_ids) >= len(self._items):
            self.model.clear()  # (which makes a new root item)
            self._items.clear()
            root = self.model.invisibleRootItem()
        for change_id in change_ids:  # by the id's own row: no walk over thousands
            item = self._items.pop(change_id, None)
            if item is None:
                continue
            group = item.parent()
            group.removeRow(item.row())
            if group.rowCount() == 0:
                root.removeRow(group.row())
        if root.rowCount():
            g = min(place[0], root.rowCount() - 1)
            group = root.child(g)
            self.tree.setCurrentIndex(group.child(min(place[1], group.rowCount() - 1)).index())
        self._show_state()
        if self.more and root.rowCount() == 0:
            self.reload()

    # -- commands -------------------------------------------------------------------------

    def run(self, command: str) -> None:
        if command == "keep_all":
            self.keep_all()
            return
        changes, turn = self.chosen()
        if not changes:
            return
        if command == "keep":
            self.keep(changes)
        elif command == "undo":
            self.undo(changes)
        elif command == "edit":
            self.edit(changes)
        elif command == "open":
            if turn and not turn.startswith("change-"):
                self.message_requested.emit(turn)
            else:
                self.status_message.emit(
                    tr("This change was not made during a conversation."))

    def keep(self, changes: list[dict[str, Any]]) -> None:
        ids = [c["id"] for c in changes]
        self.host.send(PacketType.REVIEW_KEEP, {"change_ids": ids},
                       lambda answer: self._kept(answer, self._what(changes)))

    def keep_all(self) -> None:
        if self.newest_shown is None:
            return
        self.host.send(PacketType.REVIEW_KEEP, {"through": self.newest_shown},
                       lambda answer: self._kept(answer, tr("Kept everything shown.")))

    def _kept(self, answer: dict[str, Any], said: str) -> None:
        if not answer["success"]:
            QMessageBox.warning(self, tr("Review"), answer["error"])
            return
        self._remove(set(answer["kept"]))
        self.set_count(answer["count"])
        self.status_message.emit(said)

    def undo(self, changes: list[dict[str, Any]]) -> None:
        ids = [c["id"] for c in changes]
        self.host.send(PacketType.UNDO, {"change_ids": ids},
                       lambda answer: self._undone(answer, set(ids)))

    def _undone(self, answer: dict[str, Any], ids: set[int]) -> None:
        if not answer["success"]:
            QMessageBox.information(self, tr("Undo"), answer["error"])
            return
        self._remove(ids)
        self.status_message.emit(tr("{message}. Redo: Ctrl+Shift+Z.",
                                    message=answer["message"]))

    def edit(self, changes: list[dict[str, Any]]) -> None:
        facts = [(c, line) for c in changes for line in c["lines"]
                 if line["table"] == "edges" and line.get("status") == "active"]
        if not facts:
            self.status_message.emit(tr("This change has no fact that can be edited; undo it "
                                        "or correct the node in Browse."))
            return
        if len(facts) == 1:
            self._edit_fact(*facts[0])
            return
        menu = QMenu(self)
        for change, line in facts:
            menu.addAction(line["text"], lambda c=change, x=line: self._edit_fact(c, x))
        rect = self.tree.visualRect(self.tree.currentIndex())
        menu.popup(self.tree.viewport().mapToGlobal(rect.bottomLeft()))

    def _edit_fact(self, change: dict[str, Any], line: dict[str, Any]) -> None:
        dialog = FactDialog.to_edit(line.get("subject", ""), line.get("relation", ""),
                                    line.get("object", ""), self)
        if not dialog.exec():
            return
        arguments = {"edge_id": line["id"], **dialog.parts()}
        self.host.send(PacketType.CORRECT_MEMORY, {"action": "edit_fact",
                                                   "arguments": arguments},
                       lambda answer: self._edited(answer, change))

    def _edited(self, answer: dict[str, Any], change: dict[str, Any]) -> None:
        if not answer["success"]:
            QMessageBox.warning(self, tr("Not changed"), answer["error"])
            return
        said = as_sentence(answer["summary"])
        facts = [line for line in change["lines"] if line["table"] == "edges"]
        if len(facts) > 1:  # one fact corrected: the others still wait, read anew
            self.status_message.emit(said)
            self.reload()
            return
        # its only fact looked at and corrected: reviewed
        self.host.send(PacketType.REVIEW_KEEP, {"change_ids": [change["id"]]},
                       lambda kept: self._kept(kept, said))

    def _menu(self, point) -> None:
        if not self.tree.indexAt(point).isValid():
            return
        menu = QMenu(self)
        for name, text in (("keep", tr("Keep\tK")), ("undo", tr("Undo\tU")),
                           ("edit", tr("Edit…\tE")),
                           ("open", tr("Open the message in the chat\tO"))):
            menu.addAction(text, lambda n=name: self.run(n))
        menu.popup(self.tree.viewport().mapToGlobal(point))

    @staticmethod
    def _what(changes: list[dict[str, Any]]) -> str:
        """What keeping `changes` says: the one fact, or how many."""
        lines = [line for c in changes for line in c["lines"]]
        if len(lines) == 1:
            return tr("Kept '{fact}'.", fact=lines[0]["text"])
        return tr("Kept {n} memory changes.", n=len(lines))
