"""The command palette (Ctrl+K): type a few letters of any action and press Enter."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QAction, QKeyEvent, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QDialog, QLineEdit, QListView, QVBoxLayout, QWidget

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
        text = self.sourceModel().index(row, 0, parent).data().casefold()
        return all(word in text for word in self.words)


class CommandPalette(QDialog):
    def __init__(self, registry: ActionRegistry, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("commandPalette")
        self.setWindowTitle("Command palette")
        self.items = QStandardItemModel(self)
        for spec, action in registry.ordered():
            keys = registry.shortcut_text(spec.name)
            item = QStandardItem(f"{spec.menu}: {spec.text.rstrip('…')}"
                                 + (f"    {keys}" if keys else ""))
            item.setData(action, ActionRole)
            item.setEnabled(action.isEnabled())
            self.items.appendRow(item)
        self.proxy = _WordFilter(self)
        self.proxy.setSourceModel(self.items)
        self.query = QLineEdit()
        self.query.setAccessibleName("Find an action")
        self.query.setPlaceholderText("Type to find an action, Enter runs it")
        self.query.textChanged.connect(self._filter)
        self.query.installEventFilter(self)
        self.list = QListView()
        self.list.setAccessibleName("Matching actions")
        self.list.setModel(self.proxy)
        self.list.setUniformItemSizes(True)
        self.list.activated.connect(self._run)
        layout = QVBoxLayout(self)
        layout.addWidget(self.query)
        layout.addWidget(self.list)
        metrics = self.fontMetrics()
        self.resize(40 * metrics.averageCharWidth(), 18 * metrics.height())
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
