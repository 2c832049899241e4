"""Plain sentences for what a logged change did, from its row images.

The review inbox lists them under each change, and undo and redo say them back ("Restored
'Xiao Ming likes green tea'") instead of a change number.
"""

from __future__ import annotations

from typing import Any

from core import i18n
from core.i18n import N_, tr
from core.store import graph
from core.store.graph import GraphStore, Row, decode_ops

# Columns whose change alone is bookkeeping, not news: a fact said again, a node seen again.
QUIET_COLUMNS = frozenset({"mention_count", "updated_at", "reviewed_at", "confidence",
                           "norm_name", "norm_relation"})
STATUS_VERBS = {
    ("active", "deleted"): "deleted", ("active", "superseded"): "replaced",
    ("active", "archived"): "archived", ("deleted", "active"): "restored",
    ("superseded", "active"): "restored", ("archived", "active"): "brought back",
}
GUESS_BELOW = 1.0  # the model lowers confidence only for what it was not told plainly


def _column_of(store: GraphStore, table: str, column: str, ids: set[int]) -> dict[int, str]:
    if not ids:
        return {}
    marks = ", ".join("?" for _ in ids)
    return {r["id"]: r[column] for r in store.query(
        f"SELECT id, {column} FROM {table} WHERE id IN ({marks})", sorted(ids))}


def names_of(store: GraphStore, ids: set[int]) -> dict[int, str]:
    return _column_of(store, "nodes", "name", ids)


