"""The command palette (Ctrl+K): type a few letters of any action and press Enter."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QAction, QKeyEvent, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QDialog, QHeaderView, QLineEdit, QTreeView, QVBoxLayout, QWidget

from app.actions import ActionRegistry

ActionRole = Qt.ItemDataRole.UserRole + 1


class _WordFilter(QSortFilterProxyModel):
    """Every typed word must appear in the action's text, menu or shortcut."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.words: list[str] = []

    def set_query(self, text: str) -> None:
        self.words = text.casefold().split()
        self.setFilterFixedString(text)  # refilters; the rows are judged by `words`

    def filterAcceptsRow(self, row: int, parent: QModelIndex | QPersistentModelIndex) -> bool:
        model = self.sourceModel()
        text = " ".join(model.index(row, column, parent).data() or ""
                        for column in range(model.columnCount())).casefold()
        return all(word in text for word in self.words)


class CommandPalette(QDialog):
    def __init__(self, registry: ActionRegistry, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("commandPalette")
        self.setWindowTitle("Command palette")
        self.items = QStandardItemModel(0, 2, self)
        for spec, action in registry.ordered():
            item = QStandardItem(f"{spec.menu}: {spec.text.rstrip('…')}")
            keys = QStandardItem(registry.shortcut_text(spec.name))
            keys.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            for cell in (item, keys):
                cell.setData(action, ActionRole)
                cell.setEnabled(action.isEnabled())
                cell.setEditable(False)
            self.items.appendRow([item, keys])
        self.proxy = _WordFilter(self)
        self.proxy.setSourceModel(self.items)
        self.query = QLineEdit()
        self.query.setAccessibleName("Find an action")
        self.query.setPlaceholderText("Type to find an action, Enter runs it")
        self.query.textChanged.connect(self._filter)
        self.query.installEventFilter(self)
        self.list = QTreeView()
        self.list.setAccessibleName("Matching actions")
        self.list.setModel(self.proxy)
        self.list.setRootIsDecorated(False)
        self.list.setHeaderHidden(True)
        self.list.setUniformRowHeights(True)
        self.list.setSelectionBehavior(QTreeView.SelectionBehavior.SelectRows)
        self.list.header().setStretchLastSection(False)
        self.list.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.list.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.list.activated.connect(self._run)
        layout = QVBoxLayout(self)
        layout.addWidget(self.query)
        layout.addWidget(self.list)
        metrics = self.fontMetrics()
        self.resize(60 * metrics.averageCharWidth(), 18 * metrics.height())
        self._filter("")
        self.chosen: QAction | None = None

    def _filter(self, text: str) -> None:
        self.proxy.set_query(text)
        self.list.setCurrentIndex(self.proxy.index(0, 0))

    def eventFilter(self, watched, event) -> bool:
        """Up, Down and Enter in the query box move in and run from the list."""
        if watched is self.query and isinstance(event, QKeyEvent) \
                and event.type() == QKeyEvent.Type.KeyPress:
            key = event.key()
            if key in (Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_PageUp, Qt.Key.Key_PageDown):
                self.list.keyPressEvent(event)
                return True
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                self._run(self.list.currentIndex())
                return True
        return super().eventFilter(watched, event)

    def _run(self, index: QModelIndex) -> None:
        if not index.isValid() or not index.flags() & Qt.ItemFlag.ItemIsEnabled:
            return
        self.chosen = index.data(ActionRole)
        self.accept()
