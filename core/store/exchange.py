"""Export and import of the whole memory graph.

JSON is the lossless format: every column of every node and edge (names are normalised
again on import), in id order, with sorted keys and no timestamp of its own, so exporting,
importing into an empty store and exporting again gives the same bytes. GraphML is for
looking at the graph in Gephi or yEd; it is written, not read.

Import checks the whole file before writing anything: its structure against a schema (no
unknown fields, bounded strings and counts), then its references. Into an empty store the
ids are kept; into a store with memories, nodes are matched by their normalised names and a
fact that already exists is reinforced rather than duplicated. It is one logged change.
"""

from __future__ import annotations

import json
import os
import re
import stat
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from core.store import GraphStore
from core.store.graph import Row
from core.store.text import normalize_name

FORMAT = "trulymem-memory"
VERSION = 1
MAX_FILE_BYTES = 512 * 1024 * 1024
MAX_TEXT = 10_000
NODE_COLUMNS = ("id", "name", "kind", "type", "mention_count", "created_at", "updated_at",
                "description", "state", "summary", "deleted_at")
EDGE_COLUMNS = ("id", "source_id", "target_id", "relation", "confidence", "status",
                "valid_from", "valid_to", "superseded_by", "source_message", "created_at",
                "updated_at", "category", "mention_count", "temporal_tag", "archived_at")


class ExchangeError(ValueError):
    """A file that cannot be exported to or imported; nothing was changed."""


# The top level is checked with jsonschema; the rows, up to millions of them, with the
# table below, which is about fifty times faster and gives the same kind of message.
SCHEMA = {
    "type": "object", "additionalProperties": False,
    "required": ["format", "version", "nodes", "edges"],
    "properties": {
        "format": {"const": FORMAT}, "version": {"const": VERSION},
        "nodes": {"type": "array", "maxItems": 2_000_000, "items": {"type": "object"}},
        "edges": {"type": "array", "maxItems": 5_000_000, "items": {"type": "object"}},
    },
}
_VALIDATOR = Draft202012Validator(SCHEMA)


