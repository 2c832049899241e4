"""A crowded neighbourhood, grouped: when the centre has many neighbours, those that share
a relation and a type ("visited", City: 20 places) become one group node, drawn once with
its count and the type's colour, which opens on Enter or a double click. A person with 31
facts is then a picture, not a star of lines; what tells them apart (the most mentioned,
what the last turn changed) stays single.
"""

from __future__ import annotations

import zlib
from collections import defaultdict
from typing import Any

CROWD = 16  # more neighbours than this are grouped
SMALLEST_GROUP = 3  # fewer alike stay single
SINGLE = 5  # the most mentioned neighbours (mentioned more than once) stay single


def group_key(relation: str, type_: str | None) -> str:
    return f"{relation.casefold()}\x1f{(type_ or '').casefold()}"


def group_id(key: str) -> int:
    """A group's node id: negative (no real node has one), and the same for the same
    relation and type in every drawing, so the selection survives a redraw."""
    return -(1 + zlib.crc32(key.encode()))


def grouped(graph: dict[str, Any], opened: set[str], keep: set[int]) -> dict[str, Any]:
    """`graph` with the centre's crowded neighbours folded into group nodes, except the
    groups in `opened` (their keys) and the nodes in `keep`. What hangs only off folded
    nodes is left out of the drawing until their group is opened."""
    center = graph["center"]
    nodes = {n["id"]: n for n in graph["nodes"]}
    first = {i for i, n in nodes.items() if n.get("hop", 1) == 1 and i != center}
    if len(first) <= CROWD:
        return graph
    mentioned = sorted((i for i in first if nodes[i].get("mention_count", 1) > 1),
                       key=lambda i: -nodes[i].get("mention_count", 1))[:SINGLE]
    single = keep | set(mentioned)
    members: dict[str, list[int]] = defaultdict(list)
    relation_of: dict[int, str] = {}
    for edge in graph["edges"]:
        other = edge["target_id"] if edge["source_id"] == center else (
            edge["source_id"] if edge["target_id"] == center else None)
        if other in first and other not in relation_of and other not in single:
            relation_of[other] = edge["relation"]
            members[group_key(edge["relation"], nodes[other].get("type"))].append(other)
    folded: dict[int, int] = {}  # node id -> its group's id
    groups = []
    for key, ids in members.items():
        if len(ids) < SMALLEST_GROUP or key in opened:
            continue
        gid = group_id(key)
        folded.update(dict.fromkeys(ids, gid))
        relation, type_ = relation_of[ids[0]], nodes[ids[0]].get("type")
        name = " · ".join(part for part in (relation, type_, str(len(ids))) if part)
        groups.append({"id": gid, "name": name, "kind": "group", "type": type_,
                       "mention_count": len(ids), "hop": 1, "relation": relation,
                       "key": key, "members": ids})
    if not groups:
        return graph
    reached: dict[int, set[int]] = defaultdict(set)
    for edge in graph["edges"]:
        for a, b in ((edge["source_id"], edge["target_id"]),
                     (edge["target_id"], edge["source_id"])):
            if a in first and b not in first and b != center:
                reached[b].add(a)
    hidden = set(folded) | {b for b, via in reached.items() if via <= folded.keys()}
    drawn = [n for n in graph["nodes"] if n["id"] not in hidden] + groups
    edges = [e for e in graph["edges"]
             if e["source_id"] not in hidden and e["target_id"] not in hidden]
    edges += [{"id": g["id"], "source_id": center, "target_id": g["id"],
               "relation": g["relation"], "group": True} for g in groups]
    return {**graph, "nodes": drawn, "edges": edges}