def describe_ops(store: GraphStore, ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One line per fact or node the ops changed: `verb`, `text`, `table`, `id`, and for
    facts the `confidence` and `guess` flag. Bookkeeping (mention counts) is left out."""
    edge_ops = [op for op in ops if op.get("table") == "edges" and "id" in op]
    ends = {image[k] for op in edge_ops for image in (op["before"], op["after"]) if image
            for k in ("source_id", "target_id")}
    node_images = {op["id"]: op["after"] or op["before"] for op in ops
                   if op.get("table") == "nodes" and "id" in op}
    # Names and relations as they read now (a node renamed since, a relation edited),
    # the change's own images for what is no longer there.
    names = names_of(store, ends | node_images.keys())
    for node, image in node_images.items():
        names.setdefault(node, image["name"])
    relations = relations_of(store, {op["id"] for op in edge_ops})
    lines: list[dict[str, Any]] = []
    for op in ops:
        if "id" not in op:
            rows = sum(last - first + 1 for first, last in
                       op.get("inserted") or op.get("removed") or [])
            verb = "imported" if "inserted" in op else "took back"
            lines.append({"verb": verb, "text": f"{rows:,} {op['table']}",
                          "table": op["table"], "id": None})
            continue
        line = (_edge_line(op, names, relations) if op["table"] == "edges"
                else _node_line(op, ends))
        if line is not None:
            lines.append(line)
    return lines


def relations_of(store: GraphStore, ids: set[int]) -> dict[int, str]:
    return _column_of(store, "edges", "relation", ids)


def fact_text(image: Row, names: dict[int, str]) -> str:
    source = names.get(image["source_id"], f"node {image['source_id']}")
    target = names.get(image["target_id"], f"node {image['target_id']}")
    return f"{source} {image['relation']} {target}"


def _edge_line(op: dict[str, Any], names: dict[int, str],
               relations: dict[int, str]) -> dict[str, Any] | None:
    before, after = op["before"], op["after"]
    image = dict(after or before)
    if op["id"] in relations and not (before and after and
                                      before["relation"] != after["relation"]):
        image["relation"] = relations[op["id"]]  # as it reads now
    if op.get("merged"):
        verb = "kept, said again since"  # an undo found the fact restated (GraphStore)
    elif before is None:
        verb = "added"
    elif after is None:
        verb = "removed"
    elif before["status"] != after["status"]:
        verb = STATUS_VERBS.get((before["status"], after["status"]), after["status"])
    elif before["relation"] != after["relation"]:
        verb = "changed the relation of"
    elif _changed(before, after) - QUIET_COLUMNS:
        verb = "updated"
    elif after["mention_count"] > before["mention_count"]:
        verb = "reinforced"
    else:
        return None
    confidence = image.get("confidence", 1.0)
    return {"verb": verb, "text": fact_text(image, names), "table": "edges", "id": op["id"],
            "subject": names.get(image["source_id"], ""), "relation": image["relation"],
            "object": names.get(image["target_id"], ""),
            "confidence": confidence, "guess": confidence < GUESS_BELOW,
            "status": (after or {}).get("status")}


def _node_line(op: dict[str, Any], fact_ends: set[int]) -> dict[str, Any] | None:
    before, after = op["before"], op["after"]
    image = after or before
    kind = {"task": "task", "persona": "persona"}.get(image["kind"], "")
    what = f"{kind} {image['name']}".strip()
    if (before is None or after is None) and op["id"] in fact_ends and not kind:
        return None  # a name that comes or goes with its fact: the fact's line says it
    if before is None:
        verb, text = "added", what
    elif after is None:
        verb, text = "removed", what
    else:
        changed = _changed(before, after) - QUIET_COLUMNS
        if not changed:
            return None
        if "deleted_at" in changed:
            verb = "deleted" if after["deleted_at"] else "restored"
            text = what
        elif "name" in changed:
            verb, text = "renamed", f"{before['name']} → {after['name']}"
        elif "state" in changed and after.get("state"):
            verb, text = "set", f"{what} to {after['state']}"
        else:
            verb, text = "updated", f"{what} ({', '.join(sorted(changed))})"
    return {"verb": verb, "text": text, "table": "nodes", "id": op["id"]}


def _changed(before: Row, after: Row) -> set[str]:
    return {k for k in after if before.get(k) != after.get(k)}


# A line's verb in the person's language (the window's Review says the same words)
VERBS = {"added": N_("added"), "removed": N_("removed"), "deleted": N_("deleted"),
         "replaced": N_("replaced"), "reinforced": N_("reinforced"), "restored": N_("restored"),
         "archived": N_("archived"), "brought back": N_("brought back"),
         "updated": N_("updated"), "renamed": N_("renamed"), "set": N_("set"),
         "imported": N_("imported"), "took back": N_("took back"),
         "kept, said again since": N_("kept, said again since"),
         "changed the relation of": N_("changed the relation of")}


def said_line(line: dict[str, Any]) -> str:
    """One line as the person reads it: "added “User likes tea”" in their language."""
    verb = VERBS.get(line["verb"])
    return tr("{verb} “{text}”", verb=i18n.tr(verb) if verb else line["verb"],
              text=line["text"])


def describe_change(store: GraphStore, change_id: int) -> list[dict[str, Any]]:
    row = store.query_one("SELECT ops FROM change_log WHERE id = ?", (change_id,))
    return describe_ops(store, decode_ops(row["ops"])) if row else []


def undo_words(store: GraphStore, change_ids: list[int], redo: bool = False) -> str:
    """What an undo took back or a redo brought back, in the person's language: the
    changes themselves ("Undid: added “User likes tea”"), so an undo that only lowered a
    count still says what it was about (it said "Nothing visible")."""
    entries = [e for e in (store.change(i) for i in change_ids) if e is not None]
    if not entries:
        return tr("Redone") if redo else tr("Undone")
    first = change_words(store, entries[0])
    what = first if len(entries) == 1 else tr("{count} changes, the first: {first}",
                                              count=len(entries), first=first)
    return tr("Redid: {what}", what=what) if redo else tr("Undid: {what}", what=what)


def kept_words(kept: list[dict[str, Any]], most: int = 3) -> str:
    """What an undo left as later changes made it, in the person's language ("“User lives
    in Paris” was changed again later"); empty when it took everything back."""
    if not kept:
        return ""
    parts = [tr("{row} was removed later", row=k["row"]) if k.get("why") == "gone" else
             tr("{row} was changed again later", row=k["row"]) for k in kept[:most]]
    if len(kept) > most:
        parts.append(tr("{count} more", count=len(kept) - most))
    return tr("Kept as later changes left it: {parts}.", parts="; ".join(parts))


def change_words(store: GraphStore, entry: Row) -> str:
    """A logged change in the person's language: what it did to its first fact or name
    ("added “User likes tea”", and how many more), else its summary."""
    lines = describe_ops(store, decode_ops(entry["ops"])) if entry.get("ops") else []
    if not lines:
        return entry["summary"] or entry["tool"]
    said = said_line(lines[0])
    return said if len(lines) == 1 else tr("{first} and {count} more", first=said,
                                           count=len(lines) - 1)


graph.CHANGE_WORDS[0] = change_words
