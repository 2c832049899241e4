"""The chosen node in full: its fields, its facts in and out (with status, confidence, when
they held and the message they came from) and the changes that touched it."""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableView,
    QTabWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from app.graph.columns import FitColumns
from app.graph.node_model import KIND_LABELS, shown_name, shown_relation
from app.graph.review import change_text
from app.looks.sizes import line_height
from core import i18n
from core.i18n import N_, tr

Index = QModelIndex | QPersistentModelIndex
RowRole = Qt.ItemDataRole.UserRole + 1


def when(timestamp: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(timestamp)) if timestamp else ""


class RowsModel(QAbstractTableModel):
    """A small read-only table of dict rows (a node's edges, its history)."""

    def __init__(self, columns: list[tuple[Any, ...]], parent: Any = None) -> None:
        super().__init__(parent)
        self.columns = columns  # (header, the cell text from the row[, its tooltip])
        self.rows: list[dict[str, Any]] = []

    def set_rows(self, rows: list[dict[str, Any]]) -> None:
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return i18n.tr(self.columns[section][0])
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self.rows[index.row()]
        if role == RowRole:
            return row
        column = self.columns[index.column()]
        if role == Qt.ItemDataRole.ToolTipRole and len(column) > 2:
            return column[2](row)  # a column that tells more on hover
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return column[1](row)
        if role == Qt.ItemDataRole.FontRole and row.get("status", "active") != "active":
            font = QFont()
            font.setStrikeOut(row.get("status") in ("deleted", "superseded"))
            font.setItalic(True)
            return font
        return None


def _other(edge: dict[str, Any]) -> str:
    return shown_name(edge["target_name"] if edge["direction"] == "out"
                      else edge["source_name"])


def by_whom(actor: str) -> str:
    """"you", "assistant", or the other app's name (a change made over MCP)."""
    if actor == "user":
        return tr("you")
    return actor[4:] if actor.startswith("mcp:") else tr("assistant")


def said_change(change: dict[str, Any]) -> str:
    """What a change did, in the person's language: its first line, and how many more
    (the change's own summary, in English, where it has no lines)."""
    lines = change_text(change).splitlines() if change.get("lines") else [change["summary"]]
    more = len(lines) - 1
    return lines[0] + (tr(" (and {count} more)", count=more) if more > 0 else "")


def by_whom_where(change: dict[str, Any]) -> str:
    """Who made a change, and on which device when it came from another by sync."""
    who = by_whom(change["actor"])
    if change.get("device_name"):
        return tr("{who} on {device}", who=who, device=change["device_name"])
    return who


def came_how(change: dict[str, Any]) -> str:
    """Who made a change, and for another app how it came, which it cannot choose (its
    name is its own word); a change made on another device names it."""
    who = by_whom_where(change)
    if not change["actor"].startswith("mcp:"):
        return who
    return tr("the app “{app}”, over {via}", app=who,
              via=change.get("via") or tr("an unknown connection"))


# A fact's status as the person reads it (an unknown one is shown as it is).
STATUS_WORDS = {"active": N_("active"), "superseded": N_("superseded"),
                "deleted": N_("deleted"), "archived": N_("archived")}


def status_word(status: str) -> str:
    return i18n.tr(STATUS_WORDS[status]) if status in STATUS_WORDS else status


EDGE_COLUMNS = [
    ("", lambda e: "→" if e["direction"] == "out" else "←"),
    (N_("Relation"), lambda e: shown_relation(e["relation"])),
    (N_("Other node"), _other),
    (N_("Status"), lambda e: status_word(e["status"])),
    (N_("Confidence"), lambda e: f"{e['confidence']:.2f}"),
    (N_("Valid from"), lambda e: when(e.get("valid_from"))),
    (N_("Valid to"), lambda e: when(e.get("valid_to"))),
    (N_("From message"), lambda e: (e.get("message") or {}).get("content", "")[:80]),
]
HISTORY_COLUMNS = [
    (N_("When"), lambda c: when(c["created_at"])),
    (N_("By"), by_whom_where, came_how),
    (N_("Change"), said_change, lambda c: change_text(c) if c.get("lines") else c["summary"]),
    ("", lambda c: tr("undone") if c.get("undone_by") else ""),
]


def _table(model: QAbstractTableModel, name: str) -> QTableView:
    table = QTableView()
    table.setAccessibleName(name)
    table.setModel(model)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.verticalHeader().hide()
    table.verticalHeader().setDefaultSectionSize(line_height(table) + 6)
    table.setWordWrap(False)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    table.horizontalHeader().setStretchLastSection(True)
    return table


