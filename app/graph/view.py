"""The neighbourhood picture: the chosen node, its neighbours and the relations between
them, drawn in a QGraphicsView. Click or arrow keys select a neighbour, Enter or a double
click moves to it; + and - zoom, 0 fits the picture to the view.

Nodes are coloured by kind and entity type, each type always the same colour (a legend
says which is which). Many neighbours alike are drawn as one group with a dashed ring that
opens on Enter (`app.graph.crowd`). Labels keep their size whatever the zoom, and only
some are shown: the centre's, the selected and hovered node's, what the last turn changed
and the most mentioned, and of those only the ones that do not cover a more important
one; the rest appear on hover. A crowded neighbourhood is then still readable."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QKeyEvent, QPainter, QPalette, QPen
from PySide6.QtWidgets import (
    QGraphicsEllipseItem,
    QGraphicsItem,
    QGraphicsLineItem,
    QGraphicsRectItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
    QGraphicsView,
    QWidget,
)

from app.graph.colors import node_color
from app.graph.crowd import grouped
from app.graph.layout import LABEL_AT, radial_layout
from app.graph.node_model import shown_name, shown_relation
from core import i18n
from core.i18n import N_, tr

NodeRole = 0  # QGraphicsItem data key holding a node id


@dataclass
class Look:
    """What the picture draws with, all from the palette and the view's font."""

    palette: QPalette
    font: QFont
    small: QFont
    text: QColor
    muted: QColor
    accent: QColor

    @classmethod
    def of(cls, widget: QWidget) -> Look:
        palette, font = widget.palette(), widget.font()
        small = QFont(font)
        small.setPointSizeF(font.pointSizeF() * 0.85)
        return cls(palette, font, small, palette.color(QPalette.ColorRole.Text),
                   palette.color(QPalette.ColorRole.PlaceholderText),
                   palette.color(QPalette.ColorRole.Highlight))


ALWAYS_LABELLED = 14  # up to this many nodes every label shows
TOP_LABELLED = 8  # beyond it, the most mentioned this many keep theirs
LEGEND_MOST = 7
KIND_WORDS = {"entity": N_("entity"), "state": N_("state"), "task": N_("task"),
              "persona": N_("persona")}  # a node's kind, as its tooltip names it


class NodeDot(QGraphicsEllipseItem):
    """A node's circle; hovering it shows its label when the label is hidden."""

    def __init__(self, rect: QRectF, label: QGraphicsItem, always: bool) -> None:
        super().__init__(rect)
        self.label = label
        self.wanted = always  # its label should show (see `NeighbourhoodView._declutter`)
        self.always = always
        self.setAcceptHoverEvents(True)
        label.setVisible(always)

    def hoverEnterEvent(self, event) -> None:
        self.label.setVisible(True)
        self.label.setZValue(5)
        super().hoverEnterEvent(event)

    def hoverLeaveEvent(self, event) -> None:
        self.label.setVisible(self.always)
        self.label.setZValue(1)
        super().hoverLeaveEvent(event)


