"""General memory tools: recall, commit, purge, introspect, archive, cleanup, context rewrite."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.recall import recall
from core.recall.lines import turn_text
from core.store import GraphStore, Row
from core.store.counts import counts_line, memory_counts
from core.store.search import EDGE_SELECT, edges_around, nodes_named, search_edges, search_nodes
from core.store.text import normalize_name
from core.tools.base import (
    DAY,
    MAX_ROWS,
    Outcome,
    ToolError,
    bounded,
    edge_line,
    fact_line,
    the_person,
)
from core.tools.one_value import older_values, same_in_slot
from core.tools.registry import FULL, PERSON, tool
from core.tools.schema_parts import DAYS, MAX_NAMES, NAME, NAMES, POSITIVE_DAYS, STR, obj
from core.tools.tasks import task_line

PURGE_CONFIRM_ABOVE = 20
RECALL_HIT_ROWS = 24  # room left for linked rows within MAX_ROWS
RECALL_TURN_TOKENS = 500  # the turns a recall quotes, in estimated tokens
EXPANSION_PER_NODE = (10, 5, 3)  # edges followed per node at hop 1, 2, 3
SCOPE_CATEGORIES: dict[str, list[str] | None] = {
    "all": None, "persona": ["persona"], "tasks": ["task"],
}
RECALL_SCOPE_CATEGORY = {"persona": "persona_query", "tasks": "task_query"}


def _recall_category(arguments: dict[str, Any]) -> str:
    """A recall of the persona or the tasks counts against that query limit."""
    scope = arguments.get("scope")
    return RECALL_SCOPE_CATEGORY.get(scope, "memory_query") if isinstance(scope, str) \
        else "memory_query"


TRIPLET = obj({
    "subject": NAME, "relation": NAME, "object": NAME,
    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    "subject_type": STR, "object_type": STR,
}, ("subject", "relation", "object"))


@tool("memory_recall",
      "Look up memories by words (any language) and follow their links. Call it when the "
      "user asks about themselves or the past and the snapshot does not answer.",
      obj({
          "query_intent": NAME,
          "seed_entities": NAMES,
          "depth": {"type": "integer", "minimum": 1, "maximum": 3},
          "time_range": obj({"days": POSITIVE_DAYS}, ("days",)),
          "scope": {"type": "string", "enum": ["all", "persona", "tasks"]},
      }, ("query_intent",)),
      category=_recall_category, writes=False,
      for_apps=(
          "Search the person's long-term memory: a graph of facts that TrulyMEM, their "
          "memory app, keeps and lets you share. Finds facts by words and by meaning, in "
          "any language, and follows the links between them. Call it before answering "
          "anything about the person (who they are, people they know, preferences, plans, "
          "past). query_intent is what you want to know in plain words (\"where does the "
          "user live\"); seed_entities are optional names to start from (\"User\" is the "
          "person). Answers one fact per line: `[12] User -works as-> nurse (x3, "
          "2026-11-30)`, with how often it was said and when."),
      compact=("Look up memories by words. Call it when the snapshot lacks the answer.",
               obj({"query_intent": NAME}, ("query_intent",))))
def memory_recall(store: GraphStore, args: dict[str, Any]) -> Outcome:
    query = args["query_intent"]
    depth = args.get("depth", 2)
    categories = SCOPE_CATEGORIES[args.get("scope", "all")]
    days = args.get("time_range", {}).get("days")
    since = store.clock() - days * DAY if days else None

    hits = search_edges(store, query, categories=categories, since=since,
                        limit=RECALL_HIT_ROWS + 1)
    more_hits = len(hits) > RECALL_HIT_ROWS
    hits = hits[:RECALL_HIT_ROWS]
    said: list[Row] = []
    if categories is None:  # the facts gathered about who it names, and the turns behind
        found = recall(store, query, budget=RECALL_TURN_TOKENS, categories=None, since=since,
                       follow=False)
        known = {e["id"] for e in hits}
        hits += [e for e in found.facts if e["id"] not in known][:RECALL_HIT_ROWS - len(hits)]
        said = found.turns
    rows: dict[int, Row] = {e["id"]: e for e in hits}
    start = nodes_named(store, [the_person(n) for n in args.get("seed_entities", [])])
    if categories == ["persona"]:
        start += nodes_named(store, ["AI"])
    elif categories == ["task"]:
        start += store.query("SELECT * FROM nodes WHERE kind = 'task' AND deleted_at IS NULL"
                             " ORDER BY created_at DESC LIMIT 5")
    frontier = list(dict.fromkeys(
        [n["id"] for n in start]
        + [n["id"] for n in search_nodes(store, query, limit=5)]
        + [i for e in hits for i in (e["source_id"], e["target_id"])]
    ))
    seen_nodes = set(frontier)
    for hop in range(depth):
        if len(rows) >= MAX_ROWS or not frontier:
            break
        next_frontier: list[int] = []
        for node_id in frontier:
            for edge in edges_around(store, node_id, categories=categories, since=since,
                                     limit=EXPANSION_PER_NODE[hop]):
                if edge["id"] in rows:
                    continue
                rows[edge["id"]] = edge
                for other in (edge["source_id"], edge["target_id"]):
                    if other not in seen_nodes:
                        seen_nodes.add(other)
                        next_frontier.append(other)
            if len(rows) >= MAX_ROWS * 2:
                break
        frontier = next_frontier

    tasks = _tasks_for(store, query) if categories == ["task"] else []
    if not rows and not tasks and not said:
        return Outcome(f"No memories match {query!r}.", {"edge_ids": []})
    ordered = list(rows.values())
    task_lines = [f"task {task_line(store, t)}" for t in tasks]
    # the matched facts, then the turns they came from or that say it, then the linked
    turn_lines = [f"said {turn_text(m).removeprefix('- ')}" for m in said]
    lines = (task_lines + [edge_line(e) for e in ordered[:len(hits)]] + turn_lines
             + [edge_line(e) for e in ordered[len(hits):]])
    text, kept = bounded(f"Recall {query!r}: {len(hits)}{'+' if more_hits else ''} matched, "
                         f"{len(ordered) - len(hits)} linked"
                         + (f", {len(tasks)} tasks" if tasks else "")
                         + (f", {len(said)} turns said." if said else "."),
                         lines, more=more_hits)
    shown = lines[:kept]
    kept_edges = [e for e in ordered if edge_line(e) in shown]
    return Outcome(text, {"edge_ids": [e["id"] for e in kept_edges],
                          "message_ids": [m["id"] for m in said
                                          if f"said {turn_text(m).removeprefix('- ')}" in shown]})


def _tasks_for(store: GraphStore, query: str, recent: int = 5) -> list[Row]:
    """Tasks whose name or description matches, then the newest: a task is found by what
    it is about even when nothing links to it yet, with its state and description."""
    matched = [n for n in search_nodes(store, query, limit=20)
               if n["kind"] == "task" and n["deleted_at"] is None]
    newest = store.query("SELECT * FROM nodes WHERE kind = 'task' AND deleted_at IS NULL"
                         " ORDER BY created_at DESC, id DESC LIMIT ?", (recent,))
    return list({t["id"]: t for t in [*matched, *newest]}.values())[:10]


def _edge(store: GraphStore, edge_id: int) -> Row:
    return store.query(EDGE_SELECT + " WHERE e.id = ?", (edge_id,))[0]


@tool("memory_commit",
      "Store facts the user stated as subject-relation-object triplets in the user's words "
      'and language; the user is the subject "User". Repeating a fact reinforces it.',
      obj({
          "triplets": {"type": "array", "items": TRIPLET, "minItems": 1, "maxItems": 50},
          "entity_types": {"type": "object", "additionalProperties": STR,
                           "maxProperties": MAX_NAMES},
          "temporal_tag": STR,
      }, ("triplets",)),
      category="memory_update",
      for_apps=(
          "Save facts about the person in their long-term memory (TrulyMEM), as "
          "subject-relation-object triplets in the person's own words and language. The "
          "person is the subject \"User\" (I, me, 我 mean the person too). One fact per "
          "triplet: {\"subject\": \"User\", \"relation\": \"lives in\", \"object\": "
          "\"Hangzhou\"}. Saving a fact again reinforces it instead of copying it. Save "
          "what the person said or confirmed, not guesses; give a confidence below 1 when "
          "unsure. The person sees every change in TrulyMEM, marked with your app's name, "
          "and can undo it."),
      compact=('Store facts the user stated as triplets; the user is "User".',
               obj({"triplets": {"type": "array", "minItems": 1, "items": obj(
                   {"subject": NAME, "relation": NAME, "object": NAME},
                   ("subject", "relation", "object"))}}, ("triplets",))))
def memory_commit(store: GraphStore, args: dict[str, Any]) -> Outcome:
    types = args.get("entity_types", {})
    typed = {normalize_name(k): v for k, v in types.items()}
    tag = args.get("temporal_tag")
    created, reinforced, lines, replaced = 0, 0, [], []
    for triplet in args["triplets"]:
        subject, obj = the_person(triplet["subject"]), the_person(triplet["object"])
        source = store.upsert_node(
            subject, type_=triplet.get("subject_type") or typed.get(normalize_name(subject)))
        same = same_in_slot(store, source["id"], triplet["relation"], obj)
        if same is not None:  # the value said again in the other script: one fact
            lines.append(_said_again(store, same, obj))
            reinforced += 1
            continue
        target = store.upsert_node(
            obj, type_=triplet.get("object_type") or typed.get(normalize_name(obj)))
        edge, new = store.add_edge(source["id"], triplet["relation"], target["id"],
                                   category="general",
                                   confidence=triplet.get("confidence", 1.0), temporal_tag=tag)
        created += new
        reinforced += not new
        lines.append(("+ " if new else "= ") + fact_line(_edge(store, edge["id"])))
        for old in older_values(store, edge, target["name"]):
            store.set_edge_status(old, "superseded", valid_to=store.clock(),
                                  superseded_by=edge["id"])
            replaced.append(old["id"])
            lines.append(f"~ {fact_line(_edge(store, old['id']))} (no longer true: replaced)")
    summary = f"committed {created} new, reinforced {reinforced}" + (
        f", replaced {len(replaced)}" if replaced else "")
    text, _ = bounded(f"Committed: {created} new, {reinforced} reinforced"
                      + (f", {len(replaced)} older values replaced." if replaced else "."),
                      lines)
    return Outcome(text, {"created": created, "reinforced": reinforced,
                          "replaced": len(replaced), "replaced_ids": replaced}, summary)


def _said_again(store: GraphStore, same: Row, name: str) -> str:
    """"我住在里昂" after "lives in Lyon": the kept fact is reinforced and the new name
    kept as another name of its value (an alias), never a replacement."""
    edge, _ = store.add_edge(same["source_id"], same["relation"], same["target_id"],
                             category="general")
    alias = store.upsert_node(name)
    store.add_edge(same["target_id"], ALIAS, alias["id"], category="general")
    return f"= {fact_line(_edge(store, edge['id']))} ({name!r} is the same: another name)"


ALIAS = "also called"


def _parse_time(text: str) -> float:
    try:
        return datetime.fromisoformat(text.strip().replace("Z", "+00:00")).timestamp()
    except (ValueError, OverflowError, OSError):
        raise ToolError(f"criteria.before: {text!r} is not an ISO date such as "
                        "2026-01-31 or 2026-01-31T12:00 within this clock's range") from None


def purge_matches(store: GraphStore, criteria: dict[str, Any]) -> list[Row]:
    """Active general edges matching every criterion; a name that matches nothing selects
    nothing, and names match whole (after normalisation), never as prefixes."""
    where = ["e.status = 'active'", "e.category = 'general'"]
    params: list[Any] = []
    exact = {"subject": "s.norm_name", "object": "t.norm_name", "relation": "e.norm_relation"}
    contains = {"subject_contains": "s.norm_name", "object_contains": "t.norm_name"}
    types = {"subject_type": "s.type", "object_type": "t.type"}
    for key, value in criteria.items():
        if key in exact:
            where.append(f"{exact[key]} = ?")
            params.append(normalize_name(the_person(value) if key != "relation" else value))
        elif key in contains:
            if not normalize_name(value):
                raise ToolError(f"criteria.{key} must contain a visible character; blank "
                                "text would match every memory")
            where.append(f"instr({contains[key]}, ?) > 0")
            params.append(normalize_name(value))
        elif key in types:
            where.append(f"lower({types[key]}) = lower(?)")
            params.append(value.strip())
        elif key == "before":
            where.append("e.created_at < ?")
            params.append(_parse_time(value))
    return store.query(EDGE_SELECT + " WHERE " + " AND ".join(where) + " ORDER BY e.id", params)


PURGE_ALIASES = {"relation_type": "relation", "target": "object",
                 "target_contains": "object_contains", "source_type": "subject_type",
                 "target_type": "object_type", "time_before": "before"}


def purge_names(args: dict[str, Any]) -> dict[str, Any]:
    """The criteria's first names (target, relation_type, source_type…) still work: the
    seed documented them, and models trained on it use them."""
    criteria, replacement = args.get("criteria"), args.get("new_relation")
    if isinstance(criteria, dict):
        args = {**args, "criteria": {PURGE_ALIASES.get(k, k): v for k, v in criteria.items()}}
    if isinstance(replacement, dict) and "target" in replacement:
        args = {**args, "new_relation": {("object" if k == "target" else k): v
                                         for k, v in replacement.items()}}
    return args


@tool("memory_purge",
      'Forget (mode "soft") or replace (mode "supersede", with new_relation) the memories '
      "matching every criterion. More than 20 matches needs confirm=true.",
      obj({
          "criteria": {**obj({
              "subject": NAME, "relation": NAME, "object": NAME,
              "subject_contains": NAME, "object_contains": NAME,
              "subject_type": NAME, "object_type": NAME,
              "before": {"type": "string", "minLength": 1,
                         "description": "ISO date: only memories stored before it"},
          }), "minProperties": 1},
          "mode": {"type": "string", "enum": ["soft", "supersede"]},
          "new_relation": {**obj({"relation": NAME, "object": NAME}), "minProperties": 1},
          "confirm": {"type": "boolean"},
      }, ("criteria",)),
      category="memory_update", destroys="delete or supersede", prepare=purge_names,
      for_apps=(
          "Forget (mode \"soft\": into TrulyMEM's trash, restorable) or correct (mode "
          "\"supersede\": a new relation and/or object replaces the old, which is kept as "
          "history) every active fact about the person matching all the criteria. To "
          "correct where the person lives: criteria {\"subject\": \"User\", "
          "\"relation\": \"lives in\"}, mode \"supersede\", new_relation {\"object\": "
          "\"Shanghai\"}. Use it only when the person asks to forget or correct something. "
          "Other apps may take away only a few facts per session and per hour; a call "
          "over that is refused whole, nothing changes, and only the person can do it in "
          "TrulyMEM."),
      compact=('Forget (mode "soft") or replace (mode "supersede" + new_relation) '
               "matching memories.",
               obj({"criteria": {**obj({"subject": NAME, "relation": NAME, "object": NAME}),
                                 "minProperties": 1},
                    "mode": {"type": "string", "enum": ["soft", "supersede"]},
                    "new_relation": obj({"relation": NAME, "object": NAME})},
                   ("criteria",))))
def memory_purge(store: GraphStore, args: dict[str, Any]) -> Outcome:
    mode = args.get("mode", "soft")
    replacement = args.get("new_relation")
    if mode == "supersede" and not replacement:
        raise ToolError("mode 'supersede' needs new_relation with the new relation and/or "
                        "object, e.g. {\"relation\": \"lives in\", \"object\": \"Shanghai\"}")
    matches = purge_matches(store, args["criteria"])
    if not matches:
        return Outcome("Nothing matches those criteria; nothing was changed.", {"edge_ids": []})
    if len(matches) > PURGE_CONFIRM_ABOVE and not args.get("confirm"):
        raise ToolError(f"{len(matches)} memories match; a purge of more than "
                        f"{PURGE_CONFIRM_ABOVE} needs confirm=true. Nothing was changed.")
    now = store.clock()
    lines = []
    for edge in matches:
        if mode == "soft":
            store.set_edge_status(edge, "deleted")
            lines.append("- " + edge_line(edge))
            continue
        relation = replacement.get("relation", edge["relation"])
        target_id = (store.upsert_node(replacement["object"])["id"]
                     if "object" in replacement else edge["target_id"])
        if normalize_name(relation) == edge["norm_relation"] and target_id == edge["target_id"]:
            raise ToolError("new_relation must change the relation or the object")
        new, _ = store.add_edge(edge["source_id"], relation, target_id, category="general",
                                confidence=edge["confidence"])
        store.set_edge_status(edge, "superseded", valid_to=now, superseded_by=new["id"])
        lines.append(f"~ {edge_line(edge)} => {edge_line(_edge(store, new['id']))}")
    verb = "deleted (restorable)" if mode == "soft" else "superseded"
    text, _ = bounded(f"{len(matches)} memories {verb}.", lines)
    return Outcome(text, {"edge_ids": [e["id"] for e in matches]},
                   f"{verb} {len(matches)} memories")


@tool("memory_forget",
      "Forget these facts by their ids (into the trash, restorable).",
      obj({"edge_ids": {"type": "array", "items": {"type": "integer", "minimum": 1},
                        "minItems": 1, "maxItems": 50, "uniqueItems": True}}, ("edge_ids",)),
      category="memory_update", destroys="delete", audience=(PERSON,))
def memory_forget(store: GraphStore, args: dict[str, Any]) -> Outcome:
    """The facts a forget reached past what was asked, held for the person: allowing the
    request forgets exactly these (see `core.writer.forget_scope`)."""
    marks = ", ".join("?" * len(args["edge_ids"]))
    matches = store.query(EDGE_SELECT + f" WHERE e.id IN ({marks}) AND e.status = 'active'"
                          " AND e.category = 'general' ORDER BY e.id", args["edge_ids"])
    if not matches:
        return Outcome("None of those memories is active; nothing was changed.",
                       {"edge_ids": []})
    for edge in matches:
        store.set_edge_status(edge, "deleted")
    text, _ = bounded(f"{len(matches)} memories deleted (restorable).",
                      ["- " + edge_line(e) for e in matches])
    return Outcome(text, {"edge_ids": [e["id"] for e in matches]},
                   f"deleted (restorable) {len(matches)} memories")


@tool("memory_introspect", "Counts, size and most-mentioned entities of the memory.",
      obj({}), category="memory_query", writes=False, tool_set=FULL,
      for_apps=("How much the person's memory holds (facts, entities, tasks) and the "
                "entities mentioned most: a cheap look before recalling."))
def memory_introspect(store: GraphStore, _args: dict[str, Any]) -> Outcome:
    nodes = store.query("SELECT kind, count(*) AS n FROM nodes GROUP BY kind ORDER BY kind")
    edges = store.query("SELECT category, status, count(*) AS n FROM edges"
                        " GROUP BY category, status ORDER BY category, status")
    top = store.query("SELECT name, type, mention_count FROM nodes WHERE kind = 'entity'"
                      " ORDER BY mention_count DESC, updated_at DESC LIMIT 10")
    pages = store.query_one("SELECT page_count * page_size AS size FROM pragma_page_count(),"
                            " pragma_page_size()")
    changes = store.query_one("SELECT count(*) AS n FROM change_log")["n"]
    lines = [
        "Nodes: " + (", ".join(f"{r['kind']} {r['n']}" for r in nodes) or "none"),
        "Edges: " + (", ".join(f"{r['category']}/{r['status']} {r['n']}" for r in edges)
                     or "none"),
        f"Database: {pages['size'] / 1024:.0f} KiB, {changes} logged changes",
        "Most mentioned: " + (", ".join(
            f"{r['name']}{' (' + r['type'] + ')' if r['type'] else ''} x{r['mention_count']}"
            for r in top) or "none"),
    ]
    counts = memory_counts(store.conn)
    lines.insert(0, f"Memory: {counts_line(counts)}")
    data = {
        "counts": counts,
        "nodes": {r["kind"]: r["n"] for r in nodes},
        "edges": {f"{r['category']}/{r['status']}": r["n"] for r in edges},
        "size_bytes": pages["size"], "changes": changes,
    }
    return Outcome("\n".join(lines), data)


@tool("memory_archive", "Archive general memories untouched for `days` (default 30).",
      obj({"days": DAYS}), category="memory_update", destroys="archive", tool_set=FULL)
def memory_archive(store: GraphStore, args: dict[str, Any]) -> Outcome:
    days = args.get("days", 30)
    now = store.clock()
    stale = store.query(
        "SELECT id, status FROM edges WHERE status = 'active' AND category = 'general'"
        " AND updated_at < ?", (now - days * DAY,))
    for edge in stale:
        store.update("edges", edge["id"], {"status": "archived", "archived_at": now})
    summary = f"archived {len(stale)} memories untouched for {days} days"
    return Outcome(summary[0].upper() + summary[1:] + ".", {"archived": len(stale)}, summary)


@tool("memory_cleanup",
      "Permanently remove deleted memories older than `older_than_days` (default 90). "
      "dry_run (default true) only counts.",
      obj({"dry_run": {"type": "boolean"}, "older_than_days": DAYS}),
      category="memory_update", destroys="remove for good", tool_set=FULL)
def memory_cleanup(store: GraphStore, args: dict[str, Any]) -> Outcome:
    """Deleted memories sit in the trash for at least `store.trash_days`: a smaller
    `older_than_days` is raised to it, so no turn can make a fresh deletion permanent."""
    asked = args.get("older_than_days", 90)
    days = max(asked, store.trash_days)
    floor = (f" (deleted memories stay in the trash for {store.trash_days} days, so "
             f"{asked} was raised to {days})") if days != asked else ""
    old = store.query("SELECT id FROM edges WHERE status = 'deleted' AND updated_at < ?",
                      (store.clock() - days * DAY,))
    if args.get("dry_run", True):
        return Outcome(f"Dry run: {len(old)} deleted memories older than {days} days would be "
                       f"removed for good{floor}. Call with dry_run=false to remove them.",
                       {"removable": len(old)})
    for edge in old:
        store.hard_delete_edge(edge["id"])
    summary = f"removed {len(old)} deleted memories older than {days} days"
    return Outcome(summary[0].upper() + summary[1:] + floor + ".", {"removed": len(old)},
                   summary)


@tool("memory_query_archived",
      "Search archived memories by keyword; `days` limits to those archived recently.",
      obj({"keyword": STR, "days": POSITIVE_DAYS,
           "limit": {"type": "integer", "minimum": 1, "maximum": 100}}),
      category="memory_query", writes=False, tool_set=FULL)
def memory_query_archived(store: GraphStore, args: dict[str, Any]) -> Outcome:
    limit = args.get("limit", 20)
    keyword = args.get("keyword", "").strip()
    days = args.get("days")
    since = store.clock() - days * DAY if days else 0.0
    if keyword:
        rows = search_edges(store, keyword, statuses=("archived",), limit=limit * 4)
        rows = [r for r in rows if (r["archived_at"] or 0) >= since][:limit]
    else:
        rows = store.query(EDGE_SELECT + " WHERE e.status = 'archived' AND e.archived_at >= ?"
                           " ORDER BY e.archived_at DESC LIMIT ?", (since, limit))
    if not rows:
        return Outcome("No archived memories match.", {"edge_ids": []})
    text, _ = bounded(f"Archived memories: {len(rows)}.", [edge_line(r) for r in rows])
    return Outcome(text, {"edge_ids": [r["id"] for r in rows]})


@tool("context_rewrite",
      "Replace this turn's earlier tool exchanges with your summary to save context.",
      obj({"summary": NAME}, ("summary",)), category="memory_query", writes=False,
      tool_set=FULL)
def context_rewrite(_store: GraphStore, args: dict[str, Any]) -> Outcome:
    """The chat loop does the rewrite; the tool only accepts and hands over the summary."""
    return Outcome("Context rewrite accepted: this turn's earlier tool exchanges will be "
                   "replaced by your summary.", {"rewrite_summary": args["summary"]})
