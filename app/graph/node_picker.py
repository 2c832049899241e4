"""Choose a node by typing part of its name (English or 中文): the merge target, searched
as you type through the backend, picked with the arrow keys and Enter."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.backend_host import BackendHost
from app.graph.node_model import KIND_LABELS
from app.looks.sizes import chars
from core import i18n
from core.i18n import tr
from core.protocol.packets import PacketType

SHOWN = 30


class NodePicker(QDialog):
    def __init__(self, host: BackendHost, prompt: str, exclude: int | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(tr("Merge into…"))
        self.host = host
        self.exclude = exclude
        self.chosen: dict[str, Any] | None = None
        self.asked = 0  # answers to older searches are dropped
        label = QLabel(prompt)
        label.setWordWrap(True)
        self.query = QLineEdit()
        self.query.setPlaceholderText(tr("Type part of a name"))
        self.query.setAccessibleName(tr("Find a node by name"))
        self.query.setClearButtonEnabled(True)
        self.results = QListWidget()
        self.results.setAccessibleName(tr("Matching nodes"))
        self.results.itemDoubleClicked.connect(lambda _item: self.accept())
        self.results.currentItemChanged.connect(
            lambda item, _old: self.ok.setEnabled(item is not None))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        self.ok = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok.setText(tr("Merge"))
        self.ok.setEnabled(False)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(label)
        layout.addWidget(self.query)
        layout.addWidget(self.results, 1)
        layout.addWidget(buttons)
        self.resize(chars(self, 44),
                    22 * self.fontMetrics().height())
        self._timer = QTimer(self, singleShot=True, interval=120)
        self._timer.timeout.connect(self.search)
        self.query.textChanged.connect(lambda _text: self._timer.start())
        self.query.installEventFilter(self)
        self.search()

    def eventFilter(self, watched, event) -> bool:
        """Up and Down in the search box move through the results."""
        if watched is self.query and event.type() == event.Type.KeyPress and \
                event.key() in (Qt.Key.Key_Up, Qt.Key.Key_Down):
            row = self.results.currentRow() + (1 if event.key() == Qt.Key.Key_Down else -1)
            if 0 <= row < self.results.count():
                self.results.setCurrentRow(row)
            return True
        return super().eventFilter(watched, event)

    def search(self) -> None:
        self.asked += 1
        asked = self.asked
        text = self.query.text().strip()
        self.host.send(PacketType.LIST_NODES,
                       {"query": text, "status": "active",
                        "sort": "relevance" if text else "mentions", "descending": not text},
                       lambda answer: self._listed(answer, asked))

    def _listed(self, answer: dict[str, Any], asked: int) -> None:
        if asked != self.asked or not answer["success"]:
            return
        ids = [i for i in answer["ids"] if i != self.exclude][:SHOWN]
        if not ids:
            self._show([])
            return
        self.host.send(PacketType.NODE_ROWS, {"ids": ids},
                       lambda rows: asked == self.asked and self._show(
                           rows["rows"] if rows["success"] else []))

    def _show(self, rows: list[dict[str, Any]]) -> None:
        self.results.clear()
        for row in rows:
            label = KIND_LABELS.get(row["kind"])
            kind = row.get("type") or (i18n.tr(label) if label else row["kind"])
            count = row["mention_count"]
            item = QListWidgetItem(
                tr("{name}    ({kind}, 1 mention)", name=row["name"], kind=kind) if count == 1
                else tr("{name}    ({kind}, {n} mentions)", name=row["name"], kind=kind,
                        n=count))
            item.setData(Qt.ItemDataRole.UserRole, row)
            self.results.addItem(item)
        if rows:
            self.results.setCurrentRow(0)
        elif self.query.text().strip():
            empty = QListWidgetItem(tr("No node matches “{query}”.",
                                       query=self.query.text().strip()))
            empty.setFlags(Qt.ItemFlag.NoItemFlags)  # a note, not a choice
            self.results.addItem(empty)
            self.ok.setEnabled(False)

    def accept(self) -> None:
        item = self.results.currentItem()
        if item is None:
            return
        self.chosen = item.data(Qt.ItemDataRole.UserRole)
        super().accept()