class NeighbourhoodView(QGraphicsView):
    node_selected = Signal(object)  # a node id: above 2**31 once devices sync
    node_activated = Signal(object)  # move the picture to this node

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("neighbourhoodView")
        self.setAccessibleName(tr("Neighbourhood of the chosen node"))
        self.setScene(QGraphicsScene(self))
        self.setRenderHints(QPainter.RenderHint.Antialiasing
                            | QPainter.RenderHint.TextAntialiasing)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.center: int | None = None
        self.selected: int | None = None
        # The person zoomed: a resize (scroll bars appearing as the picture grows past the
        # view) must not fit the picture again and undo it.
        self.zoomed = False
        self.positions: dict[int, QPointF] = {}
        self.neighbours: dict[int, set[int]] = {}
        self.node_items: dict[int, QGraphicsEllipseItem] = {}
        self.highlighted: set[int] = set()
        self.highlighted_edges: set[int] = set()  # changed by the last turn: thick
        self.recalled_edges: set[int] = set()  # read by it: in the accent colour
        self.note = ""
        self.legend: list[tuple[QColor, str]] = []
        self.labelled: set[int] = set()
        self.graph: dict[str, Any] | None = None  # the last answer drawn
        self.opened: set[str] = set()  # relations whose group the person opened
        self.groups: dict[int, dict[str, Any]] = {}  # the group nodes drawn, by id
        self.edge_labels: list[QGraphicsItem] = []  # relations' names on their lines

    # -- drawing --------------------------------------------------------------------------

    def show_graph(self, graph: dict[str, Any]) -> None:
        """Lay out and draw one GET_SUBGRAPH answer, a crowd of neighbours grouped."""
        if self.graph is None or self.graph["center"] != graph["center"]:
            self.opened = set()  # another node: its groups start closed
        self.graph = graph
        graph = grouped(graph, self.opened, self.highlighted)
        self.groups = {n["id"]: n for n in graph["nodes"] if n["kind"] == "group"}
        scene = self.scene()
        scene.clear()
        self.node_items.clear()
        self.edge_labels.clear()
        look = Look.of(self)
        metrics = QFontMetricsF(look.font)
        self.center = graph["center"]
        nodes = {n["id"]: n for n in graph["nodes"]}
        self.labelled = self._labelled(graph["nodes"])
        # Hidden labels need no room on the ring: a crowded picture stays compact.
        width = (lambda text: metrics.horizontalAdvance(text[:24])) \
            if len(nodes) <= ALWAYS_LABELLED else (lambda _text: metrics.height() * 2)
        spots = radial_layout(self.center, graph["nodes"], graph["edges"], width,
                              metrics.height() * 1.5)
        self.positions = {i: QPointF(*p) for i, p in spots.items()}
        self.neighbours = {i: set() for i in nodes}
        for edge in graph["edges"]:
            a, b = self.positions.get(edge["source_id"]), self.positions.get(edge["target_id"])
            if a is None or b is None:
                continue
            self.neighbours[edge["source_id"]].add(edge["target_id"])
            self.neighbours[edge["target_id"]].add(edge["source_id"])
            hot = edge["id"] in self.highlighted_edges
            read = hot or edge["id"] in self.recalled_edges
            line = QGraphicsLineItem(a.x(), a.y(), b.x(), b.y())
            line.setPen(QPen(look.accent if read else look.muted, 3.0 if hot else 1.0))
            line.setZValue(-2)
            scene.addItem(line)
            both = {edge["source_id"], edge["target_id"]}
            if a != b and (len(nodes) <= ALWAYS_LABELLED or hot or (self.center in both
                           and both <= self.labelled)):
                # nearer the outer end, where the ring leaves room
                inner, outer = (a, b) if a.manhattanLength() <= b.manhattanLength() else (b, a)
                self._edge_label(shown_relation(edge["relation"]),
                                 inner + (outer - inner) * LABEL_AT, look)
        legend: dict[str, QColor] = {}
        for node in sorted(nodes.values(), key=lambda n: -n.get("mention_count", 1)):
            color, entry = node_color(node, look.palette)
            legend.setdefault(entry, color)
            self._node(node, color, look)
        self.legend = [(c, e) for e, c in legend.items()]
        box = scene.itemsBoundingRect().adjusted(-40, -40, 40, 40)
        scene.setSceneRect(box)
        self.note = (tr("Only the first {limit} nodes are shown: this neighbourhood "
                        "has more.", limit=graph["limit"])
                     if graph.get("capped") else "")
        self.select(self.center)
        self.fit()
        self.setAccessibleDescription(described(self.graph))

    def redraw(self) -> None:
        """Draw the last answer again (new highlights), keeping the selected node."""
        if self.graph is not None:
            selected, kept = self.selected, (self.transform(), self.zoomed)
            self.show_graph(self.graph)
            if selected in self.node_items:
                self.select(selected)
            if kept[1]:  # the person's zoom stays
                self.setTransform(kept[0])
                self.zoomed = True

    def clear_picture(self) -> None:
        self.setAccessibleDescription("")
        self.graph = None
        self.center = self.selected = None
        self.node_items.clear()
        self.edge_labels.clear()
        self.positions.clear()
        self.legend = []
        self.note = ""
        self.scene().clear()

    def _labelled(self, nodes: list[dict[str, Any]]) -> set[int]:
        """Whose labels always show: all of a small picture; in a large one the centre,
        what the last turn changed and the most mentioned."""
        if len(nodes) <= ALWAYS_LABELLED:
            return {n["id"] for n in nodes}
        top = sorted(nodes, key=lambda n: (-n.get("mention_count", 1), n["name"]))
        # as many as the view has room for: a small window shows fewer, never a heap
        line = QFontMetricsF(self.font()).height()
        room = max(2, min(TOP_LABELLED, int(self.viewport().height() // (5 * line))))
        return {self.center, *(n["id"] for n in top[:room]),
                *(n["id"] for n in nodes if n["id"] in self.highlighted)}

    def _pinned(self, text: str, font: QFont, brush: QColor, look: Look,
                opacity: float = 1.0) -> QGraphicsRectItem:
        """A label that keeps its size whatever the zoom, centred under its anchor."""
        anchor = QGraphicsRectItem(QRectF())
        anchor.setPen(Qt.PenStyle.NoPen)
        anchor.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations)
        label = QGraphicsSimpleTextItem(text, anchor)
        label.setFont(font)
        label.setBrush(brush)
        rect = label.boundingRect()
        label.setPos(-rect.width() / 2, 0)
        backing = QGraphicsRectItem(QRectF(-rect.width() / 2 - 3, 0, rect.width() + 6,
                                           rect.height()), anchor)
        backing.setBrush(look.palette.color(QPalette.ColorRole.Base))
        backing.setPen(Qt.PenStyle.NoPen)
        backing.setOpacity(opacity)
        label.setZValue(1)
        self.scene().addItem(anchor)
        return anchor

    def _edge_label(self, text: str, middle: QPointF, look: Look) -> None:
        shown = text if len(text) <= 40 else text[:39] + "…"
        anchor = self._pinned(shown, look.small, look.muted, look)
        anchor.setPos(middle.x(), middle.y() - QFontMetricsF(look.small).height() / 2)
        anchor.setZValue(-1)
        self.edge_labels.append(anchor)

    def _node(self, node: dict[str, Any], fill: QColor, look: Look) -> None:
        point = self.positions[node["id"]]
        radius = 7 + 3 * math.log2(1 + max(1, node.get("mention_count", 1)))
        if node["id"] == self.center:
            radius += 4
        hot = node["id"] in self.highlighted
        shown = shown_name(node["name"])
        name = shown if len(shown) <= 48 else shown[:47] + "…"
        bold = QFont(look.font)
        bold.setBold(node["id"] == self.center or hot)
        label = self._pinned(name, bold, look.text, look, 0.85)
        label.setPos(point.x(), point.y() + radius + 2)
        for part in (label, *label.childItems()):  # a click on the name picks the node
            part.setData(NodeRole, node["id"])
        label.setZValue(1)
        circle = NodeDot(QRectF(-radius, -radius, 2 * radius, 2 * radius), label,
                         node["id"] in self.labelled)
        circle.setPos(point)
        fill = QColor(fill)
        if node.get("deleted_at"):
            fill.setAlpha(70)
        circle.setBrush(QBrush(fill))
        pen = QPen(look.accent if hot else look.palette.color(QPalette.ColorRole.Dark),
                   3 if hot else 1)
        if node["kind"] == "group":  # a dashed ring: more behind it
            pen.setStyle(Qt.PenStyle.DashLine)
        circle.setPen(pen)
        circle.setData(NodeRole, node["id"])
        kind = node["kind"]
        if kind == "group":
            circle.setToolTip(tr("{count} facts “{relation}”: Enter or a double click shows "
                                 "them", count=len(node["members"]), relation=node["relation"]))
        else:
            kind = node.get("type") or (i18n.tr(KIND_WORDS[kind]) if kind in KIND_WORDS
                                        else kind)
            circle.setToolTip(tr("{name} ({kind}, {n} mentions)", name=shown,
                                 kind=kind, n=node.get("mention_count", 1)))
        self.scene().addItem(circle)
        self.node_items[node["id"]] = circle

    # -- selection and keys ---------------------------------------------------------------

    def select(self, node_id: int | None) -> None:
        previous = self.node_items.get(self.selected)
        if previous is not None:
            previous.label.setVisible(previous.always)
        self.selected = node_id
        if node_id in self.node_items:
            self.node_items[node_id].label.setVisible(True)
        for item_id, item in self.node_items.items():
            pen = item.pen()
            if item_id == node_id:
                pen.setColor(self.palette().color(QPalette.ColorRole.Highlight))
                pen.setWidthF(4)
            elif item_id not in self.highlighted:
                pen.setColor(self.palette().color(QPalette.ColorRole.Dark))
                pen.setWidthF(1)
            item.setPen(pen)
        if node_id is not None and node_id >= 0:  # a group is no node to show
            self.node_selected.emit(node_id)

    def changeEvent(self, event) -> None:
        if event.type() == event.Type.FontChange:  # text zoom: labels at the new size
            self.redraw()
        super().changeEvent(event)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.graph is not None and not self.zoomed:
            self.fit()
        self._place_corner()

    def set_corner(self, widget: QWidget) -> None:
        """A control of the picture's own (how far it reaches), in its top-right corner:
        in the list's filter row it cut the filters to "All kind" and "Any sta"."""
        self.corner = widget
        widget.setParent(self)
        self._place_corner()

    def _place_corner(self) -> None:
        corner = getattr(self, "corner", None)
        if corner is not None:
            size = corner.sizeHint()
            frame = self.frameWidth() + 4
            corner.setGeometry(self.width() - size.width() - frame, frame, size.width(),
                               size.height())

    def fit(self) -> None:
        self.zoomed = False
        self.fitInView(self.scene().sceneRect(), Qt.AspectRatioMode.KeepAspectRatio)
        if self.transform().m11() > 1.5:  # a tiny neighbourhood is not blown up
            self.resetTransform()
            self.scale(1.5, 1.5)
        self._declutter()

    def _declutter(self) -> None:
        """Labels keep their size whatever the zoom, so at this zoom some would cover
        others: the more important (the centre, the selected, what the turn changed, the
        most mentioned) keep theirs, the others show on hover; a relation's name on its
        line shows only where no name covers it."""
        order = sorted(self.node_items.items(), key=lambda item: (
            item[0] != self.center, item[0] != self.selected,
            item[0] not in self.highlighted, -item[1].rect().width()))
        placed: list[QRectF] = []
        for node_id, dot in order:
            if not dot.wanted:
                continue
            anchor = dot.label
            box = QRectF(anchor.childrenBoundingRect()).translated(
                QPointF(self.mapFromScene(anchor.scenePos())))
            clear = not any(box.intersects(other) for other in placed)
            dot.always = clear or node_id in (self.center, self.selected)
            anchor.setVisible(dot.always)
            if dot.always:
                placed.append(box)
        for anchor in self.edge_labels:  # a relation's name only where it is read whole
            box = QRectF(anchor.childrenBoundingRect()).translated(
                QPointF(self.mapFromScene(anchor.scenePos())))
            clear = not any(box.intersects(other) for other in placed)
            anchor.setVisible(clear)
            if clear:
                placed.append(box)

    def _node_at(self, event) -> int | None:
        for item in self.items(event.position().toPoint()):
            node_id = item.data(NodeRole)
            if node_id is not None:
                return node_id
        return None

    def mousePressEvent(self, event) -> None:
        node_id = self._node_at(event)
        if node_id is not None and event.button() == Qt.MouseButton.LeftButton:
            self.select(node_id)
            return
        super().mousePressEvent(event)

    def mouseDoubleClickEvent(self, event) -> None:
        node_id = self._node_at(event)
        if node_id is not None:
            self.activate(node_id)
            return
        super().mouseDoubleClickEvent(event)

    def wheelEvent(self, event) -> None:
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self.zoom(1.15 if event.angleDelta().y() > 0 else 1 / 1.15)
            return
        super().wheelEvent(event)

    def zoom(self, factor: float) -> None:
        self.scale(factor, factor)
        self.zoomed = True
        self._declutter()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        directions = {Qt.Key.Key_Left: (-1, 0), Qt.Key.Key_Right: (1, 0),
                      Qt.Key.Key_Up: (0, -1), Qt.Key.Key_Down: (0, 1)}
        if key in directions and self.selected is not None:
            target = self._toward(*directions[key])
            if target is not None:
                self.select(target)
                self.centerOn(self.positions[target])
            return
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.selected is not None:
            self.activate(self.selected)
            return
        if key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom(1.2)
            return
        if key == Qt.Key.Key_Minus:
            self.zoom(1 / 1.2)
            return
        if key == Qt.Key.Key_0:
            self.fit()
            return
        super().keyPressEvent(event)

    def activate(self, node_id: int) -> None:
        """Move the picture to a node, or open a group where it is."""
        if node_id >= 0:
            self.node_activated.emit(node_id)
            return
        group = self.groups.get(node_id)
        if group is not None:
            self.opened.add(group["key"])
            self.redraw()
            self.select(group["members"][0])

    def _toward(self, dx: int, dy: int) -> int | None:
        """The node best in that direction from the selected one: neighbours first."""
        here = self.positions[self.selected]
        best, best_score = None, math.inf
        candidates = self.neighbours.get(self.selected) or set(self.positions)
        for node_id in candidates | set(self.positions):
            if node_id == self.selected:
                continue
            offset = self.positions[node_id] - here
            along = offset.x() * dx + offset.y() * dy
            if along <= 0:
                continue
            across = abs(offset.x() * dy) + abs(offset.y() * dx)
            score = along + 2 * across - (1000 if node_id in candidates else 0)
            if score < best_score:
                best, best_score = node_id, score
        return best

    def drawForeground(self, painter: QPainter, rect: QRectF) -> None:
        """The cap note and the legend, fixed in the view's corners."""
        painter.save()
        painter.resetTransform()
        area = self.viewport().rect().adjusted(8, 4, -8, -6)
        muted = self.palette().color(QPalette.ColorRole.PlaceholderText)
        if self.note:
            painter.setPen(muted)
            painter.drawText(area, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop,
                             self.note)
        if self.legend:
            self._draw_legend(painter, area)
        painter.restore()

    def _draw_legend(self, painter: QPainter, area) -> None:
        """A column of colour dots and names in the lower left corner."""
        font = QFont(self.font())
        font.setPointSizeF(font.pointSizeF() * 0.85)
        painter.setFont(font)
        metrics = QFontMetricsF(font)
        line = metrics.height() + 2
        dot = metrics.height() * 0.6
        legend = self.legend
        fits = max(2, min(LEGEND_MOST, int(area.height() * 0.5 // line)))  # half at most
        if len(legend) > fits:
            muted = self.palette().color(QPalette.ColorRole.PlaceholderText)
            more = tr("{n} more types", n=len(legend) - fits + 1)
            legend = [*legend[:fits - 1], (muted, more)]
        width = max(metrics.horizontalAdvance(t) for _, t in legend) + dot + 12
        top = area.bottom() - line * len(legend) - 4
        backing = QColor(self.palette().color(QPalette.ColorRole.Base))
        backing.setAlpha(215)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(backing)
        painter.drawRoundedRect(QRectF(area.left() - 4, top - 2, width + 8,
                                       line * len(legend) + 8), 4, 4)
        for n, (color, text) in enumerate(legend):
            y = top + n * line + 2
            painter.setPen(QPen(self.palette().color(QPalette.ColorRole.Dark), 1))
            painter.setBrush(color)
            painter.drawEllipse(QRectF(area.left(), y + (line - dot) / 2, dot, dot))
            painter.setPen(self.palette().color(QPalette.ColorRole.Text))
            painter.drawText(QRectF(area.left() + dot + 6, y, width, line),
                             Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, text)


DESCRIBED_AT_MOST = 40  # links a screen reader reads out; the Facts tab has them all


def described(graph: dict[str, Any]) -> str:
    """The picture in words, for a screen reader: the chosen node and each link drawn from
    it ("Mochi: User has a dog named Mochi; …")."""
    names = {n["id"]: n["name"] for n in graph["nodes"]}
    center = names.get(graph["center"], "")
    links = [f"{names.get(e['source_id'], '?')} {shown_relation(e['relation'])} "
             f"{names.get(e['target_id'], '?')}" for e in graph["edges"]
             if graph["center"] in (e["source_id"], e["target_id"])]
    more = len(links) - DESCRIBED_AT_MOST
    said = "; ".join(links[:DESCRIBED_AT_MOST]) + (
        tr("; and {n} more", n=more) if more > 0 else "")
    return tr("{node}: {links}", node=center, links=said) if links else \
        tr("{node}, linked to nothing", node=center)