class DetailsPanel(QWidget):
    """Shows one GET_NODE answer. The commands (rename, merge, delete, add or edit a fact,
    go to its message, undo a change) are the window's registered actions, placed in small
    toolbars here that fold into a » menu when the pane is narrow."""

    edge_chosen = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("nodeDetails")
        self.node: dict[str, Any] | None = None
        self.title = QLabel(tr("Choose a node to see what the assistant knows about it."))
        self.title.setWordWrap(True)
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        self._set_heading_font()
        self.fields = QLabel()
        self.fields.setWordWrap(True)
        self.fields.setTextFormat(Qt.TextFormat.PlainText)
        self.fields.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.edges = RowsModel(EDGE_COLUMNS, self)
        self.edge_table = _table(self.edges, tr("Facts about this node"))
        self.history = RowsModel(HISTORY_COLUMNS, self)
        self.history_table = _table(self.history, tr("Changes to this node"))
        self.node_bar = _toolbar(tr("Node commands"))
        self.edge_bar = _toolbar(tr("Fact commands"))
        self.history_bar = _toolbar(tr("Change commands"))

        # The fact and change commands sit in the tab row's corner: one row less, which a
        # 500 px high window needs for the facts themselves.
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.edge_table, tr("Fac&ts"))
        self.tabs.addTab(self.history_table, tr("Chan&ges"))
        corner = _Corner(self.tabs)
        corner_layout = QHBoxLayout(corner)
        corner_layout.setContentsMargins(0, 0, 0, 0)
        corner_layout.addWidget(self.edge_bar)
        corner_layout.addWidget(self.history_bar)
        self.tabs.setCornerWidget(corner, Qt.Corner.TopRightCorner)
        self.tabs.currentChanged.connect(self._corner_for_tab)
        self._corner_for_tab(0)
        # The node's commands beside its name, not on a row of their own: the row goes to
        # the facts (an 800×500 window showed one of them).
        heading_row = QHBoxLayout()
        heading_row.addWidget(self.title, 1)
        heading_row.addWidget(self.node_bar, 0, Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 0)
        layout.addLayout(heading_row)
        layout.addWidget(self.fields)
        layout.addWidget(self.tabs, 1)
        FitColumns(self.edge_table, (6, 4, 5, 7, 3))  # Valid to goes first, Status last
        self.edge_table.selectionModel().selectionChanged.connect(
            lambda *_args: self.edge_chosen.emit())

    def _set_heading_font(self) -> None:
        heading = QFont(self.font())
        heading.setPointSizeF(heading.pointSizeF() * 1.25)
        heading.setBold(True)
        self.title.setFont(heading)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.FontChange:  # text zoom: the heading follows
            self._set_heading_font()
        super().changeEvent(event)

    def _corner_for_tab(self, index: int) -> None:
        self.edge_bar.setVisible(index == 0)
        self.history_bar.setVisible(index == 1)

    def show_details(self, details: dict[str, Any]) -> None:
        node = details["node"]
        chosen = (self.selected_edge() or {}).get("id")
        self.node = node
        self.title.setText(shown_name(node["name"]))
        label = KIND_LABELS.get(node["kind"])  # a task or the persona; a memory says its type
        mentions = node["mention_count"]
        kind_type = node["type"]
        if label and (kind_type or "").casefold() == node["kind"]:
            kind_type = None  # a task typed "Task" is said once, in the person's language
        parts = [*([i18n.tr(label)] if label else []),
                 *([kind_type or tr("no type")] if kind_type or not label else []),
                 tr("1 mention") if mentions == 1 else tr("{n} mentions", n=f"{mentions:,}"),
                 tr("since {date}", date=when(node["created_at"])[:10])]
        if node.get("state"):
            parts.append(tr("state: {state}", state=node["state"]))
        if node.get("deleted_at"):
            parts.append(tr("deleted {when}", when=when(node["deleted_at"])))
        text = " · ".join(parts)
        if node.get("description"):
            text += "\n" + tr("Description: {description}", description=node["description"])
        if node.get("summary"):
            text += "\n" + tr("Summary: {summary}", summary=node["summary"])
        self.fields.setText(text)
        self.fields.setToolTip(tr("First seen {first}, updated {updated}",
                                  first=when(node["created_at"]),
                                  updated=when(node["updated_at"])))
        self.edges.set_rows(details["edges"])
        self.history.set_rows(details["history"])
        self.tabs.setTabText(0, tr("Fac&ts ({n})", n=len(details["edges"])))
        self.tabs.setTabText(1, tr("Chan&ges ({n})", n=len(details["history"])))
        if chosen is not None:
            self.select_edge(chosen)
        self.edge_chosen.emit()

    def select_edge(self, edge_id: int) -> bool:
        for row, edge in enumerate(self.edges.rows):
            if edge["id"] == edge_id:
                self.edge_table.selectRow(row)
                return True
        return False

    def clear(self) -> None:
        self.node = None
        self.title.setText(tr("Choose a node to see what the assistant knows about it."))
        self.fields.clear()
        self.edges.set_rows([])
        self.history.set_rows([])
        self.tabs.setTabText(0, tr("Fac&ts"))  # no counts when nothing is chosen
        self.tabs.setTabText(1, tr("Chan&ges"))
        self.edge_chosen.emit()

    def selected_edge(self) -> dict[str, Any] | None:
        rows = self.edge_table.selectionModel().selectedRows()
        return rows[0].data(RowRole) if rows else None

    def selected_change(self) -> dict[str, Any] | None:
        rows = self.history_table.selectionModel().selectedRows()
        return rows[0].data(RowRole) if rows else None


class _Corner(QWidget):
    """The commands in the tab row's corner take what the tabs leave: their toolbar folds
    the rest behind its » (at 800×500 the Changes tab hid behind scroll arrows)."""

    def __init__(self, tabs: QTabWidget) -> None:
        super().__init__()
        self._tabs = tabs

    def sizeHint(self) -> QSize:
        full = super().sizeHint()
        room = self._tabs.width() - self._tabs.tabBar().sizeHint().width() - 8
        return QSize(max(min(full.width(), room), self.minimumSizeHint().width()),
                     full.height())


def _toolbar(name: str) -> QToolBar:
    bar = QToolBar(name)
    bar.setAccessibleName(name)
    bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
    bar.setIconSize(QSize(1, 1))
    bar.setContentsMargins(0, 0, 0, 0)
    return bar
