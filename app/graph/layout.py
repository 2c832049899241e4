"""A radial layout for a neighbourhood: the chosen node in the middle, its neighbours on a
ring around it, their neighbours on an outer ring next to the one that leads to them.

Rings grow with the number of labels they carry, so neighbouring labels do not overlap in
the common case; the layout is deterministic, so the picture does not jump on refresh.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

Point = tuple[float, float]
LABEL_AT = 0.7  # where along a line its label sits, from the inner end


def radial_layout(center: int, nodes: Sequence[dict[str, Any]],
                  edges: Sequence[dict[str, Any]], label_width: Callable[[str], float],
                  spacing: float) -> dict[int, Point]:
    """Positions for every node. `label_width(name)` measures a label; `spacing` is the
    least gap between two neighbours on a ring (a few text lines)."""
    names = {n["id"]: n["name"] for n in nodes}
    hop = {n["id"]: n.get("hop", 1) for n in nodes}
    first = sorted((i for i in names if hop[i] == 1), key=lambda i: names[i].casefold())
    parent: dict[int, int] = {}
    for edge in edges:
        for a, b in ((edge["source_id"], edge["target_id"]), (edge["target_id"],
                                                               edge["source_id"])):
            if hop.get(a) == 1 and hop.get(b) == 2 and b not in parent:
                parent[b] = a
    children: dict[int, list[int]] = defaultdict(list)
    for child, par in parent.items():
        children[par].append(child)
    orphans = [i for i in names if hop[i] == 2 and i not in parent]

    positions: dict[int, Point] = {center: (0.0, 0.0)}
    relation: dict[int, str] = {}  # the label on the line that leads to each node
    for edge in edges:
        for a, b in ((edge["source_id"], edge["target_id"]), (edge["target_id"],
                                                               edge["source_id"])):
            if hop.get(b, 0) == hop.get(a, 0) + 1:
                relation.setdefault(b, edge.get("relation", ""))

    def room(node: int) -> float:  # what a node needs along its ring: its label or its line's
        return max(label_width(names[node]), label_width(relation.get(node, ""))) + spacing

    inner_needed = sum(room(i) for i in first)
    # line labels sit at LABEL_AT of the radius, so that smaller circle must hold them
    r1 = max(spacing * 7, inner_needed / (2 * math.pi * LABEL_AT), label_width(names[center]))
    outer = [c for p in first for c in sorted(children[p], key=lambda i: names[i].casefold())]
    outer += orphans
    # Each inner node gets an arc in proportion to the room it and its children need, so
    # the children sit next to their parent on the outer ring.
    weights = {p: max(room(p), sum(room(c) for c in children[p]) / 2) for p in first}
    total = sum(weights.values()) or 1.0
    angle = -math.pi / 2
    arcs: dict[int, tuple[float, float]] = {}
    for node in first:
        span = 2 * math.pi * weights[node] / total
        arcs[node] = (angle, span)
        middle = angle + span / 2
        positions[node] = (r1 * math.cos(middle), r1 * math.sin(middle))
        angle += span
    if outer:
        outer_needed = sum(room(i) for i in outer)
        r2 = max(r1 + spacing * 6, outer_needed / (2 * math.pi))
        for par in first:
            kids = sorted(children[par], key=lambda i: names[i].casefold())
            start, span = arcs[par]
            for k, child in enumerate(kids):
                a = start + span * (k + 0.5) / len(kids)
                positions[child] = (r2 * math.cos(a), r2 * math.sin(a))
        for k, orphan in enumerate(orphans):
            a = 2 * math.pi * (k + 0.5) / len(orphans)
            positions[orphan] = ((r2 + spacing * 4) * math.cos(a),
                                 (r2 + spacing * 4) * math.sin(a))
    return positions
