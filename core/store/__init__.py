"""The SQLite graph store: nodes, edges, change log and full-text search."""

from core.store import describe  # noqa: F401  (installs how changes are said in words)
from core.store.graph import PERSONA_NODE, GraphStore, Row, StoreError, describe_sqlite_error
from core.store.schema import LATEST_VERSION

__all__ = [
    "LATEST_VERSION",
    "PERSONA_NODE",
    "GraphStore",
    "Row",
    "StoreError",
    "describe_sqlite_error",
]
