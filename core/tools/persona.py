"""Persona tools: the assistant's own attributes, kept as edges from the `AI` node."""

from __future__ import annotations

from typing import Any

from core.store import GraphStore, Row
from core.store.search import EDGE_SELECT
from core.store.text import normalize_name
from core.tools.base import Outcome, ToolError, edge_line
from core.tools.registry import FULL, tool
from core.tools.schema_parts import NAME, obj


def persona_edges(store: GraphStore) -> list[Row]:
    """The active persona, oldest attribute first."""
    return store.query(EDGE_SELECT + " WHERE e.category = 'persona' AND e.status = 'active'"
                       " ORDER BY e.created_at, e.id")


def persona_text(store: GraphStore) -> str:
    edges = persona_edges(store)
    if not edges:
        return "Persona: (empty)"
    return "Persona: " + "; ".join(f"{e['relation']}: {e['target_name']}" for e in edges)


@tool("persona_update",
      "Set your own persona attributes (name, role, speaking_style, personality...) when "
      "the user asks you to change. mode replace clears the others first.",
      obj({
          "attributes": {"type": "array", "minItems": 1, "maxItems": 20, "items": obj(
              {"attribute": NAME, "value": NAME}, ("attribute", "value"))},
          "mode": {"type": "string", "enum": ["merge", "replace"]},
      }, ("attributes",)),
      category="persona_update", destroys="replace",
      compact=("Set your own persona (name, speaking_style...) when the user asks.",
               obj({"attributes": {"type": "array", "minItems": 1, "items": obj(
                   {"attribute": NAME, "value": NAME}, ("attribute", "value"))}},
                   ("attributes",))))
def persona_update(store: GraphStore, args: dict[str, Any]) -> Outcome:
    ai = store.persona_node()
    wanted = {normalize_name(a["attribute"]): a for a in args["attributes"]}
    now = store.clock()
    if args.get("mode", "merge") == "replace":
        for edge in persona_edges(store):
            if edge["norm_relation"] not in wanted:
                store.set_edge_status(edge, "deleted", valid_to=now)
    changed = []
    for key, item in wanted.items():
        value = store.upsert_node(item["value"], type_="PersonaValue", retype=False)
        edge, _ = store.add_edge(ai["id"], item["attribute"], value["id"], category="persona")
        for old in persona_edges(store):
            if old["norm_relation"] == key and old["id"] != edge["id"]:
                store.set_edge_status(old, "superseded", valid_to=now,
                                      superseded_by=edge["id"])
        changed.append(f"{item['attribute']}: {item['value']}")
    summary = "persona set " + "; ".join(changed)
    return Outcome(f"Persona updated. {persona_text(store)}", {"attributes": len(changed)},
                   summary)


@tool("persona_remove", "Remove one persona attribute.", obj({"attribute": NAME}, ("attribute",)),
      category="persona_update", destroys="delete", tool_set=FULL)
def persona_remove(store: GraphStore, args: dict[str, Any]) -> Outcome:
    key = normalize_name(args["attribute"])
    edges = [e for e in persona_edges(store) if e["norm_relation"] == key]
    if not edges:
        names = ", ".join(sorted({e["relation"] for e in persona_edges(store)})) or "none"
        raise ToolError(f"the persona has no attribute {args['attribute']!r} "
                        f"(attributes: {names})")
    for edge in edges:
        store.set_edge_status(edge, "deleted", valid_to=store.clock())
    return Outcome(f"Removed {'; '.join(edge_line(e) for e in edges)}. {persona_text(store)}",
                   {"removed": len(edges)}, f"persona attribute {args['attribute']} removed")


@tool("persona_clear", "Clear the whole persona; needs confirm=true.",
      obj({"confirm": {"type": "boolean"}}, ("confirm",)),
      category="persona_update", destroys="delete", tool_set=FULL)
def persona_clear(store: GraphStore, args: dict[str, Any]) -> Outcome:
    if not args["confirm"]:
        raise ToolError("persona_clear needs confirm=true; nothing was changed")
    edges = persona_edges(store)
    for edge in edges:
        store.set_edge_status(edge, "deleted", valid_to=store.clock())
    return Outcome(f"Persona cleared ({len(edges)} attributes removed, restorable).",
                   {"removed": len(edges)}, f"persona cleared ({len(edges)} attributes)")
