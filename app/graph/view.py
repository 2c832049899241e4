"""The neighbourhood picture: the chosen node, its neighbours and the relations between
them, drawn in a QGraphicsView. Click or arrow keys select a neighbour, Enter or a double
click moves to it; + and - zoom, 0 fits the picture to the view."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QKeyEvent, QPainter, QPalette, QPen
from PySide6.QtWidgets import (
    QGraphicsEllipseItem,
    QGraphicsLineItem,
    QGraphicsRectItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
    QGraphicsView,
    QWidget,
)

from app.graph.layout import LABEL_AT, radial_layout

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
    colors: dict[str, QColor]

    @classmethod
    def of(cls, widget: QWidget) -> Look:
        palette, font = widget.palette(), widget.font()
        small = QFont(font)
        small.setPointSizeF(font.pointSizeF() * 0.85)
        return cls(palette, font, small, palette.color(QPalette.ColorRole.Text),
                   palette.color(QPalette.ColorRole.PlaceholderText),
                   palette.color(QPalette.ColorRole.Highlight), kind_colors(palette))


def kind_colors(palette: QPalette) -> dict[str, QColor]:
    """Node colours by kind, all taken from the palette so light and dark both work."""
    return {"persona": palette.color(QPalette.ColorRole.Accent),
            "task": palette.color(QPalette.ColorRole.Link),
            "entity": palette.color(QPalette.ColorRole.Mid),
            "state": palette.color(QPalette.ColorRole.Mid)}


class NeighbourhoodView(QGraphicsView):
    node_selected = Signal(int)
    node_activated = Signal(int)  # move the picture to this node

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("neighbourhoodView")
        self.setAccessibleName("Neighbourhood of the chosen node")
        self.setScene(QGraphicsScene(self))
        self.setRenderHints(QPainter.RenderHint.Antialiasing
                            | QPainter.RenderHint.TextAntialiasing)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.center: int | None = None
        self.selected: int | None = None
        self.positions: dict[int, QPointF] = {}
        self.neighbours: dict[int, set[int]] = {}
        self.node_items: dict[int, QGraphicsEllipseItem] = {}
        self.highlighted: set[int] = set()
        self.highlighted_edges: set[int] = set()  # changed by the last turn: thick
        self.recalled_edges: set[int] = set()  # read by it: in the accent colour
        self.note = ""

    # -- drawing --------------------------------------------------------------------------

    def show_graph(self, graph: dict[str, Any]) -> None:
        """Lay out and draw one GET_SUBGRAPH answer."""
        scene = self.scene()
        scene.clear()
        self.node_items.clear()
        look = Look.of(self)
        metrics = QFontMetricsF(look.font)
        self.center = graph["center"]
        nodes = {n["id"]: n for n in graph["nodes"]}
        spots = radial_layout(self.center, graph["nodes"], graph["edges"],
                              metrics.horizontalAdvance, metrics.height() * 1.5)
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
            if a != b:  # nearer the outer end, where the ring leaves room
                inner, outer = (a, b) if a.manhattanLength() <= b.manhattanLength() else (b, a)
                self._edge_label(edge["relation"], inner + (outer - inner) * LABEL_AT, look)
        for node in nodes.values():
            self._node(node, look)
        box = scene.itemsBoundingRect().adjusted(-40, -40, 40, 40)
        scene.setSceneRect(box)
        self.note = (f"Only the first {graph['limit']} nodes are shown: this neighbourhood "
                     "has more."
                     if graph.get("capped") else "")
        self.select(self.center)
        self.fit()

    def _edge_label(self, text: str, middle: QPointF, look: Look) -> None:
        label = QGraphicsSimpleTextItem(text if len(text) <= 40 else text[:39] + "…")
        label.setFont(look.small)
        label.setBrush(look.muted)
        rect = label.boundingRect()
        label.setPos(middle.x() - rect.width() / 2, middle.y() - rect.height() / 2)
        backing = QGraphicsRectItem(label.sceneBoundingRect().adjusted(-2, 0, 2, 0))
        backing.setBrush(look.palette.color(QPalette.ColorRole.Base))
        backing.setPen(Qt.PenStyle.NoPen)
        backing.setZValue(-1)
        label.setZValue(-1)
        self.scene().addItem(backing)
        self.scene().addItem(label)

    def _node(self, node: dict[str, Any], look: Look) -> None:
        point = self.positions[node["id"]]
        radius = 7 + 3 * math.log2(1 + max(1, node.get("mention_count", 1)))
        if node["id"] == self.center:
            radius += 4
        circle = QGraphicsEllipseItem(QRectF(-radius, -radius, 2 * radius, 2 * radius))
        circle.setPos(point)
        fill = QColor(look.colors.get(node["kind"], look.colors["entity"]))
        if node.get("deleted_at"):
            fill.setAlpha(70)
        circle.setBrush(QBrush(fill))
        hot = node["id"] in self.highlighted
        circle.setPen(QPen(look.accent if hot else look.palette.color(QPalette.ColorRole.Dark),
                           3 if hot else 1))
        circle.setData(NodeRole, node["id"])
        circle.setToolTip(f"{node['name']} ({node['kind']}, {node.get('mention_count', 1)} "
                          "mentions)")
        self.scene().addItem(circle)
        self.node_items[node["id"]] = circle
        name = node["name"] if len(node["name"]) <= 48 else node["name"][:47] + "…"
        label = QGraphicsSimpleTextItem(name)
        bold = QFont(look.font)
        bold.setBold(node["id"] == self.center or hot)
        label.setFont(bold)
        label.setBrush(look.text)
        rect = label.boundingRect()
        label.setPos(point.x() - rect.width() / 2, point.y() + radius + 2)
        label.setData(NodeRole, node["id"])
        backing = QGraphicsRectItem(label.sceneBoundingRect().adjusted(-3, 0, 3, 0))
        backing.setBrush(look.palette.color(QPalette.ColorRole.Base))
        backing.setPen(Qt.PenStyle.NoPen)
        backing.setOpacity(0.85)
        self.scene().addItem(backing)
        self.scene().addItem(label)

    # -- selection and keys ---------------------------------------------------------------

    def select(self, node_id: int | None) -> None:
        self.selected = node_id
        for item_id, item in self.node_items.items():
            pen = item.pen()
            if item_id == node_id:
                pen.setColor(self.palette().color(QPalette.ColorRole.Highlight))
                pen.setWidthF(4)
            elif item_id not in self.highlighted:
                pen.setColor(self.palette().color(QPalette.ColorRole.Dark))
                pen.setWidthF(1)
            item.setPen(pen)
        if node_id is not None:
            self.node_selected.emit(node_id)

    def fit(self) -> None:
        self.fitInView(self.scene().sceneRect(), Qt.AspectRatioMode.KeepAspectRatio)
        if self.transform().m11() > 1.5:  # a tiny neighbourhood is not blown up
            self.resetTransform()
            self.scale(1.5, 1.5)

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
            self.node_activated.emit(node_id)
            return
        super().mouseDoubleClickEvent(event)

    def wheelEvent(self, event) -> None:
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self.zoom(1.15 if event.angleDelta().y() > 0 else 1 / 1.15)
            return
        super().wheelEvent(event)

    def zoom(self, factor: float) -> None:
        self.scale(factor, factor)

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
            self.node_activated.emit(self.selected)
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
        """The cap note, fixed in the view's corner."""
        if not self.note:
            return
        painter.save()
        painter.resetTransform()
        painter.setPen(self.palette().color(QPalette.ColorRole.PlaceholderText))
        painter.drawText(self.viewport().rect().adjusted(8, 4, -8, -4),
                         Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop, self.note)
        painter.restore()
