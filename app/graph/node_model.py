"""The browser's node list: a table model that holds only ids and fetches rows in pages.

The backend answers a list of ids for the current search, filters and order (cheap even for
100,000 nodes). Rows are shown a page at a time as the view scrolls (`canFetchMore` /
`fetchMore`), and their data is asked for, page by page, from the backend thread; until it
arrives a row reads "…". Anki's browser table works the same way.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QGuiApplication, QPalette

from core import i18n
from core.i18n import N_, tr

Index = QModelIndex | QPersistentModelIndex
FetchRows = Callable[[list[int], Callable[[list[dict[str, Any]]], None]], None]
NodeIdRole = Qt.ItemDataRole.UserRole + 1
PAGE = 200
# The kind ("memory" on almost every row) told no rows apart: tasks and the persona say
# theirs in the Type column instead, where a memory has its type.
COLUMNS = ((N_("Name"), "name"), (N_("Type"), "type"), (N_("Mentions"), "mentions"),
           (N_("Updated"), "updated"))
KIND_LABELS = {"task": N_("task"), "persona": N_("persona")}
THE_PERSON = "user"  # the node the tools keep the person's own facts on


# Relations the task tools keep between tasks and notes, in words
RELATION_WORDS = {"next_task": N_("then"), "contains_info": N_("notes")}


def shown_relation(relation: str) -> str:
    """A relation as shown: the tools' own links in words, the rest as stored."""
    word = RELATION_WORDS.get(relation.casefold())
    return i18n.tr(word) if word else relation


def shown_name(name: str) -> str:
    """A node's name as shown: the person's own node in the person's language ("User",
    你), every other as stored."""
    return tr("User") if name.casefold() == THE_PERSON else name


class NodeListModel(QAbstractTableModel):
    sort_requested = Signal(str, bool)  # sort key, descending

    def __init__(self, fetch_rows: FetchRows, parent: Any = None) -> None:
        super().__init__(parent)
        self.fetch_rows = fetch_rows
        self.ids: list[int] = []
        self.shown = 0
        self.rows: dict[int, dict[str, Any]] = {}
        self.requested: set[int] = set()
        self.highlighted: set[int] = set()  # recalled or changed by the last turn: tinted
        self.changed: set[int] = set()  # changed by it: also bold
        self.generation = 0  # answers for an older id list are dropped

    # -- Qt model interface ---------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self.shown

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return i18n.tr(COLUMNS[section][0])
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= self.shown:
            return None
        node_id = self.ids[index.row()]
        if role == NodeIdRole:
            return node_id
        row = self.rows.get(node_id)
        if role == Qt.ItemDataRole.DisplayRole:
            return self._cell(row, index.column())
        if role == Qt.ItemDataRole.FontRole and row is not None and (
                row.get("deleted_at") or node_id in self.changed):
            font = QFont()
            font.setStrikeOut(bool(row.get("deleted_at")))
            font.setBold(node_id in self.changed)
            return font
        if role == Qt.ItemDataRole.BackgroundRole and node_id in self.highlighted:
            color = QColor(QGuiApplication.palette().color(QPalette.ColorRole.Highlight))
            color.setAlpha(50)
            return QBrush(color)
        if role == Qt.ItemDataRole.TextAlignmentRole and index.column() == 2:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    @staticmethod
    def _cell(row: dict[str, Any] | None, column: int) -> str:
        if row is None:
            return "…" if column == 0 else ""
        if column == 0:
            return shown_name(row["name"])
        if column == 1:
            label = KIND_LABELS.get(row["kind"])
            kind = i18n.tr(label) if label else (row.get("type") or "")
            return tr("{kind} (deleted)", kind=kind).strip() if row.get("deleted_at") else kind
        if column == 2:
            return f"{row['mention_count']:,}"
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(row["updated_at"]))

    def canFetchMore(self, parent: Index = QModelIndex()) -> bool:  # noqa: B008
        return not parent.isValid() and self.shown < len(self.ids)

    def fetchMore(self, parent: Index = QModelIndex()) -> None:  # noqa: B008
        if parent.isValid():
            return
        count = min(PAGE, len(self.ids) - self.shown)
        if count <= 0:
            return
        self.beginInsertRows(QModelIndex(), self.shown, self.shown + count - 1)
        self.shown += count
        self.endInsertRows()
        self._request(self.shown - count, self.shown)

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        key = COLUMNS[column][1]
        if key is not None:
            self.sort_requested.emit(key, order == Qt.SortOrder.DescendingOrder)

    # -- feeding --------------------------------------------------------------------------

    def set_ids(self, ids: list[int]) -> None:
        """A new result list; as many rows as were shown stay shown, so a refresh does not
        jump back to the top."""
        keep = max(PAGE, self.shown)
        self.beginResetModel()
        self.generation += 1
        self.ids = list(ids)
        self.shown = min(len(self.ids), keep)
        self.requested.clear()
        self.endResetModel()
        self._request(0, self.shown)

    def forget_rows(self) -> None:
        """Rows on show may have changed: the next `set_ids` asks for them again (once)."""
        self.requested.clear()
        self.rows.clear()

    def _request(self, start: int, end: int) -> None:
        wanted = [i for i in self.ids[start:end] if i not in self.rows
                  and i not in self.requested]
        generation = self.generation
        for first in range(0, len(wanted), PAGE):
            page = wanted[first:first + PAGE]
            self.requested.update(page)
            self.fetch_rows(page, lambda rows, g=generation: self._arrived(rows, g))

    def _arrived(self, rows: list[dict[str, Any]], generation: int) -> None:
        for row in rows:
            self.rows[row["id"]] = row
        if generation != self.generation or not rows or not self.shown:
            return
        self.dataChanged.emit(self.index(0, 0), self.index(self.shown - 1, len(COLUMNS) - 1))

    def set_highlighted(self, ids: set[int], changed: set[int]) -> None:
        self.highlighted, self.changed = set(ids), set(changed)
        if self.shown:
            self.dataChanged.emit(self.index(0, 0),
                                  self.index(self.shown - 1, len(COLUMNS) - 1))

    def row_of(self, node_id: int) -> int | None:
        try:
            row = self.ids.index(node_id)
        except ValueError:
            return None
        while row >= self.shown and self.canFetchMore():
            self.fetchMore()
        return row
