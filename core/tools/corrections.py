"""The person's corrections to the memory: rename, merge, edit a relation or a whole
fact, delete and restore. Each is one logged change (actor "user"), so each can be undone
like the model's.

Deleting is soft: a deleted edge keeps its row with status "deleted", a deleted node gets
`deleted_at` and its active edges are deleted with it, so nothing the model recalls still
points at it, and restoring brings back exactly the edges that went with it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.errors import CodedError, ErrorCode
from core.i18n import N_, Words, tr_kept
from core.store import GraphStore, StoreError, one_copy
from core.store.change_capture import note_merge
from core.store.graph import Row
from core.store.text import display_name, normalize_name

MAX_NAME = 10_000


class CorrectionError(CodedError, ValueError):
    """A correction that cannot be made as asked; the message says why, in words the
    person reads (no ids: the rows are named)."""


def _whole(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise CorrectionError(N_("{name} must be a whole number"), name=name)
    return value


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise CorrectionError(N_("{name} must be non-empty text"), name=name)
    if len(value) > MAX_NAME:
        raise CorrectionError(N_("{name} is longer than {most} characters"), name=name,
                              most=f"{MAX_NAME:,}")
    return value


GONE = {"nodes": N_("that node is no longer in the memory"),
        "edges": N_("that fact is no longer in the memory")}


def _found(store: GraphStore, table: str, row_id: Any) -> Row:
    """The row `row_id` of `table`, or the refusal that says it is gone."""
    key = f"{table[:-1]}_id"
    row = store.row(table, _whole(row_id, key))
    if row is None:
        raise CorrectionError(GONE[table], ErrorCode.NOT_FOUND, **{key: row_id})
    return row


def _node(store: GraphStore, node_id: Any) -> Row:
    return _found(store, "nodes", node_id)


def _edge(store: GraphStore, edge_id: Any) -> Row:
    return _found(store, "edges", edge_id)


def rename_node(store: GraphStore, node_id: Any, name: Any) -> Words:
    node = _node(store, node_id)
    new_name = _text(name, "name")
    other = store.find_node(new_name)
    if other is not None and other["id"] != node["id"]:
        raise CorrectionError(N_("another node is already called “{name}”: merge the two "
                                 "instead"), ErrorCode.CONFLICT, name=other["name"],
                              node_id=other["id"])
    store.update("nodes", node["id"], {"name": display_name(new_name),
                                       "norm_name": normalize_name(new_name),
                                       "updated_at": store.clock()})
    return tr_kept("renamed '{old}' to '{new}'", old=node["name"], new=display_name(new_name))


def merge_nodes(store: GraphStore, keep_id: Any, merge_id: Any, keep_name: Any = None) -> Words:
    """Move every edge of `merge_id` onto `keep_id` (or the node called `keep_name`), then
    remove `merge_id`. Two facts that become the same are kept as one, with their mentions
    added up; the other is marked superseded by it. The merged name stays findable in the
    kept node's description."""
    if keep_id is None and keep_name is not None:
        found = store.find_node(_text(keep_name, "keep_name"))
        if found is None:
            raise CorrectionError(N_("no node is called “{name}”"), ErrorCode.NOT_FOUND,
                                  name=keep_name)
        keep_id = found["id"]
    keep, gone = _node(store, keep_id), _node(store, merge_id)
    if keep["id"] == gone["id"]:
        raise CorrectionError(N_("a node cannot be merged into itself"))
    if gone["kind"] == "persona":
        raise CorrectionError(N_("the assistant's own persona node cannot be merged away"))
    chosen = keep
    if store.id_base() and keep["id"] > gone["id"] and keep["kind"] != "persona":
        # A memory that syncs keeps the smaller id whichever node the person keeps (the
        # kept one's name and type move onto it): two devices merging the same two nodes
        # either way round then end with the same node.
        keep, gone = gone, keep
    now = store.clock()
    moved = folded = dropped = 0
    edges = store.query("SELECT * FROM edges WHERE source_id = ? OR target_id = ?",
                        (gone["id"], gone["id"]))
    for edge in edges:
        source = keep["id"] if edge["source_id"] == gone["id"] else edge["source_id"]
        target = keep["id"] if edge["target_id"] == gone["id"] else edge["target_id"]
        twin = store.active_edge(source, edge["relation"], target) \
            if edge["status"] == "active" else None
        if source == target and edge["status"] == "active":
            # "User is named Alex" would become "User is named User": the fact between
            # the two is what the merge says (the name stays in the description)
            store.update("edges", edge["id"], {"status": "deleted", "valid_to": now,
                                               "source_id": source, "target_id": target,
                                               "updated_at": now})
            dropped += 1
        elif twin is not None:
            _fold(store, {**edge, "source_id": source, "target_id": target}, twin, now)
            folded += 1
        else:
            store.update("edges", edge["id"], {"source_id": source, "target_id": target,
                                               "updated_at": now})
            moved += 1
    other = gone if chosen is keep else keep  # the node whose name goes
    aliases = [a for a in (chosen["description"], f"Also called: {other['name']}") if a]
    store.update("nodes", keep["id"], {
        "mention_count": keep["mention_count"] + gone["mention_count"],
        "description": "\n".join(aliases), "updated_at": now,
        "type": chosen["type"] or other["type"]})
    store.delete("nodes", gone["id"])
    if chosen is not keep:
        store.update("nodes", keep["id"], {"name": chosen["name"],
                                           "norm_name": chosen["norm_name"]})
    note_merge(store.conn, gone["id"], keep["id"])  # other devices merge it too
    if dropped:
        return tr_kept("merged '{gone}' into '{kept}': {moved} edge(s) moved, {folded} folded "
                       "into the same fact, {dropped} between the two deleted",
                       gone=other["name"], kept=chosen["name"], moved=moved, folded=folded,
                       dropped=dropped)
    return tr_kept("merged '{gone}' into '{kept}': {moved} edge(s) moved, {folded} folded "
                   "into the same fact", gone=other["name"], kept=chosen["name"],
                   moved=moved, folded=folded)


