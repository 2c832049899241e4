"""How much the memory holds, defined once: the status bar, the export's report, a backup's
description and the review count all say the same numbers.

A *fact* is an active general memory (what the assistant knows about the person and the
world); persona facts, tasks, and the history of replaced, archived or deleted facts are
counted apart, never mixed into it.
"""

from __future__ import annotations

import sqlite3
from typing import Any

COUNTS_SQL = """
SELECT
  (SELECT count(*) FROM edges WHERE status = 'active' AND category = 'general') AS facts,
  (SELECT count(*) FROM edges WHERE status = 'active' AND category != 'general') AS other_facts,
  (SELECT count(*) FROM edges WHERE status != 'active') AS history,
  (SELECT count(*) FROM nodes WHERE kind IN ('entity', 'state') AND deleted_at IS NULL)
      AS entities,
  (SELECT count(*) FROM nodes WHERE kind = 'task' AND deleted_at IS NULL) AS tasks,
  (SELECT count(*) FROM nodes) AS nodes,
  (SELECT count(*) FROM edges) AS edges
"""
FACTS_SQL = "SELECT count(*) FROM edges WHERE status = 'active' AND category = 'general'"


def memory_counts(conn: sqlite3.Connection) -> dict[str, int]:
    row = conn.execute(COUNTS_SQL).fetchone()
    return dict(zip(("facts", "other_facts", "history", "entities", "tasks", "nodes",
                     "edges"), row, strict=True))


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    return f"{n:,} {noun if n == 1 else nouns or noun + 's'}"


def counts_line(counts: dict[str, Any]) -> str:
    """'52 facts · 30 entities · 3 tasks': the words the window shows."""
    return (f"{plural(counts['facts'], 'fact')} · "
            f"{plural(counts['entities'], 'entity', 'entities')} · "
            f"{plural(counts['tasks'], 'task')}")


def extra_line(counts: dict[str, Any]) -> str:
    """What the export holds beyond the line above, so its totals add up."""
    return (f"{plural(counts['other_facts'], 'persona or task fact')} and "
            f"{plural(counts['history'], 'replaced, archived or deleted fact')}")
