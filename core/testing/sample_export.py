"""A synthetic memory export of any size, for the import tests and the import benchmark.

Written a row at a time in the export's own layout, so a file of millions of rows costs
no more memory to make than to read. Every fifth fact is a superseded one that points at
the next, and node names carry a non-ASCII word, so the import's checks and its merge
have real work to do.
"""

from __future__ import annotations

import json
from pathlib import Path

from core.store.exchange_format import FORMAT, VERSION

T0 = 1_700_000_000.0


def node(i: int) -> dict:
    return {"id": i, "name": f"Thing {i} 東西", "kind": "entity", "type": "Thing",
            "mention_count": 1 + i % 5, "created_at": T0 + i, "updated_at": T0 + i,
            "description": f"note {i}" if i % 3 == 0 else None, "state": None,
            "summary": None, "deleted_at": None}


def edge(i: int, nodes: int) -> dict:
    superseded = i % 5 == 0 and i > 1
    lap = (i - 1) // nodes  # more edges than nodes: the same pair again, a new relation
    relation = "relates to" + (f" ({lap})" if lap else "")
    return {"id": i, "source_id": (i - 1) % nodes + 1, "target_id": (i * 7919) % nodes + 1,
            "relation": relation if not superseded else f"once related {i}",
            "confidence": 0.9, "status": "superseded" if superseded else "active",
            "valid_from": T0 + i, "valid_to": None,
            "superseded_by": i - 1 if superseded else None, "source_message": None,
            "created_at": T0 + i, "updated_at": T0 + i, "category": "general",
            "mention_count": 1, "temporal_tag": None, "archived_at": None}


def write_export(path: str | Path, nodes: int, edges: int) -> Path:
    """An export of `nodes` nodes and `edges` edges at `path`."""
    path = Path(path)
    with path.open("w", encoding="utf-8") as out:
        out.write(f'{{"format": {json.dumps(FORMAT)}, "version": {VERSION},\n "nodes": [')
        for i in range(1, nodes + 1):
            out.write(("\n  " if i == 1 else ",\n  ")
                      + json.dumps(node(i), ensure_ascii=False, sort_keys=True))
        out.write('\n ],\n "edges": [')
        for i in range(1, edges + 1):
            out.write(("\n  " if i == 1 else ",\n  ")
                      + json.dumps(edge(i, nodes), sort_keys=True))
        out.write("\n ]\n}\n")
    return path