def edit_relation(store: GraphStore, edge_id: Any, relation: Any,
                  confidence: Any = None) -> Words:
    edge = _edge(store, edge_id)
    new_relation = _text(relation, "relation")
    changes: Row = {"relation": display_name(new_relation),
                    "norm_relation": normalize_name(new_relation), "updated_at": store.clock()}
    if confidence is not None:
        if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) \
                or not 0 <= confidence <= 1:
            raise CorrectionError(N_("confidence must be a number from 0 to 1"))
        changes["confidence"] = float(confidence)
    if edge["status"] == "active":
        twin = store.active_edge(edge["source_id"], new_relation, edge["target_id"])
        if twin is not None and twin["id"] != edge["id"]:
            raise CorrectionError(N_("the same fact already exists with that relation: "
                                     "delete this one instead"), ErrorCode.CONFLICT,
                                  edge_id=twin["id"])
    store.update("edges", edge["id"], changes)
    return tr_kept("relation of edge {edge} changed from '{old}' to '{new}'",
                   edge=edge["id"], old=edge["relation"], new=changes["relation"])


def edit_fact(store: GraphStore, edge_id: Any, subject: Any, relation: Any,
              object: Any) -> Words:
    """Correct a fact as the person reads it: a new relation only is an edit in place;
    another subject or object replaces the fact (the old one is kept as superseded, so
    its history and its source message stay)."""
    edge = _edge(store, edge_id)
    if edge["status"] != "active":
        raise CorrectionError(N_("only an active fact can be edited; restore it first"))
    subject, relation, object = (_text(subject, "subject"), _text(relation, "relation"),
                                 _text(object, "object"))
    source, target = store.row("nodes", edge["source_id"]), store.row("nodes", edge["target_id"])
    old = f"{source['name']} {edge['relation']} {target['name']}"
    if normalize_name(subject) == source["norm_name"] and \
            normalize_name(object) == target["norm_name"]:
        if display_name(relation) == edge["relation"]:
            raise CorrectionError(N_("the fact is already like that"), ErrorCode.NOTHING_TO_DO)
        edit_relation(store, edge["id"], relation)
        new = " ".join((source["name"], display_name(relation), target["name"]))
        return tr_kept("changed '{old}' to '{new}'", old=old, new=new)
    now = store.clock()
    ends = [store.find_node(name) or store.upsert_node(name) for name in (subject, object)]
    new, _created = store.add_edge(ends[0]["id"], relation, ends[1]["id"],
                                   category=edge["category"])
    store.update("edges", edge["id"], {"status": "superseded", "superseded_by": new["id"],
                                       "valid_to": now, "updated_at": now})
    return tr_kept("changed '{old}' to '{new}'", old=old,
                   new=" ".join((ends[0]["name"], new["relation"], ends[1]["name"])))


def _fold(store: GraphStore, moved: Row, twin: Row, now: float) -> None:
    """`moved` (its ends already the merged ones) and `twin` are one fact now: the rule of
    `core.store.one_copy` keeps one. The one stepping aside goes first: two active copies
    of one fact never stand together."""
    kept_id, retired_id = one_copy.kept_and_retired(moved["id"], twin["id"])
    kept, retired = (moved, twin) if kept_id == moved["id"] else (twin, moved)
    store.update("edges", retired_id, {"status": "superseded", "superseded_by": kept_id,
                                       "source_id": moved["source_id"],
                                       "target_id": moved["target_id"], "updated_at": now})
    store.update("edges", kept_id, {**one_copy.folded(kept, retired),
                                    "source_id": moved["source_id"],
                                    "target_id": moved["target_id"], "updated_at": now})


