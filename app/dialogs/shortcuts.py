"""The shortcut list (F1): every action with its keys, read from the registry, with a box
that narrows it down as you type."""

from __future__ import annotations

from PySide6.QtCore import QSortFilterProxyModel, Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.actions import ActionRegistry
from app.dialogs.palette import menu_and_name
from app.looks.sizes import chars, line_height
from core.i18n import tr

SearchRole = Qt.ItemDataRole.UserRole + 1  # a cell's text as shown and in English


class ShortcutList(QDialog):
    def __init__(self, registry: ActionRegistry, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("shortcutList")
        self.setWindowTitle(tr("Keyboard shortcuts"))
        model = QStandardItemModel(0, 3, self)
        model.setHorizontalHeaderLabels([tr("Action"), tr("Keys"), tr("Menu")])
        for spec, _action in registry.ordered():
            (menu, name), (english_menu, english_name) = menu_and_name(spec)
            keys = registry.shortcut_text(spec.name) or "—"
            cells = [(name, english_name), (keys, keys), (menu, english_menu)]
            row = []
            for shown, english in cells:
                cell = QStandardItem(shown)
                cell.setData(shown if shown == english else f"{shown}\n{english}", SearchRole)
                row.append(cell)
            model.appendRow(row)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(model)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.proxy.setFilterKeyColumn(-1)  # any column: action, keys or menu
        self.proxy.setFilterRole(SearchRole)  # the translated names or the English ones
        self.search = QLineEdit()
        self.search.setAccessibleName(tr("Find a shortcut"))
        self.search.setPlaceholderText(tr("Find an action or a key…"))
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self.proxy.setFilterFixedString)
        table = QTableView()
        table.setAccessibleName(tr("Shortcuts"))
        table.setModel(self.proxy)
        table.setAlternatingRowColors(True)
        table.setShowGrid(False)
        table.setWordWrap(False)
        table.verticalHeader().setDefaultSectionSize(round(line_height(self) * 1.6))
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.verticalHeader().hide()
        table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        table.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.table = table
        note = QLabel(tr("In the message box: Enter sends, Shift+Enter breaks the line, Up "
                         "brings back your last message. Rebind keys in config.json under "
                         "\"shortcuts\"."))
        note.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.search)
        layout.addWidget(table)
        layout.addWidget(note)
        layout.addWidget(buttons)
        metrics = self.fontMetrics()
        self.resize(chars(metrics, 80), 34 * metrics.height())
        if parent is not None:  # never larger than the window it helps with
            self.resize(min(self.width(), parent.width() - 40),
                        min(self.height(), parent.height() - 40))
