"""The Memory tab: Browse (search and filters, the lazy node list, the neighbourhood picture
and the details of the chosen node, with the person's corrections) and Review (what the
assistant wrote, to keep or undo). Every read and write goes through the backend host; this
widget only asks and shows. It updates from the backend's one event per committed change,
and only what is on show is read again."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QFont, QFontMetrics, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.backend_host import BackendHost
from app.dialogs.ask_text import ask_text
from app.graph.columns import FitColumns
from app.graph.details import DetailsPanel
from app.graph.fact_form import FactDialog
from app.graph.node_model import NodeIdRole, NodeListModel, shown_name
from app.graph.node_picker import NodePicker
from app.graph.review import ReviewView
from app.graph.view import NeighbourhoodView
from app.looks.sizes import chars, line_height
from app.status.status_parts import as_sentence, first_upper
from core import i18n
from core.errors import ErrorCode
from core.i18n import N_, tr
from core.protocol.packets import PacketType

KIND_FILTERS = ((N_("All kinds"), []), (N_("General memories"), ["memory"]),
                (N_("Persona"), ["persona"]), (N_("Tasks"), ["task"]))
STATUS_FILTERS = ((N_("Any status"), "any"), (N_("Active"), "active"),
                  (N_("Has archived facts"), "archived"),
                  (N_("Deleted or superseded"), "deleted"))


# The node and fact commands, by action name: the window registers them (menus, palette,
# shortcuts) and hands the actions back to be placed in the details' toolbars.
NODE_COMMANDS = ("node.rename", "node.merge", "node.delete", "node.add_fact")
FACT_COMMANDS = ("fact.edit", "fact.delete", "fact.open_message", "fact.open_other")
CHANGE_COMMANDS = ("change.undo",)
SHORT_TEXTS = {"node.rename": N_("Rename"), "node.merge": N_("Merge into…"),
               "node.delete": N_("Delete"), "node.add_fact": N_("Add fact"),
               "fact.edit": N_("Edit"), "fact.delete": N_("Delete"),
               "fact.open_message": N_("Message"), "fact.open_other": N_("Open other"),
               "change.undo": N_("Undo this change")}


class GraphBrowser(QWidget):
    message_requested = Signal(str)  # a turn id: show the message a fact came from
    status_message = Signal(str)
    empty_trash_requested = Signal()
    review_count_changed = Signal(int)

    def __init__(self, host: BackendHost, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("graphBrowser")
        self.host = host
        self.sort = ("name", False)
        self.current: int | None = None
        self.touched: dict[str, list[int]] = {"nodes": [], "edges": []}
        self.loaded = False
        self.stale = False  # a change came while Browse was not on show
        self.held = False  # a turn is running: its changes are shown once it ends
        self.actions_by_name: dict[str, QAction] = {}
        self._columns_sized = False
        self._right_placed = False  # the picture's share set once, when first shown
        self._pick_first = False  # Enter came before the search's answer

        self._make_bar()
        self._make_list()
        self.view = NeighbourhoodView()
        self.view.node_activated.connect(self.show_node)
        self.view.node_selected.connect(self._picture_selected)
        self.details = DetailsPanel()
        self.details.edge_chosen.connect(self._update_actions)
        self.details.edge_table.doubleClicked.connect(lambda _i: self.run("fact.open_other"))
        self.review = ReviewView(host)
        self.review.status_message.connect(self.status_message)
        self.review.message_requested.connect(self.message_requested)
        self.review.count_changed.connect(self._review_counted)
        self._refresh_timer = QTimer(self, singleShot=True, interval=0)
        self._refresh_timer.timeout.connect(self.refresh)
        host.events.memory_changed.connect(self.changed)
        self._lay_out()
        self._update_actions()

    def _make_bar(self) -> None:
        self.search = QLineEdit()
        self.search.setObjectName("graphSearch")
        self.search.setAccessibleName(tr("Search the memory"))
        self.search.setPlaceholderText(tr("Search the memory"))
        self.search.setToolTip(tr("Names and facts, by their words and by meaning, in "
                                  "English or 中文"))
        self.search.setClearButtonEnabled(True)
        self.kind = QComboBox()
        self.kind.setAccessibleName(tr("Kind filter"))
        self.kind.addItems([i18n.tr(k) for k, _ in KIND_FILTERS])
        self.status = QComboBox()
        self.status.setAccessibleName(tr("Status filter"))
        self.status.addItems([i18n.tr(s) for s, _ in STATUS_FILTERS])
        for combo in (self.kind, self.status):  # the chosen filter is read whole
            combo.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(max(len(combo.itemText(0)), 6))
        self.depth = QSpinBox()
        self.depth.setRange(1, 2)
        self.depth.setPrefix(tr("Depth "))
        self.depth.setAccessibleName(tr("Neighbourhood depth"))
        self.depth.setToolTip(tr("How far from the chosen node the picture reaches"))
        self.count = QLabel()
        self.count.setObjectName("nodeCount")
        self._search_timer = QTimer(self, singleShot=True, interval=150)
        self._search_timer.timeout.connect(self.reload)
        self.search.textChanged.connect(lambda _text: self._search_timer.start())
        self.search.returnPressed.connect(self._focus_list)
        self.kind.currentIndexChanged.connect(self.reload)
        self.status.currentIndexChanged.connect(self.reload)
        self.status.currentIndexChanged.connect(self._show_trash_bar)
        self.trash_note = QLabel(tr("Deleted items stay restorable until you empty the trash."))
        self.trash_note.setWordWrap(True)
        self.trash_button = QPushButton(tr("Empty trash…"))
        self.trash_button.setObjectName("emptyTrash")
        self.trash_button.clicked.connect(self.empty_trash_requested)
        self.depth.valueChanged.connect(lambda _v: self.show_node(self.current))

    def _make_list(self) -> None:
        self.model = NodeListModel(self._fetch_rows, self)
        self.model.sort_requested.connect(self._sort)
        self.model.dataChanged.connect(self._size_columns)
        self.list = QTableView()
        self.list.setObjectName("nodeList")
        self.list.setAccessibleName(tr("Nodes"))
        self.list.setModel(self.model)
        self.list.setSortingEnabled(True)
        self.list.horizontalHeader().setSortIndicator(0, Qt.SortOrder.AscendingOrder)
        self.list.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.verticalHeader().hide()
        self.list.verticalHeader().setDefaultSectionSize(line_height(self) + 6)
        # Widths from the font and the first rows shown: sizing to contents would read
        # every one of 100,000 rows. The person's own widths are remembered.
        header = self.list.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        bold = QFont(self.font())
        bold.setBold(True)  # rows the last turn changed are bold: size for those
        metrics = QFontMetrics(bold)
        for column, sample in ((0, "Xiao Ming's sister"), (1, "persona (deleted)"),
                               (2, tr("Mentions")), (3, "2026-11-30 10:06")):
            header.resizeSection(column, metrics.horizontalAdvance(sample) + metrics.height())
        self.list.setWordWrap(False)
        FitColumns(self.list, (3, 2, 1))  # Last seen gives way first, then Mentions, Type
        self.list.selectionModel().currentRowChanged.connect(self._row_chosen)
        self.nothing_yet = tr(
            "Nothing remembered yet.\n\nTell the assistant about yourself in the Chat tab "
            "(\"I live in Berlin\", \"我喜欢绿茶\"): what it keeps shows up here, and in Review "
            "for you to check. You can also add a fact yourself or import a memory export "
            "(File menu).")
        self.empty_hint = QLabel(self.nothing_yet)
        self.empty_hint.setObjectName("emptyMemoryHint")
        self.empty_hint.setWordWrap(True)
        self.empty_hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_hint.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.empty_hint.hide()

    def _size_columns(self) -> None:
        """Once, when the first rows arrive on a fresh home: the Name column as wide as the
        longest name on show (within reason), the others as they are."""
        if self._columns_sized or not self.model.rows:
            return
        self._columns_sized = True
        metrics = QFontMetrics(self.list.font())
        names = [r["name"] for r in list(self.model.rows.values())[:200]]
        widest = max(metrics.horizontalAdvance(n) for n in names) + 2 * metrics.height()
        room = max(self.list.viewport().width() * 3 // 5, chars(metrics, 24))
        header = self.list.horizontalHeader()
        header.resizeSection(0, max(header.sectionSize(0), min(widest, room)))

    def _lay_out(self) -> None:
        # Two short rows rather than one long one: they fit a 300 px wide list pane.
        search_row = QHBoxLayout()
        search_row.addWidget(self.search, 1)
        search_row.addWidget(self.count)
        bar = QHBoxLayout()
        bar.addWidget(self.kind, 1)
        bar.addWidget(self.status, 1)
        self.view.set_corner(self.depth)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addLayout(search_row)
        left_layout.addLayout(bar)
        self.trash_bar = QWidget()
        trash_layout = QHBoxLayout(self.trash_bar)
        trash_layout.setContentsMargins(0, 0, 0, 0)
        trash_layout.addWidget(self.trash_note, 1)
        trash_layout.addWidget(self.trash_button)
        self.trash_bar.hide()
        left_layout.addWidget(self.trash_bar)
        left_layout.addWidget(self.list, 1)
        left_layout.addWidget(self.empty_hint, 1)
        self.right = QSplitter(Qt.Orientation.Vertical)
        self.right.setObjectName("pictureAndDetails")
        self.right.addWidget(self.view)
        self.right.addWidget(self.details)
        self.right.setStretchFactor(0, 1)
        self.right.setStretchFactor(1, 1)
        line = self.fontMetrics().height()
        self.right.setSizes([20 * line, 24 * line])
        # explicit minimums let the window shrink on small screens; parts then scroll
        left.setMinimumWidth(chars(self, 24))
        self.right.setMinimumWidth(chars(self, 30))
        self.view.setMinimumHeight(6 * line)
        self.details.setMinimumHeight(11 * line)
        self.split = QSplitter(Qt.Orientation.Horizontal)
        self.split.setObjectName("listAndPicture")
        self.split.addWidget(left)
        self.split.addWidget(self.right)
        self.split.setSizes([45 * line, 75 * line])
        self.split.setChildrenCollapsible(False)
        self._make_pages()

    def _make_pages(self) -> None:
        self.browse_page = QWidget()
        browse_layout = QVBoxLayout(self.browse_page)
        browse_layout.setContentsMargins(0, 4, 0, 0)
        browse_layout.addWidget(self.split)
        self.pages = QTabWidget()
        self.pages.setObjectName("memoryPages")
        self.pages.setDocumentMode(True)
        self.pages.addTab(self.browse_page, tr("&Browse"))
        self.pages.addTab(self.review, tr("Revie&w"))
        self.pages.currentChanged.connect(self._page_changed)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.pages)

    def _show_trash_bar(self) -> None:
        self.trash_bar.setVisible(STATUS_FILTERS[self.status.currentIndex()][1] == "deleted")

    # -- state kept between runs ----------------------------------------------------------

    def save_state(self, settings: QSettings) -> None:
        settings.setValue("memory/list_columns", self.list.horizontalHeader().saveState())
        settings.setValue("memory/split", self.split.saveState())
        settings.setValue("memory/right", self.right.saveState())

    def restore_state(self, settings: QSettings) -> None:
        columns = settings.value("memory/list_columns")  # (the Kind column is gone)
        if isinstance(columns, QByteArray) and \
                self.list.horizontalHeader().restoreState(columns):
            self._columns_sized = True
        for key, splitter in (("memory/split", self.split), ("memory/right", self.right)):
            state = settings.value(key)
            if isinstance(state, QByteArray) and splitter.restoreState(state):
                self._right_placed = self._right_placed or splitter is self.right

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if not self._right_placed:
            self._right_placed = True
            QTimer.singleShot(0, self._place_right)

    def _place_right(self) -> None:
        """The picture gets what the facts leave: in a short window (800×500) four or five
        lines of facts before the picture grows, in a tall one 45 % of the height."""
        height, line = self.right.height(), line_height(self)
        picture = max(6 * line, min(int(height * 0.45), height - 12 * line))
        self.right.setSizes([picture, height - picture])

    # -- pages ----------------------------------------------------------------------------

    def show_review(self) -> None:
        self.pages.setCurrentWidget(self.review)
        self.review.focus_first()

    def _page_changed(self, _index: int) -> None:
        if self.pages.currentWidget() is self.review:
            self.review.focus_first()
        elif self.stale:
            self.refresh()

    def _review_counted(self, count: int) -> None:
        self.pages.setTabText(1, tr("Revie&w ({count})", count=f"{count:,}") if count
                              else tr("Revie&w"))
        self.review_count_changed.emit(count)

    # -- loading --------------------------------------------------------------------------

    def ensure_loaded(self) -> None:
        if not self.loaded:
            self.loaded = True
            self.reload()
        elif self.stale and self.pages.currentWidget() is self.browse_page:
            self.refresh()

    def filters(self) -> dict[str, Any]:
        query = self.search.text().strip()
        if query and query == shown_name("User") != "User":  # 你: the person's own node
            query = "User"
        return {"query": query,
                "kinds": KIND_FILTERS[self.kind.currentIndex()][1],
                "status": STATUS_FILTERS[self.status.currentIndex()][1],
                "sort": "relevance" if self.search.text().strip() and self.sort == (
                    "name", False) else self.sort[0],
                "descending": self.sort[1]}

    def reload(self) -> None:
        """Ask for the ids again (search, filters, order changed, or after a change); the
        person's place in the list is kept."""
        self.host.send(PacketType.LIST_NODES, self.filters(), self._listed)

    def _listed(self, answer: dict[str, Any]) -> None:
        if not answer["success"]:
            self.count.setText("")
            self.status_message.emit(tr("Memory list: {error}", error=answer["error"]))
            return
        ids = answer["ids"]
        keep = self.current
        self.model.set_ids(ids)
        self.count.setText(tr("1 node") if len(ids) == 1
                           else tr("{n} nodes", n=f"{len(ids):,}"))
        unfiltered = not self.search.text().strip() and self.kind.currentIndex() == 0 \
            and self.status.currentIndex() == 0
        searched = self.search.text().strip()
        self.empty_hint.setText(self.nothing_yet if unfiltered else self._why_nothing(
            searched, answer.get("why") or {}))
        self.empty_hint.setVisible(not ids)
        self.list.setVisible(bool(ids))
        row = self.model.row_of(keep) if keep is not None else None
        if self._pick_first and ids:
            self._pick_first = False
            self.list.selectRow(0)
        elif row is not None:
            self._select_row_quietly(row)
        elif ids and (keep is None or not self.list.selectionModel().hasSelection()):
            self.list.selectRow(0)
        elif not ids:
            self.current = None
            self.view.clear_picture()
            self.details.clear()
        self._update_actions()

    def _why_nothing(self, searched: str, why: dict[str, Any]) -> str:
        """What a person is told when a search or filter finds no node, and why."""
        if not searched:
            return tr("No node has this kind and status. Choose \"All kinds\" and \"Any "
                      "status\" to see every node.")
        meaning = why.get("meaning", "searched")
        if meaning == "short":
            text = tr("No name or fact holds \"{query}\". Type a few more letters to search "
                      "by meaning too.", query=searched)
        elif meaning == "busy":
            text = tr("No name or fact holds \"{query}\". The memory is still being read for "
                      "meaning ({n} facts to go): search again in a moment.", query=searched,
                      n=f"{int(why.get('waiting') or 0):,}")
        elif meaning == "off":
            problem = str(why.get("problem") or "")
            text = tr("No name or fact holds \"{query}\". Search by meaning is off here: "
                      "{problem}", query=searched, problem=i18n.tr(problem))
        else:
            text = tr("Nothing in the memory matches \"{query}\", by its words or by "
                      "meaning.", query=searched)
        filtered = self.kind.currentIndex() != 0 or self.status.currentIndex() != 0
        return text + ("\n\n" + tr("The kind and status filters apply too.") if filtered
                       else "")

    def _select_row_quietly(self, row: int) -> None:
        """Select a list row without making it the picture's centre (it is already shown,
        or the picture chose it)."""
        self.list.selectionModel().blockSignals(True)
        self.list.selectRow(row)
        self.list.selectionModel().blockSignals(False)
        self.list.viewport().update()
        self.list.scrollTo(self.model.index(row, 0))

    def _fetch_rows(self, ids: list[int], deliver) -> None:
        self.host.send(PacketType.NODE_ROWS, {"ids": ids},
                       lambda answer: deliver(answer["rows"] if answer["success"] else []))

    def _sort(self, key: str, descending: bool) -> None:
        self.sort = (key, descending)
        self.reload()

    def _focus_list(self) -> None:
        """Enter in the search box: to the list, on the best match."""
        if self._search_timer.isActive():  # typed faster than the search ran
            self._search_timer.stop()
            self._pick_first = True
            self.reload()
        elif self.model.rowCount():
            self.list.selectRow(0)
        self.list.setFocus()

    def _row_chosen(self, current, _previous) -> None:
        node_id = current.data(NodeIdRole) if current.isValid() else None
        if node_id is not None and node_id != self.current:
            self.show_node(node_id)

    def _picture_selected(self, node_id: int) -> None:
        """Moving through the picture moves the list and the details with it."""
        if node_id != (self.details.node or {}).get("id"):
            self._load_details(node_id)
        row = self.model.row_of(node_id)
        if row is not None and self.list.currentIndex().row() != row:
            self._select_row_quietly(row)

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
        if answer["code"] == ErrorCode.NOT_FOUND:  # merged away or undone: show nothing
            self.current = None
            self.view.clear_picture()
            self.details.clear()
            self._update_actions()
            return
        self.status_message.emit(answer["error"])

    def _load_details(self, node_id: int) -> None:
        self.host.send(PacketType.GET_NODE, {"node_id": node_id}, self._details_arrived)

    def _details_arrived(self, answer: dict[str, Any]) -> None:
        if answer["success"]:
            self.details.show_details(answer["data"])
        else:
            self.details.clear()
            if answer["code"] != ErrorCode.NOT_FOUND:
                self.status_message.emit(answer["error"])
        self._update_actions()

    # -- after a change -------------------------------------------------------------------

    def highlight(self, touched: dict[str, list[int]]) -> None:
        """Mark what the last turn recalled or changed. Nothing is read again here: the
        turn's changes were announced, and are shown when the turn ends (`hold`)."""
        self.touched = touched
        self.model.set_highlighted(set(touched.get("nodes", [])),
                                   set(touched.get("changed_nodes", [])))
        self.view.highlighted = set(touched.get("changed_nodes", []))
        self.view.highlighted_edges = set(touched.get("changed_edges", []))
        self.view.recalled_edges = set(touched.get("edges", []))
        if not self._refresh_timer.isActive() and not self.stale:
            self.view.redraw()

    def hold(self, held: bool) -> None:
        """While a turn runs its changes are gathered; they are shown once it ends."""
        self.held = held
        if not held and self.stale and self._on_show():
            self._refresh_timer.start()

    def changed(self, event: dict[str, Any]) -> None:
        """One committed change (the backend's "memory_changed" event). Browse reads again
        only what is on show, once for however many changes came together; another app's
        change is tinted where it is shown."""
        self.review.changed_elsewhere(event.get("review_count", 0))
        if (event.get("actor") or "").startswith("mcp:"):
            self.highlight({"nodes": event.get("nodes", []), "edges": [],
                            "changed_nodes": event.get("nodes", []),
                            "changed_edges": event.get("edges", [])})
        if not self.loaded:
            return
        if not event.get("bulk") and not self._concerns_view(event):
            self.model.forget_rows()  # names or counts in the list may have moved
        self.stale = True
        if self._on_show() and not self.held:
            self._refresh_timer.start()

    def _concerns_view(self, event: dict[str, Any]) -> bool:
        edges = {e["id"] for e in self.details.edges.rows}
        return self.current in event.get("nodes", ()) or bool(
            edges & set(event.get("edges", ())))

    def _on_show(self) -> bool:
        return self.isVisible() and self.pages.currentWidget() is self.browse_page

    def refresh(self) -> None:
        """Read the list, and the picture and details, again (F5, or after changes)."""
        if not self.loaded:
            return
        self.stale = False
        self.model.forget_rows()
        self.reload()
        if self.current is not None:
            self.show_node(self.current)

    # -- commands -------------------------------------------------------------------------

    def command_handlers(self) -> dict[str, Any]:
        return {name: (lambda n=name: self.run(n))
                for name in (*NODE_COMMANDS, *FACT_COMMANDS, *CHANGE_COMMANDS)}

    def shortcut_scope(self, name: str) -> QWidget:
        """Where a command's key works: fact keys in the facts table, the rest in Browse
        (so Delete in the chat box never deletes a memory)."""
        return self.details.edge_table if name.startswith("fact.") else self.browse_page

    def place_actions(self, actions: dict[str, QAction]) -> None:
        self.actions_by_name = actions
        for name, short in SHORT_TEXTS.items():  # what the toolbars show; menus say more
            actions[name].setIconText(i18n.tr(short))
        for names, bar in ((NODE_COMMANDS, self.details.node_bar),
                           (FACT_COMMANDS, self.details.edge_bar),
                           (CHANGE_COMMANDS, self.details.history_bar)):
            for name in names:
                bar.addAction(actions[name])
        self._update_actions()

    def _update_actions(self) -> None:
        """Commands are enabled when what they act on is chosen; Delete says Restore for
        what is deleted."""
        node, edge = self.details.node, self.details.selected_edge()
        get = self.actions_by_name.get
        for name in NODE_COMMANDS:
            if get(name):
                get(name).setEnabled(node is not None)
        for name in FACT_COMMANDS:
            if get(name):
                get(name).setEnabled(edge is not None)
        if get("node.delete"):
            deleted = bool(node and node.get("deleted_at"))
            get("node.delete").setText(tr("Restore node") if deleted else tr("Delete node"))
            get("node.delete").setIconText(tr("Restore") if deleted else tr("Delete"))
        if get("fact.delete"):
            deleted = bool(edge and edge["status"] != "active")
            get("fact.delete").setText(tr("Restore fact") if deleted else tr("Delete fact"))
            get("fact.delete").setIconText(tr("Restore") if deleted else tr("Delete"))
        if get("fact.edit"):
            get("fact.edit").setEnabled(edge is not None and edge["status"] == "active")

    def run(self, name: str) -> None:
        """One node, fact or change command, on what is chosen in the details."""
        node, edge = self.details.node, self.details.selected_edge()
        if name.startswith("node.") and node is None:
            self.status_message.emit(tr("Choose a node in the Memory tab first."))
            return
        if name.startswith("fact.") and edge is None:
            self.status_message.emit(tr("Choose a fact in the node's Facts list first."))
            return
        handlers = {
            "node.rename": lambda: self._rename(node),
            "node.merge": lambda: self._merge(node),
            "node.delete": lambda: self._correct(
                "restore_node" if node.get("deleted_at") else "delete_node",
                {"node_id": node["id"]}),
            "node.add_fact": lambda: self._add_fact(node),
            "fact.edit": lambda: self._edit_fact(edge),
            "fact.delete": lambda: self._correct(
                "delete_edge" if edge["status"] == "active" else "restore_edge",
                {"edge_id": edge["id"]}),
            "fact.open_message": lambda: self._open_message(edge),
            "fact.open_other": lambda: self.show_node(
                edge["target_id"] if edge["direction"] == "out" else edge["source_id"]),
            "change.undo": self._undo_chosen_change,
        }
        handlers[name]()

    def _rename(self, node: dict[str, Any]) -> None:
        name, ok = ask_text(self, tr("Rename"), tr("New name:"), text=node["name"])
        if ok and name.strip() and name.strip() != node["name"]:
            self._correct("rename_node", {"node_id": node["id"], "name": name.strip()})

    def _merge(self, node: dict[str, Any]) -> None:
        picker = NodePicker(self.host, tr("Merge {name} into which node? Its facts move there "
                                          "and this node goes away; Undo brings it back.",
                                          name=repr(node["name"])),
                            exclude=node["id"], parent=self)
        if picker.exec() and picker.chosen:
            self.merge(node["id"], picker.chosen["id"])

    def merge(self, merge_id: int, keep_id: int) -> None:
        """Merge, then show the node that was kept (the merged one is gone)."""
        def merged(answer: dict[str, Any]) -> None:
            if answer["success"]:
                self.current = keep_id
            self._corrected(answer)

        self.host.send(PacketType.CORRECT_MEMORY, {"action": "merge_nodes", "arguments": {
            "merge_id": merge_id, "keep_id": keep_id}}, merged)

    def _edit_fact(self, edge: dict[str, Any]) -> None:
        dialog = FactDialog.to_edit(edge["source_name"], edge["relation"],
                                    edge["target_name"], self)
        if dialog.exec():
            self._correct("edit_fact", {"edge_id": edge["id"], **dialog.parts()})

    def _add_fact(self, node: dict[str, Any]) -> None:
        dialog = FactDialog.to_add(node["name"], self)
        if dialog.exec():
            self.add_fact(dialog.parts())

    def add_fact(self, triplet: dict[str, str]) -> None:
        self.host.send(PacketType.EXECUTE_TOOL, {"tool_name": "memory_commit",
                                                 "arguments": {"triplets": [triplet]}},
                       self._corrected)

    def _correct(self, action: str, arguments: dict[str, Any]) -> None:
        self.host.send(PacketType.CORRECT_MEMORY, {"action": action, "arguments": arguments},
                       self._corrected)

    def _corrected(self, answer: dict[str, Any]) -> None:
        """The change itself is shown through its announcement; here only the words."""
        if not answer["success"]:
            QMessageBox.warning(self, tr("Not changed"), answer["error"])
            return
        said = answer.get("summary") or answer.get("result") or tr("Done")
        self.status_message.emit(first_upper(said))

    def _undo_chosen_change(self) -> None:
        change = self.details.selected_change()
        if change is None:
            self.status_message.emit(tr("Choose a change in the node's Changes list first."))
            return
        self.undo(change["id"])

    def undo(self, change_id: int | None = None) -> None:
        """Undo one change, or the newest one (Ctrl+Z)."""
        body = {} if change_id is None else {"change_id": change_id}
        self.host.send(PacketType.UNDO, body, lambda answer: self._undone(answer, redo=False))

    def redo(self) -> None:
        """Take back the newest undo (Ctrl+Shift+Z)."""
        self.host.send(PacketType.REDO, {}, lambda answer: self._undone(answer, redo=True))

    def _undone(self, answer: dict[str, Any], redo: bool) -> None:
        if not answer["success"]:  # in the status bar: Ctrl+Z at the end is no alarm
            self.status_message.emit(
                tr("Redo: {error}.", error=answer["error"]) if redo
                else tr("Undo: {error}.", error=answer["error"]))
            return
        said = as_sentence(answer["message"]) if redo else \
            tr("{message}. Redo: Ctrl+Shift+Z.", message=answer["message"])
        kept = answer.get("kept_message")
        self.status_message.emit(f"{said} {kept}" if kept else said)

    def _open_message(self, edge: dict[str, Any]) -> None:
        if edge.get("source_message"):
            self.message_requested.emit(edge["source_message"])
        else:
            self.status_message.emit(tr("This fact was not written during a conversation."))