def delete_edge(store: GraphStore, edge_id: Any) -> Words:
    edge = _edge(store, edge_id)
    if edge["status"] == "deleted":
        raise CorrectionError(N_("{fact} is already deleted"), ErrorCode.NOTHING_TO_DO,
                              fact=store.row_words("edges", edge["id"]))
    now = store.clock()
    store.update("edges", edge["id"], {"status": "deleted", "valid_to": now,
                                       "updated_at": now})
    return tr_kept("deleted edge {edge} ({relation})", edge=edge["id"],
                   relation=edge["relation"])


def restore_edge(store: GraphStore, edge_id: Any) -> Words:
    edge = _edge(store, edge_id)
    if edge["status"] == "active":
        raise CorrectionError(N_("{fact} is already active"), ErrorCode.NOTHING_TO_DO,
                              fact=store.row_words("edges", edge["id"]))
    for end in (edge["source_id"], edge["target_id"]):
        if store.row("nodes", end)["deleted_at"] is not None:
            raise CorrectionError(N_("restore the deleted node at its end first"),
                                  ErrorCode.CONFLICT)
    if store.active_edge(edge["source_id"], edge["relation"], edge["target_id"]):
        raise CorrectionError(N_("the same fact is active again already"),
                              ErrorCode.NOTHING_TO_DO)
    store.update("edges", edge["id"], {"status": "active", "valid_to": None,
                                       "superseded_by": None, "archived_at": None,
                                       "updated_at": store.clock()})
    return tr_kept("restored edge {edge} ({relation})", edge=edge["id"],
                   relation=edge["relation"])


def delete_node(store: GraphStore, node_id: Any) -> Words:
    node = _node(store, node_id)
    if node["deleted_at"] is not None:
        raise CorrectionError(N_("“{name}” is already deleted"), ErrorCode.NOTHING_TO_DO,
                              name=node["name"])
    if node["kind"] == "persona":
        raise CorrectionError(N_("the assistant's persona node cannot be deleted; clear "
                                 "the persona instead"))
    now = store.clock()
    edges = store.query("SELECT * FROM edges WHERE (source_id = ? OR target_id = ?) AND"
                        " status = 'active'", (node["id"], node["id"]))
    for edge in edges:
        store.update("edges", edge["id"], {"status": "deleted", "valid_to": now,
                                           "updated_at": now})
    store.update("nodes", node["id"], {"deleted_at": now, "updated_at": now})
    return tr_kept("deleted '{name}' and {count} of its facts", name=node["name"],
                   count=len(edges))


def restore_node(store: GraphStore, node_id: Any) -> Words:
    node = _node(store, node_id)
    if node["deleted_at"] is None:
        raise CorrectionError(N_("“{name}” is not deleted"), ErrorCode.NOTHING_TO_DO,
                              name=node["name"])
    store.update("nodes", node["id"], {"deleted_at": None, "updated_at": store.clock()})
    restored = 0
    for edge in store.query("SELECT * FROM edges WHERE (source_id = ? OR target_id = ?) AND"
                            " status = 'deleted' AND valid_to = ?",
                            (node["id"], node["id"], node["deleted_at"])):
        other = edge["target_id"] if edge["source_id"] == node["id"] else edge["source_id"]
        if store.row("nodes", other)["deleted_at"] is not None or \
                store.active_edge(edge["source_id"], edge["relation"], edge["target_id"]):
            continue
        store.update("edges", edge["id"], {"status": "active", "valid_to": None,
                                           "updated_at": store.clock()})
        restored += 1
    return tr_kept("restored '{name}' and {count} of its facts", name=node["name"],
                   count=restored)


ACTIONS: dict[str, tuple[Callable[..., Words], tuple[str, ...]]] = {
    "rename_node": (rename_node, ("node_id", "name")),
    "merge_nodes": (merge_nodes, ("keep_id", "merge_id", "keep_name")),
    "edit_relation": (edit_relation, ("edge_id", "relation", "confidence")),
    "edit_fact": (edit_fact, ("edge_id", "subject", "relation", "object")),
    "delete_edge": (delete_edge, ("edge_id",)),
    "restore_edge": (restore_edge, ("edge_id",)),
    "delete_node": (delete_node, ("node_id",)),
    "restore_node": (restore_node, ("node_id",)),
}


def correct(store: GraphStore, action: Any, arguments: dict[str, Any]) -> dict[str, Any]:
    """Run one correction as one logged change; answers the summary and the change id."""
    if action not in ACTIONS:
        raise CorrectionError(N_("unknown correction {action}; the corrections are "
                                 "{actions}"), action=repr(action), actions=", ".join(ACTIONS))
    handler, names = ACTIONS[action]
    unknown = sorted(set(arguments) - set(names))
    if unknown:
        raise CorrectionError(N_("{action} takes {names}; not {unknown}"), action=action,
                              names=", ".join(names), unknown=", ".join(unknown))
    try:
        with store.write(f"user_{action}", arguments, actor="user") as change:
            said = handler(store, **{n: arguments.get(n) for n in names})
            change.summary = said.english()  # the log keeps English; the person reads theirs
    except StoreError as error:
        raise CorrectionError(error.template, error.code, **error.params) from None
    return {"summary": str(said), "change_id": change.id}
