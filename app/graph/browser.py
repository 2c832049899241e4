"""The graph browser: search and filters, the lazy node list, the neighbourhood picture and
the details of the chosen node, with the person's corrections. Every read and write goes
through the backend host; this widget only asks and shows."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.backend_host import BackendHost
from app.graph.details import DetailsPanel
from app.graph.node_model import NodeIdRole, NodeListModel
from app.graph.view import NeighbourhoodView
from core.protocol.packets import PacketType

KIND_FILTERS = (("All kinds", []), ("General memories", ["memory"]), ("Persona", ["persona"]),
                ("Tasks", ["task"]))
STATUS_FILTERS = (("Any status", "any"), ("Active", "active"), ("Has archived facts", "archived"),
                  ("Deleted or superseded", "deleted"))


class AddFactDialog(QDialog):
    def __init__(self, subject: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Add a fact")
        self.subject = QLineEdit(subject)
        self.relation = QLineEdit()
        self.relation.setPlaceholderText("e.g. likes, lives in, 喜欢")
        self.object = QLineEdit()
        form = QFormLayout(self)
        form.addRow("&Subject", self.subject)
        form.addRow("&Relation", self.relation)
        form.addRow("&Object", self.object)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self.relation.setFocus()

    def triplet(self) -> dict[str, str]:
        return {"subject": self.subject.text().strip(), "relation": self.relation.text().strip(),
                "object": self.object.text().strip()}


class GraphBrowser(QWidget):
    message_requested = Signal(str)  # a turn id: show the message a fact came from
    status_message = Signal(str)
    memory_changed = Signal()
    empty_trash_requested = Signal()

    def __init__(self, host: BackendHost, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("graphBrowser")
        self.host = host
        self.sort = ("name", False)
        self.current: int | None = None
        self.touched: dict[str, list[int]] = {"nodes": [], "edges": []}
        self.loaded = False

        self._make_bar()
        self._make_list()
        self.view = NeighbourhoodView()
        self.view.node_activated.connect(self.show_node)
        self.view.node_selected.connect(self._picture_selected)
        self.details = DetailsPanel()
        self.details.action_requested.connect(self._act)
        self._lay_out()

    def _make_bar(self) -> None:
        self.search = QLineEdit()
        self.search.setObjectName("graphSearch")
        self.search.setAccessibleName("Search the memory")
        self.search.setPlaceholderText("Search names and facts (English or 中文)")
        self.search.setClearButtonEnabled(True)
        self.kind = QComboBox()
        self.kind.setAccessibleName("Kind filter")
        self.kind.addItems([k for k, _ in KIND_FILTERS])
        self.status = QComboBox()
        self.status.setAccessibleName("Status filter")
        self.status.addItems([s for s, _ in STATUS_FILTERS])
        self.depth = QSpinBox()
        self.depth.setRange(1, 2)
        self.depth.setPrefix("Depth ")
        self.depth.setAccessibleName("Neighbourhood depth")
        self.count = QLabel()
        self.count.setObjectName("nodeCount")
        self._search_timer = QTimer(self, singleShot=True, interval=150)
        self._search_timer.timeout.connect(self.reload)
        self.search.textChanged.connect(lambda _text: self._search_timer.start())
        self.search.returnPressed.connect(self._focus_list)
        self.kind.currentIndexChanged.connect(self.reload)
        self.status.currentIndexChanged.connect(self.reload)
        self.status.currentIndexChanged.connect(self._show_trash_bar)
        self.trash_note = QLabel("Deleted items stay restorable until you empty the trash.")
        self.trash_note.setWordWrap(True)
        self.trash_button = QPushButton("Empty trash…")
        self.trash_button.setObjectName("emptyTrash")
        self.trash_button.clicked.connect(self.empty_trash_requested)
        self.depth.valueChanged.connect(lambda _v: self.show_node(self.current))

    def _make_list(self) -> None:
        self.model = NodeListModel(self._fetch_rows, self)
        self.model.sort_requested.connect(self._sort)
        self.list = QTableView()
        self.list.setObjectName("nodeList")
        self.list.setAccessibleName("Nodes")
        self.list.setModel(self.model)
        self.list.setSortingEnabled(True)
        self.list.horizontalHeader().setSortIndicator(0, Qt.SortOrder.AscendingOrder)
        self.list.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.verticalHeader().hide()
        self.list.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        # Fixed widths from the font: sizing to contents would read every one of 100,000 rows.
        header = self.list.horizontalHeader()
        bold = QFont(self.font())
        bold.setBold(True)  # rows the last turn changed are bold: size for those
        metrics = QFontMetrics(bold)
        for column, sample in ((1, "persona (deleted)"), (2, "PersonaValue"),
                               (3, "Mentions"), (4, "2026-11-30 10:06")):
            header.resizeSection(column, metrics.horizontalAdvance(sample) + metrics.height())
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.list.setWordWrap(False)
        self.list.selectionModel().currentRowChanged.connect(self._row_chosen)

    def _lay_out(self) -> None:
        bar = QHBoxLayout()
        bar.addWidget(self.kind)
        bar.addWidget(self.status)
        bar.addWidget(self.depth)
        bar.addStretch()
        bar.addWidget(self.count)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.search)
        left_layout.addLayout(bar)
        self.trash_bar = QWidget()
        trash_layout = QHBoxLayout(self.trash_bar)
        trash_layout.setContentsMargins(0, 0, 0, 0)
        trash_layout.addWidget(self.trash_note, 1)
        trash_layout.addWidget(self.trash_button)
        self.trash_bar.hide()
        left_layout.addWidget(self.trash_bar)
        left_layout.addWidget(self.list)
        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.view)
        right.addWidget(self.details)
        line = self.fontMetrics().height()
        right.setSizes([30 * line, 20 * line])  # the picture gets the larger share
        # explicit minimums let the window shrink on small screens; parts then scroll or clip
        char = self.fontMetrics().averageCharWidth()
        left.setMinimumWidth(24 * char)
        right.setMinimumWidth(30 * char)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setSizes([45 * line, 75 * line])
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)

    def _show_trash_bar(self) -> None:
        self.trash_bar.setVisible(STATUS_FILTERS[self.status.currentIndex()][1] == "deleted")

    # -- loading --------------------------------------------------------------------------

    def ensure_loaded(self) -> None:
        if not self.loaded:
            self.loaded = True
            self.reload()

    def filters(self) -> dict[str, Any]:
        return {"query": self.search.text().strip(),
                "kinds": KIND_FILTERS[self.kind.currentIndex()][1],
                "status": STATUS_FILTERS[self.status.currentIndex()][1],
                "sort": "relevance" if self.search.text().strip() and self.sort == (
                    "name", False) else self.sort[0],
                "descending": self.sort[1]}

    def reload(self) -> None:
        """Ask for the ids again (search, filters, order changed, or after a turn); the
        person's place in the list is kept."""
        self.host.send(PacketType.LIST_NODES, self.filters(), self._listed)

    def _listed(self, answer: dict[str, Any]) -> None:
        if not answer["success"]:
            self.count.setText("")
            self.status_message.emit(f"Memory list: {answer['error']}")
            return
        ids = answer["ids"]
        keep = self.current
        self.model.set_ids(ids)
        self.count.setText(f"{len(ids):,} node{'s' * (len(ids) != 1)}")
        row = self.model.row_of(keep) if keep is not None else None
        if row is not None:
            self.list.selectionModel().blockSignals(True)
            self.list.selectRow(row)
            self.list.selectionModel().blockSignals(False)
            self.list.scrollTo(self.model.index(row, 0))
        elif keep is None and ids:
            self.list.selectRow(0)

    def _fetch_rows(self, ids: list[int], deliver) -> None:
        self.host.send(PacketType.NODE_ROWS, {"ids": ids},
                       lambda answer: deliver(answer["rows"] if answer["success"] else []))

    def _sort(self, key: str, descending: bool) -> None:
        self.sort = (key, descending)
        self.reload()

    def _focus_list(self) -> None:
        self.list.setFocus()
        if self.model.rowCount() and not self.list.selectionModel().hasSelection():
            self.list.selectRow(0)

    def _row_chosen(self, current, _previous) -> None:
        node_id = current.data(NodeIdRole) if current.isValid() else None
        if node_id is not None and node_id != self.current:
            self.show_node(node_id)

    def _picture_selected(self, node_id: int) -> None:
        if node_id != (self.details.node or {}).get("id"):
            self._load_details(node_id)

    def show_node(self, node_id: int | None) -> None:
        """Make `node_id` the centre of the picture and show its details."""
        if node_id is None:
            return
        self.current = node_id
        self.host.send(PacketType.GET_SUBGRAPH, {"node_id": node_id,
                                                 "depth": self.depth.value()},
                       self._graph_arrived)
        self._load_details(node_id)

    def _graph_arrived(self, answer: dict[str, Any]) -> None:
        if answer["success"]:
            self.view.show_graph(answer["data"])
            return
        if "does not exist" in answer["error"]:  # merged away or undone: show nothing
            self.current = None
            self.view.scene().clear()
        self.status_message.emit(answer["error"])

    def _load_details(self, node_id: int) -> None:
        self.host.send(PacketType.GET_NODE, {"node_id": node_id}, self._details_arrived)

    def _details_arrived(self, answer: dict[str, Any]) -> None:
        if answer["success"]:
            self.details.show_details(answer["data"])
        else:
            self.details.clear()
            self.status_message.emit(answer["error"])

    # -- after a turn ---------------------------------------------------------------------

    def highlight(self, touched: dict[str, list[int]]) -> None:
        """Mark what the last turn recalled or changed, then refresh without losing place."""
        self.touched = touched
        self.model.set_highlighted(set(touched.get("nodes", [])),
                                   set(touched.get("changed_nodes", [])))
        self.view.highlighted = set(touched.get("changed_nodes", []))
        self.view.highlighted_edges = set(touched.get("changed_edges", []))
        self.view.recalled_edges = set(touched.get("edges", []))
        self.refresh()

    def refresh(self) -> None:
        if not self.loaded:
            return
        self.model.refresh_rows()
        self.reload()
        if self.current is not None:
            self.show_node(self.current)

    # -- corrections ----------------------------------------------------------------------

    def _act(self, action: str, row: dict[str, Any]) -> None:
        handlers = {
            "rename": self._rename, "merge": self._merge, "add_fact": self._add_fact,
            "delete_node": lambda r: self._correct("delete_node", {"node_id": r["id"]}),
            "restore_node": lambda r: self._correct("restore_node", {"node_id": r["id"]}),
            "delete_edge": lambda r: self._correct("delete_edge", {"edge_id": r["id"]}),
            "restore_edge": lambda r: self._correct("restore_edge", {"edge_id": r["id"]}),
            "edit_relation": self._edit_relation, "undo_change": self._undo_change,
            "open_other": lambda r: self.show_node(
                r["target_id"] if r["direction"] == "out" else r["source_id"]),
            "open_message": self._open_message,
        }
        handlers[action](row)

    def _rename(self, node: dict[str, Any]) -> None:
        name, ok = QInputDialog.getText(self, "Rename", "New name:", text=node["name"])
        if ok and name.strip() and name.strip() != node["name"]:
            self._correct("rename_node", {"node_id": node["id"], "name": name.strip()})

    def _merge(self, node: dict[str, Any]) -> None:
        name, ok = QInputDialog.getText(
            self, "Merge", f"Merge {node['name']!r} into the node called:\n"
            "(its facts move there; this node goes away; Undo brings it back)")
        if ok and name.strip():
            self._correct("merge_nodes", {"merge_id": node["id"], "keep_name": name.strip()})

    def _edit_relation(self, edge: dict[str, Any]) -> None:
        relation, ok = QInputDialog.getText(self, "Edit relation", "Relation:",
                                            text=edge["relation"])
        if ok and relation.strip() and relation.strip() != edge["relation"]:
            self._correct("edit_relation", {"edge_id": edge["id"], "relation": relation.strip()})

    def _add_fact(self, node: dict[str, Any]) -> None:
        dialog = AddFactDialog(node["name"], self)
        if dialog.exec():
            self.add_fact(dialog.triplet())

    def add_fact(self, triplet: dict[str, str]) -> None:
        self.host.send(PacketType.EXECUTE_TOOL, {"tool_name": "memory_commit",
                                                 "arguments": {"triplets": [triplet]}},
                       self._corrected)

    def _correct(self, action: str, arguments: dict[str, Any]) -> None:
        self.host.send(PacketType.CORRECT_MEMORY, {"action": action, "arguments": arguments},
                       self._corrected)

    def _corrected(self, answer: dict[str, Any]) -> None:
        if not answer["success"]:
            QMessageBox.warning(self, "Not changed", answer["error"])
            return
        self.status_message.emit(answer.get("summary") or answer.get("result", "Done"))
        self.memory_changed.emit()
        self.refresh()

    def _undo_change(self, change: dict[str, Any]) -> None:
        self.undo(change["id"])

    def undo(self, change_id: int | None = None) -> None:
        """Undo one change, or the newest one (Ctrl+Z)."""
        body = {} if change_id is None else {"change_id": change_id}
        self.host.send(PacketType.UNDO, body, self._undone)

    def _undone(self, answer: dict[str, Any]) -> None:
        if not answer["success"]:
            QMessageBox.information(self, "Undo", answer["error"])
            return
        self.status_message.emit(f"Undid change {answer['undone']}")
        self.memory_changed.emit()
        self.refresh()

    def _open_message(self, edge: dict[str, Any]) -> None:
        if edge.get("source_message"):
            self.message_requested.emit(edge["source_message"])
        else:
            self.status_message.emit("This fact was not written during a conversation.")
