"""The tool-trace dock: every turn's memory tool calls, filterable, with full details below."""

from __future__ import annotations

from PySide6.QtCore import QItemSelection, QModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDockWidget,
    QHeaderView,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QSplitter,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from app.looks.sizes import chars
from app.trace.model import DetailRole, TraceModel
from core.i18n import tr


class TraceDock(QDockWidget):
    undo_turn_requested = Signal(str)  # a turn id

    def __init__(self, model: TraceModel, parent: QWidget | None = None) -> None:
        super().__init__(tr("Tool trace"), parent)
        self.setObjectName("traceDock")
        self.model = model
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(model)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.proxy.setFilterKeyColumn(-1)
        self.proxy.setRecursiveFilteringEnabled(True)  # a matching call keeps its turn shown
        self.proxy.setAutoAcceptChildRows(True)  # a matching turn shows all its calls

        self.filter = QLineEdit()
        self.filter.setObjectName("traceFilter")
        self.filter.setAccessibleName(tr("Filter tool calls"))
        self.filter.setPlaceholderText(tr("Filter by tool, argument or result"))
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self.proxy.setFilterFixedString)

        self.tree = self._make_tree()
        self.tree.selectionModel().selectionChanged.connect(self._show_detail)
        self.detail = QPlainTextEdit()
        self.detail.setObjectName("traceDetail")
        self.detail.setAccessibleName(tr("Selected call in full"))
        self.detail.setReadOnly(True)
        self.detail.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.detail.setPlaceholderText(tr("Select a call to see its arguments and full result."))

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.tree)
        splitter.addWidget(self.detail)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.filter)
        layout.addWidget(splitter)
        self.setWidget(body)

        model.rowsInserted.connect(self._follow)
        self.proxy.rowsInserted.connect(self._span_turns)
        self.proxy.modelReset.connect(self._span_turns)
        self.proxy.layoutChanged.connect(self._span_turns)
        model.dataChanged.connect(self._refresh_detail)

    def _make_tree(self) -> QTreeView:
        tree = QTreeView()
        tree.setObjectName("traceTree")
        tree.setAccessibleName(tr("Tool calls by turn"))
        tree.setModel(self.proxy)
        tree.setUniformRowHeights(True)
        tree.setAlternatingRowColors(True)
        tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        tree.customContextMenuRequested.connect(self._context_menu)
        header = tree.header()
        header.setStretchLastSection(False)
        metrics = self.fontMetrics()
        tool_width = metrics.horizontalAdvance("✕ memory_query_archived") + 2 * tree.indentation()
        header.resizeSection(0, tool_width)
        header.resizeSection(1, chars(metrics, 26))
        header.resizeSection(3, metrics.horizontalAdvance("00000 ms") + metrics.height())
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        return tree

    def select_turn(self, turn_id: str) -> None:
        """Show this turn's calls: select it and open it."""
        for row in range(self.model.rowCount()):
            if self.model.turn_id_at(self.model.index(row, 0)) == turn_id:
                index = self.proxy.mapFromSource(self.model.index(row, 0))
                self.tree.setCurrentIndex(index)
                self.tree.expand(index)
                self.tree.scrollTo(index)
                return

    def selected_turn(self) -> str | None:
        """The turn of the selected row (a turn or one of its calls), if it has an id."""
        return self.model.turn_id_at(self.proxy.mapToSource(self.tree.currentIndex()))

    def _context_menu(self, position) -> None:
        index = self.tree.indexAt(position)
        turn_id = self.model.turn_id_at(self.proxy.mapToSource(index))
        if not turn_id:
            return
        self.tree.setCurrentIndex(index)
        menu = QMenu(self)
        menu.addAction(tr("Undo this turn's memory changes"),
                       lambda: self.undo_turn_requested.emit(turn_id))
        menu.exec(self.tree.viewport().mapToGlobal(position))

    def _span_turns(self, *_args: object) -> None:
        """A turn's row reads across the columns: time, message and summary."""
        for row in range(self.proxy.rowCount()):
            self.tree.setFirstColumnSpanned(row, QModelIndex(), True)

    def _refresh_detail(self, *_args: object) -> None:
        """Keep the detail pane in step while the selected call finishes."""
        current = self.tree.currentIndex()
        if current.isValid() and self.tree.selectionModel().isSelected(current):
            self.detail.setPlainText(current.data(DetailRole))

    def _follow(self, parent: QModelIndex, _first: int, last: int) -> None:
        """Open each new turn and keep the newest call in sight."""
        source = self.model.index(last, 0, parent)
        index = self.proxy.mapFromSource(source)
        if not index.isValid():
            return
        if not parent.isValid():
            self.tree.expand(index)
        else:
            self.tree.expand(index.parent())
        self.tree.scrollTo(index)

    def _show_detail(self, selected: QItemSelection, _deselected: QItemSelection) -> None:
        indexes = selected.indexes()
        self.detail.setPlainText(indexes[0].data(DetailRole) if indexes else "")
