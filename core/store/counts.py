"""How much the memory holds, defined once: the status bar, the export's report, a backup's
description and the review count all say the same numbers.

A *fact* is an active general memory (what the assistant knows about the person and the
world); persona facts, tasks, and the history of replaced, archived or deleted facts are
counted apart, never mixed into it.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from typing import Any

from core.i18n import tr

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


def _edge_kinds(image: dict[str, Any] | None) -> list[str]:
    if image is None:
        return []
    if image["status"] != "active":
        return ["edges", "history"]
    return ["edges", "facts" if image.get("category", "general") == "general"
            else "other_facts"]


def _node_kinds(image: dict[str, Any] | None) -> list[str]:
    if image is None:
        return []
    alive = image.get("deleted_at") is None
    if image["kind"] in ("entity", "state") and alive:
        return ["nodes", "entities"]
    if image["kind"] == "task" and alive:
        return ["nodes", "tasks"]
    return ["nodes"]


def delta(ops: list[dict[str, Any]]) -> Counter | None:
    """How a change moved the counts, from its row images; None for a bulk change (an
    import), whose rows are not imaged: count again then. Counting a large memory takes
    a noticeable time, and every change is announced with its counts."""
    moved: Counter = Counter()
    for op in ops:
        if "id" not in op:
            return None
        kinds = _edge_kinds if op["table"] == "edges" else _node_kinds
        moved.update(kinds(op["after"]))
        moved.subtract(kinds(op["before"]))
    return moved


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    return f"{n:,} {noun if n == 1 else nouns or noun + 's'}"


def counts_line(counts: dict[str, Any]) -> str:
    """'52 facts · 30 entities · 3 tasks': what the model reads (memory_introspect)."""
    return (f"{plural(counts['facts'], 'fact')} · "
            f"{plural(counts['entities'], 'entity', 'entities')} · "
            f"{plural(counts['tasks'], 'task')}")


def shown_counts_line(counts: dict[str, Any]) -> str:
    """The counts line in the person's language: the status bar and the export report."""
    facts, entities, tasks = counts["facts"], counts["entities"], counts["tasks"]
    return " · ".join([
        tr("1 fact") if facts == 1 else tr("{n} facts", n=f"{facts:,}"),
        tr("1 entity") if entities == 1 else tr("{n} entities", n=f"{entities:,}"),
        tr("1 task") if tasks == 1 else tr("{n} tasks", n=f"{tasks:,}")])


def extra_line(counts: dict[str, Any]) -> str:
    """What the export holds beyond the line above, so its totals add up (in the person's
    language: only the export report shows it)."""
    other, history = counts["other_facts"], counts["history"]
    return tr("{other} and {history}",
              other=tr("1 persona or task fact") if other == 1 else
              tr("{n} persona or task facts", n=f"{other:,}"),
              history=tr("1 replaced, archived or deleted fact") if history == 1 else
              tr("{n} replaced, archived or deleted facts", n=f"{history:,}"))
