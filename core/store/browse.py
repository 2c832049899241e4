"""Reads for the graph browser: node lists by id, rows in pages, neighbourhoods, a node's
details and history, and what one turn recalled or changed.

Lists answer ids only (cheap even for 100,000 nodes); the browser then asks for the rows
it is about to show. Every function is read-only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.errors import CodedError, ErrorCode
from core.i18n import N_
from core.store import GraphStore
from core.store.describe import describe_ops
from core.store.graph import Row, decode_ops
from core.store.search import EDGE_SELECT, fts_candidates, marks
from core.store.text import has_cjk, normalize_name

KINDS = {"persona": ("persona",), "task": ("task",), "memory": ("entity", "state")}
STATUSES = ("any", "active", "archived", "deleted")
SORTS = {"name": "norm_name", "type": "coalesce(type, '')", "mentions": "mention_count",
         "updated": "updated_at"}
SEARCH_LIMIT = 5000  # ids a search answers, best first
MEANING_CHARS = 3  # a query this long ("pets", or 2 Chinese characters) is also asked by meaning
MEANING_FACTS = 20  # facts asked of recall by meaning for a search
# The embedding model's similarities crowd into 0.7-0.9: a search shows facts by meaning
# only when the closest is this near ("pets" to "has a dog named Luna": 0.83, "宠物" to
# "养了一只狗": 0.89; "xylophone" to anything in a small memory: at most 0.79), and then
# those within MEANING_MARGIN of it, so a word the memory knows nothing of finds nothing.
MEANING_FLOOR = 0.82
MEANING_MARGIN = 0.03
MAX_PAGE = 1000  # rows one NODE_ROWS request may ask for
SUBGRAPH_LIMIT = 200
NODE_FIELDS = ("id, name, kind, type, mention_count, created_at, updated_at, description,"
               " state, summary, deleted_at")


class BrowseError(CodedError, ValueError):
    """A request the browser should not have made; the message says which part."""


def _status_clause(status: str) -> str:
    """Nodes by their own state and by the state of their edges."""
    if status == "active":
        return "n.deleted_at IS NULL"
    if status == "archived":
        return ("(EXISTS (SELECT 1 FROM edges e WHERE e.source_id = n.id AND e.status ="
                " 'archived') OR EXISTS (SELECT 1 FROM edges e WHERE e.target_id = n.id AND"
                " e.status = 'archived'))")
    if status == "deleted":
        return ("(n.deleted_at IS NOT NULL OR EXISTS (SELECT 1 FROM edges e WHERE e.source_id"
                " = n.id AND e.status IN ('deleted', 'superseded')) OR EXISTS (SELECT 1 FROM"
                " edges e WHERE e.target_id = n.id AND e.status IN ('deleted', 'superseded')))")
    return "1"


def list_node_ids(store: GraphStore, *, query: str = "", kinds: Sequence[str] = (),
                  status: str = "any", sort: str = "name", descending: bool = False
                  ) -> list[int]:
    """Ids of the nodes that match, in the asked order; a search is ranked by relevance
    unless another order is asked for."""
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise BrowseError(f"unknown kind(s) {unknown}; the kinds are {sorted(KINDS)}")
    if status not in STATUSES:
        raise BrowseError(f"unknown status {status!r}; the statuses are {list(STATUSES)}")
    if sort not in (*SORTS, "relevance"):
        raise BrowseError(f"unknown sort {sort!r}; sort by {sorted(SORTS)} or relevance")
    where, params = [_status_clause(status)], []
    node_kinds = [k for group in kinds for k in KINDS[group]]
    if node_kinds:
        where.append(f"n.kind IN ({marks(node_kinds)})")
        params += node_kinds
    if query.strip():
        ranked = _matching(store, query)
        if not ranked:
            return []
        rows = store.conn.execute(
            f"SELECT n.id FROM nodes n WHERE n.id IN ({marks(ranked)}) AND {' AND '.join(where)}",
            [*ranked, *params]).fetchall()
        matching = {r[0] for r in rows}
        if sort == "relevance":
            return [i for i in ranked if i in matching]
        ids = list(matching)
        where.append(f"n.id IN ({marks(ids)})")
        params += ids
    elif sort == "relevance":
        sort = "updated"
        descending = True
    order = f"{SORTS[sort]} {'DESC' if descending else 'ASC'}, n.id"
    sql = f"SELECT n.id FROM nodes n WHERE {' AND '.join(where)} ORDER BY {order}"
    return [r[0] for r in store.conn.execute(sql, params)]


def _matching(store: GraphStore, query: str) -> list[int]:
    """Nodes for a search as you type, best first: the name itself, names that begin
    with it, names with words that do ("cof" finds black coffee), types that begin with
    it, then names and facts that hold its words anywhere, and for a longer query facts
    that mean it."""
    found = dict.fromkeys(rowid for rowid, _ in fts_candidates(
        store, "node_fts", query, SEARCH_LIMIT, prefix=True))
    found.update(dict.fromkeys(_nodes_typed(store, query)))
    found.update(dict.fromkeys(_nodes_by_edge_text(store, query, exclude=set(found))))
    found.update(dict.fromkeys(_nodes_by_meaning(store, query, exclude=set(found))))
    ids = list(found)[:SEARCH_LIMIT]
    if not ids:
        return []
    wanted = normalize_name(query)
    words = wanted.split()
    place = {node: n for n, node in enumerate(ids)}

    def closeness(row: tuple[int, str, str | None]) -> tuple[int, int]:
        node, name, type_ = row
        name_words = name.split()
        if name == wanted:
            rank = 0
        elif name.startswith(wanted):
            rank = 1
        elif all(any(w.startswith(q) for w in name_words) for q in words):
            rank = 2
        elif type_ and normalize_name(type_).startswith(wanted):
            rank = 3
        else:
            rank = 4
        return rank, place[node]

    rows = store.conn.execute(f"SELECT id, norm_name, type FROM nodes WHERE id IN"
                              f" ({marks(ids)})", ids).fetchall()
    return [row[0] for row in sorted(rows, key=closeness)]


def _nodes_typed(store: GraphStore, query: str) -> list[int]:
    """Nodes whose type begins with the query: a range of the type index (which ignores
    ASCII case; other scripts' case is folded after)."""
    begins = query.strip()
    wanted = normalize_name(begins)
    rows = store.conn.execute(
        "SELECT id, type FROM nodes WHERE type >= ? COLLATE NOCASE AND type < ? COLLATE NOCASE"
        " LIMIT ?", (begins, begins + "\U0010ffff", SEARCH_LIMIT))
    return [node for node, type_ in rows if normalize_name(type_).startswith(wanted)]


def _nodes_by_meaning(store: GraphStore, query: str, exclude: set[int]) -> list[int]:
    """Nodes of the facts nearest in meaning to a longer query ("instrument" finds the
    cello), where recall by meaning is on."""
    meaning = getattr(store, "meaning", None)
    text = query.strip()
    if meaning is None or len(text) < (2 if has_cjk(text) else MEANING_CHARS):
        return []
    try:
        found = meaning.similar(text, MEANING_FACTS)
    except Exception:  # recall by meaning is a help here, never a failure
        return []
    if not found or found[0][1] < MEANING_FLOOR:
        return []
    closest = found[0][1]
    return _nodes_of(store, [e for e, s in found if s >= closest - MEANING_MARGIN], exclude)


def _nodes_by_edge_text(store: GraphStore, query: str, exclude: set[int]) -> list[int]:
    """Nodes reached through matching facts, so "likes tea" finds the people who do."""
    hits = [rowid for rowid, _ in fts_candidates(store, "edge_fts", query, 200, prefix=True)]
    return _nodes_of(store, hits, exclude)


def _nodes_of(store: GraphStore, hits: list[int], exclude: set[int]) -> list[int]:
    """The nodes of these facts, each once, leaving out `exclude` (which grows)."""
    if not hits:
        return []
    found: list[int] = []
    for source, target in store.conn.execute(
            f"SELECT source_id, target_id FROM edges WHERE id IN ({marks(hits)})", hits):
        for node in (source, target):
            if node not in exclude:
                exclude.add(node)
                found.append(node)
    return found


def why_nothing(store: GraphStore, query: str) -> dict[str, Any]:
    """Why a search found no node, for the Memory tab to say: `meaning` is "searched"
    (nothing is close in meaning either), "short" (too short to ask by meaning), "busy"
    (the facts are still being read for meaning: `waiting` of them) or "off" (`problem`
    says why)."""
    meaning = getattr(store, "meaning", None)
    text = query.strip()
    if meaning is None:  # the caller knows why (core.meaning.engine.problem)
        return {"meaning": "off", "problem": ""}
    status = meaning.status() if hasattr(meaning, "status") else {"state": "ready"}
    if status.get("state") == "failed":
        return {"meaning": "off", "problem": status.get("problem") or ""}
    if len(text) < (2 if has_cjk(text) else MEANING_CHARS):
        return {"meaning": "short"}
    if status.get("state") != "ready":
        return {"meaning": "busy", "waiting": int(status.get("waiting") or 0)}
    return {"meaning": "searched"}


def node_rows(store: GraphStore, ids: Sequence[int]) -> list[Row]:
    """The rows for `ids`, in the same order."""
    if len(ids) > MAX_PAGE:
        raise BrowseError(f"ask for at most {MAX_PAGE} rows at a time")
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        raise BrowseError("ids must be whole numbers")
    if not ids:
        return []
    rows = store.query(f"SELECT {NODE_FIELDS} FROM nodes WHERE id IN ({marks(ids)})", list(ids))
    by_id = {r["id"]: r for r in rows}
    return [by_id[i] for i in ids if i in by_id]


def _need_node(store: GraphStore, node_id: Any) -> Row:
    if isinstance(node_id, bool) or not isinstance(node_id, int):
        raise BrowseError("node_id must be a whole number")
    node = store.query_one(f"SELECT {NODE_FIELDS} FROM nodes WHERE id = ?", (node_id,))
    if node is None:
        raise BrowseError(N_("that node is no longer in the memory"), ErrorCode.NOT_FOUND,
                          node_id=node_id)
    return node


def subgraph(store: GraphStore, node_id: Any, depth: int = 1,
             limit: int = SUBGRAPH_LIMIT, statuses: Sequence[str] = ("active",)) -> dict:
    """The node and its neighbours to `depth` (1 or 2), at most `limit` nodes; the most
    mentioned links are kept first when the cap applies."""
    if depth not in (1, 2):
        raise BrowseError("depth must be 1 or 2")
    center = _need_node(store, node_id)
    nodes: dict[int, int] = {center["id"]: 0}  # id -> hop
    edges: dict[int, Row] = {}
    capped = False
    frontier = [center["id"]]
    for hop in (1, 2)[:depth]:
        following: list[int] = []
        for node in frontier:
            for edge in _edges_of(store, node, statuses):
                other = edge["target_id"] if edge["source_id"] == node else edge["source_id"]
                if other not in nodes:
                    if len(nodes) >= limit:
                        capped = True
                        continue
                    nodes[other] = hop
                    following.append(other)
                edges[edge["id"]] = edge
        frontier = following
    rows = {r["id"]: r for r in node_rows(store, list(nodes)[:MAX_PAGE])}
    return {
        "center": center["id"],
        "nodes": [{**rows[i], "hop": hop} for i, hop in nodes.items() if i in rows],
        "edges": [e for e in edges.values()
                  if e["source_id"] in nodes and e["target_id"] in nodes],
        "capped": capped, "limit": limit,
    }


def _edges_of(store: GraphStore, node_id: int, statuses: Sequence[str]) -> list[Row]:
    order = " ORDER BY e.mention_count DESC, e.updated_at DESC LIMIT 400"
    status = f"e.status IN ({marks(statuses)})"
    return (store.query(f"{EDGE_SELECT} WHERE e.source_id = ? AND {status}{order}",
                        [node_id, *statuses])
            + store.query(f"{EDGE_SELECT} WHERE e.target_id = ? AND {status}"
                          f" AND e.source_id != e.target_id{order}", [node_id, *statuses]))


def node_details(store: GraphStore, node_id: Any, history_limit: int = 100) -> dict:
    """Everything the details pane shows: fields, every edge in and out with its status and
    where it came from, and the changes that touched the node or its edges."""
    node = _need_node(store, node_id)
    edges = store.query(
        f"{EDGE_SELECT} WHERE e.source_id = ? OR e.target_id = ?"
        " ORDER BY e.status = 'active' DESC, e.updated_at DESC LIMIT 2000",
        (node["id"], node["id"]))
    messages = _messages_of(store, {e["source_message"] for e in edges if e["source_message"]})
    for edge in edges:
        edge["direction"] = "out" if edge["source_id"] == node["id"] else "in"
        edge["message"] = messages.get(edge["source_message"])
    edge_ids = [e["id"] for e in edges]
    history = store.query(
        "SELECT c.id, c.created_at, c.tool, c.actor, c.via, c.turn_id, c.summary, c.undo_of,"
        f" c.undone_by, c.ops, {_device_name(store, 'c.')} FROM change_log c WHERE c.id IN ("
        " SELECT change_id FROM change_rows WHERE tbl = 'nodes' AND row_id = ?"
        f" UNION SELECT change_id FROM change_rows WHERE tbl = 'edges' AND row_id IN"
        f" ({marks(edge_ids) or 'NULL'})) ORDER BY c.created_at DESC, c.id DESC LIMIT ?",
        [node["id"], *edge_ids, history_limit])
    for change in history:  # what each did, as lines the window says in its language
        change["lines"] = describe_ops(store, decode_ops(change.pop("ops")))
    return {"node": node, "edges": edges, "history": history}


# A change made on this device (every change, before this memory syncs): Undo and Redo
# take back this device's own only, and its ids grow with time (another device's range
# may lie above or below).
SYNC_SCHEMA = 17


def own_change(store: GraphStore, alias: str = "") -> str:
    """SQL: the change (of `alias`) was made on this device; always true in a file older
    than sync (opened read-only, not migrated)."""
    if store.schema_version() < SYNC_SCHEMA:
        return "1"
    return (f"({alias}device IS NULL OR {alias}device = (SELECT device FROM sync_self) OR"
            f" {alias}device IN (SELECT device FROM sync_former) OR"
            " NOT EXISTS (SELECT 1 FROM sync_self))")  # a device that left: all are its own


def _device_name(store: GraphStore, alias: str = "") -> str:
    """SQL: the name of the device another device's change was made on (NULL: here)."""
    if store.schema_version() < SYNC_SCHEMA:
        return "NULL AS device_name"
    return (f"CASE WHEN {own_change(store, alias)} THEN NULL ELSE coalesce((SELECT name FROM"
            f" sync_devices d WHERE d.device = {alias}device), {alias}device) END AS"
            " device_name")


def recent_changes(store: GraphStore, limit: int = 50) -> list[Row]:
    return store.query("SELECT id, created_at, tool, actor, via, turn_id, summary, undo_of,"
                       f" undone_by, {_device_name(store)} FROM change_log"
                       " ORDER BY created_at DESC, id DESC LIMIT ?", (limit,))


def last_undoable(store: GraphStore) -> int | None:
    """The newest change that is not an undo and was not undone: what Ctrl+Z takes back."""
    row = store.query_one("SELECT id FROM change_log WHERE undo_of IS NULL AND undone_by"
                          f" IS NULL AND {own_change(store)} ORDER BY id DESC LIMIT 1")
    return row["id"] if row else None


def last_redoable(store: GraphStore) -> int | None:
    """The newest undo not taken back, when nothing but redos came after it: a change made
    since an undo ends what redo can bring back, as in an editor."""
    row = store.query_one(
        "SELECT id FROM change_log c WHERE tool IN ('undo', 'undo_turn') AND undone_by IS"
        f" NULL AND {own_change(store, 'c.')} AND NOT EXISTS (SELECT 1 FROM change_log l"
        f" WHERE l.id > c.id AND l.tool != 'redo' AND {own_change(store, 'l.')})"
        " ORDER BY id DESC LIMIT 1")
    return row["id"] if row else None


def last_undoable_turn(store: GraphStore) -> str | None:
    """The newest turn with a change not yet undone: what "Undo this turn" takes back when
    no turn is chosen."""
    row = store.query_one("SELECT turn_id FROM change_log WHERE turn_id IS NOT NULL AND"
                          f" undo_of IS NULL AND undone_by IS NULL AND {own_change(store)}"
                          " ORDER BY id DESC LIMIT 1")
    return row["turn_id"] if row else None


def turn_touched(store: GraphStore, turn_id: str, recalled_edges: Sequence[int] = ()) -> dict:
    """Nodes and edges a turn recalled or changed (`nodes`, `edges`), and of those the ones
    it changed (`changed_nodes`, `changed_edges`), from its logged changes."""
    changed_nodes: set[int] = set()
    changed_edges: set[int] = set()
    for row in store.query("SELECT ops FROM change_log WHERE turn_id = ?", (turn_id,)):
        for op in decode_ops(row["ops"]):
            if "id" not in op:
                continue  # a bulk import's id ranges; no turn makes those
            (changed_nodes if op["table"] == "nodes" else changed_edges).add(op["id"])
    edges = changed_edges | set(recalled_edges)
    nodes = set(changed_nodes)
    ends = _ends(store, sorted(edges))
    for edge_id, pair in ends.items():
        nodes.update(pair)
        if edge_id in changed_edges:
            changed_nodes.update(pair)
    return {"nodes": sorted(nodes), "edges": sorted(edges),
            "changed_nodes": sorted(changed_nodes), "changed_edges": sorted(changed_edges)}


def _ends(store: GraphStore, edge_ids: list[int]) -> dict[int, tuple[int, int]]:
    if not edge_ids:
        return {}
    return {r[0]: (r[1], r[2]) for r in store.conn.execute(
        f"SELECT id, source_id, target_id FROM edges WHERE id IN ({marks(edge_ids)})", edge_ids)}


def _messages_of(store: GraphStore, turn_ids: set[str]) -> dict[str, Row]:
    """The person's message of each turn that wrote something: where a fact came from."""
    if not turn_ids:
        return {}
    ids = sorted(turn_ids)
    found: dict[str, Row] = {}
    for row in store.query(f"SELECT turn_id, id, content, created_at FROM messages WHERE"
                           f" role = 'user' AND turn_id IN ({marks(ids)}) ORDER BY id",
                           ids):
        found.setdefault(row.pop("turn_id"), row)
    return found
