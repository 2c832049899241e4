"""Export and import of the whole memory graph.

JSON is the lossless format: every column of every node and edge (names are normalised
again on import), in id order, one row per line with sorted keys and no timestamp of its
own, so exporting, importing into an empty store and exporting again gives the same
bytes. Both directions stream, so a memory of millions of rows never sits in memory
whole; import lives in `importing`. GraphML is for looking at the graph in Gephi or yEd;
it is written, not read.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from core.i18n import tr
from core.store import GraphStore
from core.store.counts import extra_line, memory_counts, shown_counts_line
from core.store.exchange_format import (
    EDGE_COLUMNS,
    FORMAT,
    NODE_COLUMNS,
    VERSION,
    ExchangeError,
    ImportCancelled,
)
from core.store.importing import import_json

__all__ = ["ExchangeError", "ImportCancelled", "export_graphml", "export_json",
           "import_json"]


# -- export ------------------------------------------------------------------------------

def _json_lines(store: GraphStore) -> Iterator[str]:
    """The export's text, a row at a time."""
    yield f'{{"format": {json.dumps(FORMAT)}, "version": {VERSION},\n'
    for table, columns in (("nodes", NODE_COLUMNS), ("edges", EDGE_COLUMNS)):
        yield f' "{table}": ['
        cursor = store.conn.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY id")
        separator = "\n  "
        while batch := cursor.fetchmany(5000):
            for row in batch:
                yield separator + json.dumps(dict(zip(columns, row, strict=True)),
                                             ensure_ascii=False, sort_keys=True)
                separator = ",\n  "
        yield "\n ]" + (",\n" if table == "nodes" else "\n}\n")


def _write_atomically(path: Path, write: Any) -> int:
    """Write through `write(stream)` to a temporary file, then rename it over `path`: a
    failed export never leaves half a file under the chosen name. Answers the size."""
    path = Path(path)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "wb") as stream:
            write(stream)
            stream.flush()
            os.fsync(stream.fileno())
            size = stream.tell()
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return size


def write_text_atomically(path: Path, text: str) -> int:
    """A text file written whole or not at all (a conversation exported as Markdown)."""
    return _write_atomically(path, lambda stream: stream.write(text.encode()))


def export_json(store: GraphStore, path: str | Path) -> dict[str, Any]:
    def write(stream: BinaryIO) -> None:
        for text in _json_lines(store):
            stream.write(text.encode())

    # One read transaction: the counts describe exactly the rows written.
    store.conn.execute("BEGIN")
    try:
        size = _write_atomically(Path(path), write)
        counts = memory_counts(store.conn)
    finally:
        store.conn.execute("COMMIT")
    return {"path": str(path), **counts, "bytes": size,
            "summary": tr("exported {counts}, with {extra}", counts=shown_counts_line(counts),
                          extra=extra_line(counts))}


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
    size = _write_atomically(Path(path), lambda stream: tree.write(
        stream, encoding="utf-8", xml_declaration=True))
    counts = memory_counts(store.conn)
    return {"path": str(path), **counts, "bytes": size,
            "summary": tr("exported {counts}, with {extra}", counts=shown_counts_line(counts),
                          extra=extra_line(counts))}