def _text(value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return "must be non-empty text"
    return f"is longer than {MAX_TEXT:,} characters" if len(value) > MAX_TEXT else None


def _optional_text(value: Any) -> str | None:
    return None if value is None else _text(value)


def _id(value: Any) -> str | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 2**62
    return None if ok else "must be a whole number from 1"


def _optional_id(value: Any) -> str | None:
    return None if value is None else _id(value)


def _count(value: Any) -> str | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 2**31
    return None if ok else "must be a whole number from 0"


def _time(value: Any) -> str | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1e11
    return None if ok else "must be a time in seconds since 1970"


def _optional_time(value: Any) -> str | None:
    return None if value is None else _time(value)


def _confidence(value: Any) -> str | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1
    return None if ok else "must be a number from 0 to 1"


def _one_of(*choices: str):
    def check(value: Any) -> str | None:
        return None if value in choices else f"must be one of {', '.join(choices)}"
    return check


NODE_FIELDS = {
    "id": _id, "name": _text, "kind": _one_of("entity", "task", "persona", "state"),
    "type": _optional_text, "mention_count": _count, "created_at": _time,
    "updated_at": _time, "description": _optional_text, "state": _optional_text,
    "summary": _optional_text, "deleted_at": _optional_time,
}
EDGE_FIELDS = {
    "id": _id, "source_id": _id, "target_id": _id, "relation": _text,
    "confidence": _confidence,
    "status": _one_of("active", "superseded", "deleted", "archived"),
    "valid_from": _optional_time, "valid_to": _optional_time, "superseded_by": _optional_id,
    "source_message": _optional_text, "created_at": _time, "updated_at": _time,
    "category": _one_of("general", "persona", "task"), "mention_count": _count,
    "temporal_tag": _optional_text, "archived_at": _optional_time,
}
REQUIRED = {"nodes": ("id", "name", "kind", "created_at", "updated_at"),
            "edges": ("id", "source_id", "target_id", "relation", "status", "created_at",
                      "updated_at")}


def _check_rows(table: str, rows: list[dict[str, Any]], fields: dict[str, Any]) -> None:
    required = REQUIRED[table]
    for n, row in enumerate(rows):
        unknown = row.keys() - fields.keys()
        if unknown:
            raise ExchangeError(f"at {table}/{n}: unknown field(s) "
                                f"{', '.join(sorted(unknown)[:5])}")
        missing = [name for name in required if name not in row]
        if missing:
            raise ExchangeError(f"at {table}/{n}: missing {', '.join(missing)}")
        for name, value in row.items():
            problem = fields[name](value)
            if problem:
                raise ExchangeError(f"at {table}/{n}/{name}: {problem}")


# -- export ------------------------------------------------------------------------------

def memory_document(store: GraphStore) -> dict[str, Any]:
    nodes = store.query(f"SELECT {', '.join(NODE_COLUMNS)} FROM nodes ORDER BY id")
    edges = store.query(f"SELECT {', '.join(EDGE_COLUMNS)} FROM edges ORDER BY id")
    return {"format": FORMAT, "version": VERSION, "nodes": nodes, "edges": edges}


def _write_atomically(path: Path, data: bytes) -> None:
    path = Path(path)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def export_json(store: GraphStore, path: str | Path) -> dict[str, Any]:
    document = memory_document(store)
    data = json.dumps(document, ensure_ascii=False, sort_keys=True, indent=1).encode()
    _write_atomically(Path(path), data + b"\n")
    return {"path": str(path), "nodes": len(document["nodes"]),
            "edges": len(document["edges"]), "bytes": len(data) + 1}


_XML_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _xml_text(value: Any) -> str:
    return _XML_UNSAFE.sub("\ufffd", str(value))


def export_graphml(store: GraphStore, path: str | Path) -> dict[str, Any]:
    """GraphML with a `label` on nodes and edges, which Gephi and yEd show by default."""
    ns = "http://graphml.graphdrawing.org/xmlns"
    ET.register_namespace("", ns)
    root = ET.Element(f"{{{ns}}}graphml")
    keys = [("label", "node", "string"), ("kind", "node", "string"),
            ("type", "node", "string"), ("mentions", "node", "int"),
            ("deleted", "node", "boolean"), ("label", "edge", "string"),
            ("status", "edge", "string"), ("category", "edge", "string"),
            ("confidence", "edge", "double"), ("mentions", "edge", "int")]
    key_ids = {}
    for n, (name, domain, kind) in enumerate(keys):
        key_ids[(name, domain)] = f"d{n}"
        ET.SubElement(root, f"{{{ns}}}key", {"id": f"d{n}", "for": domain,
                                             "attr.name": name, "attr.type": kind})
    graph = ET.SubElement(root, f"{{{ns}}}graph", {"id": "memory", "edgedefault": "directed"})

    def data(element: ET.Element, domain: str, name: str, value: Any) -> None:
        if value is not None:
            ET.SubElement(element, f"{{{ns}}}data",
                          {"key": key_ids[(name, domain)]}).text = _xml_text(value)

    nodes = store.query("SELECT id, name, kind, type, mention_count, deleted_at FROM nodes"
                        " ORDER BY id")
    for node in nodes:
        element = ET.SubElement(graph, f"{{{ns}}}node", {"id": f"n{node['id']}"})
        data(element, "node", "label", node["name"])
        data(element, "node", "kind", node["kind"])
        data(element, "node", "type", node["type"])
        data(element, "node", "mentions", node["mention_count"])
        data(element, "node", "deleted", "true" if node["deleted_at"] else "false")
    edges = store.query("SELECT id, source_id, target_id, relation, status, category,"
                        " confidence, mention_count FROM edges ORDER BY id")
    for edge in edges:
        element = ET.SubElement(graph, f"{{{ns}}}edge", {
            "id": f"e{edge['id']}", "source": f"n{edge['source_id']}",
            "target": f"n{edge['target_id']}"})
        data(element, "edge", "label", edge["relation"])
        data(element, "edge", "status", edge["status"])
        data(element, "edge", "category", edge["category"])
        data(element, "edge", "confidence", edge["confidence"])
        data(element, "edge", "mentions", edge["mention_count"])
    tree = ET.ElementTree(root)
    ET.indent(tree, space=" ")
    with tempfile.SpooledTemporaryFile() as buffer:
        tree.write(buffer, encoding="utf-8", xml_declaration=True)
        buffer.seek(0)
        payload = buffer.read()
    _write_atomically(Path(path), payload)
    return {"path": str(path), "nodes": len(nodes), "edges": len(edges),
            "bytes": len(payload)}


# -- import ------------------------------------------------------------------------------

def _read_regular_file(path: Path, limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes, counted as they are read.

    A device (/dev/zero behind a link), a pipe or a folder is refused before reading;
    opening without blocking keeps a FIFO with no writer from hanging the backend, and the
    cap holds even for a file that grows, or lies about its size, while it is read.
    """
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(descriptor, "rb") as stream:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise ExchangeError(f"{path.name} is not a regular file (it is a device, a pipe "
                                "or a folder); choose an export file")
        data = stream.read(limit + 1)
    if len(data) > limit:
        raise ExchangeError(f"{path.name} is too large: the most TrulyMEM imports is "
                            f"{limit / 1e6:.0f} MB")
    return data


def read_document(path: str | Path) -> dict[str, Any]:
    """The file's content, checked against the schema and its own references."""
    path = Path(path)
    try:
        data = _read_regular_file(path, MAX_FILE_BYTES)
    except OSError as error:
        raise ExchangeError(f"cannot read {path.name}: {error.strerror}") from None
    try:
        document = json.loads(data)
    except (ValueError, RecursionError) as error:
        raise ExchangeError(f"{path.name} is not valid JSON ({error})") from None
    error = best_match(_VALIDATOR.iter_errors(document))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "the top level"
        message = error.message if len(error.message) < 300 else \
            f"the value breaks the rule {error.validator} = {error.validator_value!r}"
        raise ExchangeError(f"{path.name} is not a TrulyMEM memory export: at {where}: "
                            f"{message}")
    try:
        _check_rows("nodes", document["nodes"], NODE_FIELDS)
        _check_rows("edges", document["edges"], EDGE_FIELDS)
    except ExchangeError as problem:
        raise ExchangeError(f"{path.name} is not a TrulyMEM memory export: {problem}") \
            from None
    _check_references(document)
    return document


def _check_references(document: dict[str, Any]) -> None:
    node_ids, names = set(), set()
    for node in document["nodes"]:
        if node["id"] in node_ids:
            raise ExchangeError(f"node id {node['id']} appears twice")
        node_ids.add(node["id"])
        key = normalize_name(node["name"])
        if key in names:
            raise ExchangeError(f"two nodes have the same name {node['name']!r}")
        names.add(key)
    edge_ids = {e["id"] for e in document["edges"]}
    if len(edge_ids) != len(document["edges"]):
        raise ExchangeError("an edge id appears twice")
    active = set()
    for edge in document["edges"]:
        for end in ("source_id", "target_id"):
            if edge[end] not in node_ids:
                raise ExchangeError(f"edge {edge['id']} points at node {edge[end]}, which "
                                    "the file does not have")
        successor = edge.get("superseded_by")
        if successor is not None and successor not in edge_ids:
            raise ExchangeError(f"edge {edge['id']} is superseded by an edge the file does "
                                "not have")
        if edge["status"] == "active":
            key = (edge["source_id"], normalize_name(edge["relation"]), edge["target_id"])
            if key in active:
                raise ExchangeError(f"edge {edge['id']} repeats an active fact")
            active.add(key)


def import_json(store: GraphStore, path: str | Path) -> dict[str, Any]:
    document = read_document(path)
    empty = store.query_one("SELECT (SELECT count(*) FROM nodes) + (SELECT count(*) FROM"
                            " edges) AS n")["n"] == 0
    with store.write("user_import", {"file": Path(path).name}, actor="user") as change:
        report = _load_exact(store, document) if empty else _merge(store, document)
        change.summary = report["summary"]
    return {**report, "change_id": change.id}


def _node_values(node: Row) -> Row:
    values = {c: node.get(c) for c in NODE_COLUMNS}
    values["norm_name"] = normalize_name(node["name"])
    values["mention_count"] = node.get("mention_count", 1)
    return values


def _edge_values(edge: Row) -> Row:
    values = {c: edge.get(c) for c in EDGE_COLUMNS}
    values["norm_relation"] = normalize_name(edge["relation"])
    values["confidence"] = edge.get("confidence", 1.0)
    values["category"] = edge.get("category") or "general"
    values["mention_count"] = edge.get("mention_count", 1)
    return values


def _load_exact(store: GraphStore, document: dict[str, Any]) -> dict[str, Any]:
    """Into an empty store: every row as it was, ids included (round trips exactly)."""
    for node in document["nodes"]:
        store.insert("nodes", _node_values(node))
    for edge in document["edges"]:
        store.insert("edges", {**_edge_values(edge), "superseded_by": None})
    for edge in document["edges"]:
        if edge.get("superseded_by"):
            store.update("edges", edge["id"], {"superseded_by": edge["superseded_by"]})
    nodes, edges = len(document["nodes"]), len(document["edges"])
    return {"nodes_added": nodes, "nodes_matched": 0, "edges_added": edges,
            "edges_merged": 0,
            "summary": f"imported {nodes} nodes and {edges} edges into an empty memory"}


def _merge(store: GraphStore, document: dict[str, Any]) -> dict[str, Any]:
    """Into a store with memories: match nodes by normalised name, reinforce known facts."""
    node_map: dict[int, int] = {}
    added = matched = 0
    for node in document["nodes"]:
        existing = store.find_node(node["name"])
        if existing is not None:
            node_map[node["id"]] = existing["id"]
            store.update("nodes", existing["id"], {
                "mention_count": existing["mention_count"] + node.get("mention_count", 1),
                "updated_at": max(existing["updated_at"], node["updated_at"])})
            matched += 1
        else:
            values = {k: v for k, v in _node_values(node).items() if k != "id"}
            node_map[node["id"]] = store.insert("nodes", values)
            added += 1
    edge_map: dict[int, int] = {}
    edges_added = merged = 0
    for edge in document["edges"]:
        source, target = node_map[edge["source_id"]], node_map[edge["target_id"]]
        twin = store.active_edge(source, edge["relation"], target) \
            if edge["status"] == "active" else None
        if twin is not None:
            store.update("edges", twin["id"], {
                "mention_count": twin["mention_count"] + edge.get("mention_count", 1),
                "confidence": max(twin["confidence"], edge.get("confidence", 1.0))})
            edge_map[edge["id"]] = twin["id"]
            merged += 1
            continue
        values = {k: v for k, v in _edge_values(edge).items() if k != "id"}
        edge_map[edge["id"]] = store.insert("edges", {**values, "source_id": source,
                                                      "target_id": target,
                                                      "superseded_by": None})
        edges_added += 1
    for edge in document["edges"]:
        new_id = edge_map[edge["id"]]
        if edge.get("superseded_by") and new_id != edge_map.get(edge["superseded_by"]):
            row = store.row("edges", new_id)
            if row["status"] != "active":
                store.update("edges", new_id, {"superseded_by": edge_map[edge["superseded_by"]]})
    summary = (f"merged an export: {added} nodes added, {matched} matched by name; "
               f"{edges_added} edges added, {merged} already known and reinforced")
    return {"nodes_added": added, "nodes_matched": matched, "edges_added": edges_added,
            "edges_merged": merged, "summary": summary}
