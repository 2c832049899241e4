"""The command palette (Ctrl+K): a frameless popup at the top of the window; type a few
letters of any action (fuzzy: "tlim" finds Tool limits) and press Enter."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QAction, QKeyEvent, QPalette, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QDialog,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from app.actions import SPECS, ActionRegistry, ActionSpec
from app.dialogs.fuzzy import fuzzy_score
from app.looks.sizes import chars
from core import i18n
from core.i18n import tr

ActionRole = Qt.ItemDataRole.UserRole + 1
NamesRole = Qt.ItemDataRole.UserRole + 2  # (menu, name) as shown and in English, for search


class _FuzzyFilter(QSortFilterProxyModel):
    """Rows whose text, menu or shortcut match the query fuzzily, best match first; the
    names match as shown (translated) and in English."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.query = ""
        self.scores: dict[int, int] = {}

    def set_query(self, text: str) -> None:
        self.query = text
        self.scores.clear()
        self.invalidate()
        if text.strip():  # the best match first
            self.sort(0, Qt.SortOrder.DescendingOrder)
        else:  # as the registry lists them (descending with no column reverses them)
            self.sort(-1, Qt.SortOrder.AscendingOrder)

    def _score(self, row: int, parent: QModelIndex | QPersistentModelIndex) -> int | None:
        model = self.sourceModel()
        names = model.index(row, 0, parent).data(NamesRole) or []
        keys = model.index(row, 1, parent).data() or ""
        best: list[int] = []
        own = False  # the action's own name matches, not just its menu
        for menu, text in names:
            on_text = fuzzy_score(self.query, text)
            own = own or (bool(menu) and on_text is not None)
            best += [s for s in (on_text, fuzzy_score(self.query, f"{menu}: {text}"))
                     if s is not None]
        best += [s for s in (fuzzy_score(self.query, keys),) if s is not None]
        if not best:
            return None
        return max(best) + (2 if own else 0)

    def filterAcceptsRow(self, row: int, parent: QModelIndex | QPersistentModelIndex) -> bool:
        score = self._score(row, parent)
        if score is not None:
            self.scores[row] = score
        return score is not None

    def lessThan(self, left: QModelIndex, right: QModelIndex) -> bool:
        return self.scores.get(left.row(), 0) < self.scores.get(right.row(), 0)


_ENGLISH = {spec.name: spec for spec in SPECS}


def menu_and_name(spec: ActionSpec) -> tuple[tuple[str, str], tuple[str, str]]:
    """An action's menu and name as shown (in the chosen language, without the "…"), and
    in English, which search also finds."""
    english = _ENGLISH.get(spec.name, spec)
    return ((i18n.tr(spec.menu), i18n.tr(spec.text).rstrip("…")),
            (english.menu, english.text.rstrip("…")))


def _action_items(registry: ActionRegistry, parent: QWidget) -> QStandardItemModel:
    """One row per action: "Menu: Action" as shown, and its keys."""
    items = QStandardItemModel(0, 2, parent)
    for spec, action in registry.ordered():
        shown, english = menu_and_name(spec)
        item = QStandardItem(tr("{m}: {a}", m=shown[0], a=shown[1]))  # menu: action
        item.setData([shown] if shown == english else [shown, english], NamesRole)
        keys = QStandardItem(registry.shortcut_text(spec.name))
        keys.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        for cell in (item, keys):
            cell.setData(action, ActionRole)
            cell.setEnabled(action.isEnabled())
            cell.setEditable(False)
        items.appendRow([item, keys])
    return items


class CommandPalette(QDialog):
    def __init__(self, registry: ActionRegistry, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("commandPalette")
        self.setWindowTitle(tr("Command palette"))
        self.setWindowFlags(Qt.WindowType.Popup | Qt.WindowType.FramelessWindowHint)
        self.items = _action_items(registry, self)
        self.proxy = _FuzzyFilter(self)
        self.proxy.setSourceModel(self.items)
        self.query = QLineEdit()
        self.query.setAccessibleName(tr("Find an action"))
        self.query.setPlaceholderText(tr("Type to find an action, Enter runs it"))
        self.query.textChanged.connect(self._filter)
        self.query.installEventFilter(self)
        self.list = QTreeView()
        self.list.setAccessibleName(tr("Matching actions"))
        self.list.setModel(self.proxy)
        self.list.setRootIsDecorated(False)
        self.list.setHeaderHidden(True)
        self.list.setUniformRowHeights(True)
        self.list.setSelectionBehavior(QTreeView.SelectionBehavior.SelectRows)
        self.list.header().setStretchLastSection(False)
        self.list.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.list.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.list.activated.connect(self._run)
        self.empty = QLabel()
        self.empty.setObjectName("paletteEmpty")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        self.empty.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.empty.hide()
        layout = QVBoxLayout(self)
        layout.addWidget(self.query)
        layout.addWidget(self.list)
        layout.addWidget(self.empty)
        metrics = self.fontMetrics()
        self.resize(chars(metrics, 64), 18 * metrics.height())
        if parent is not None:  # at the top of the window, like an editor's palette
            top = parent.mapToGlobal(parent.rect().topLeft())
            self.move(top.x() + (parent.width() - self.width()) // 2,
                      top.y() + 3 * metrics.height())
        self._filter("")
        self.chosen: QAction | None = None

    def showEvent(self, event) -> None:
        """Typing goes to the search field at once: a window manager may leave a popup
        without keyboard focus until it is activated."""
        super().showEvent(event)
        self.activateWindow()
        self.raise_()
        self.query.setFocus(Qt.FocusReason.PopupFocusReason)

    def _filter(self, text: str) -> None:
        self.proxy.set_query(text)
        self.list.setCurrentIndex(self.proxy.index(0, 0))
        nothing = self.proxy.rowCount() == 0
        self.list.setVisible(not nothing)
        self.empty.setVisible(nothing)
        if nothing:
            self.empty.setText(tr("No action matches “{query}”. Try fewer letters, "
                                  "or F1 for the list of shortcuts.", query=text.strip()))

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
