"""Working-memory tools: task nodes chained by NEXT_TASK and linked to their memories."""

from __future__ import annotations

from typing import Any

from core.store import GraphStore, Row
from core.store.text import normalize_name
from core.tools.base import Outcome, ToolError, bounded
from core.tools.registry import FULL, tool
from core.tools.schema_parts import NAME, NAMES, STR, TASK_STATES, obj

NEXT = "NEXT_TASK"
CONTAINS = "CONTAINS_INFO"


LIVE_TASKS = "SELECT * FROM nodes WHERE kind = 'task' AND deleted_at IS NULL"


def _task(store: GraphStore, task_id: str) -> Row:
    node = store.find_node(task_id)
    if node is not None and node["kind"] == "task" and node["deleted_at"] is not None:
        raise ToolError(f"the task {node['name']!r} was deleted and is in the trash; only "
                        "the person can restore it")
    if node is None or node["kind"] != "task":
        recent = store.query("SELECT name FROM nodes WHERE kind = 'task' AND deleted_at IS NULL"
                             " ORDER BY created_at DESC, id DESC LIMIT 8")
        names = ", ".join(r["name"] for r in recent) or "none yet"
        raise ToolError(f"there is no task {task_id!r} (recent tasks: {names})")
    return node


def _info_names(store: GraphStore, task_id: int) -> list[str]:
    return [r["name"] for r in store.query(
        "SELECT n.name FROM edges e JOIN nodes n ON n.id = e.target_id WHERE e.source_id = ?"
        " AND e.norm_relation = ? AND e.status = 'active' ORDER BY e.id",
        (task_id, normalize_name(CONTAINS)))]


def task_line(store: GraphStore, task: Row) -> str:
    info = _info_names(store, task["id"])
    line = f"[{task['state']}] {task['name']}: {task['description'] or ''}"
    if task["summary"]:
        line += f" | summary: {task['summary']}"
    if info:
        line += f" | info: {', '.join(info[:8])}{' …' if len(info) > 8 else ''}"
    return line


def _link(store: GraphStore, task: Row, names: list[str]) -> int:
    for name in names:
        node = store.upsert_node(name)
        if node["id"] == task["id"]:
            raise ToolError(f"a task cannot contain itself ({name!r})")
        store.add_edge(task["id"], CONTAINS, node["id"], category="task")
    return len(names)


@tool("task_create",
      "Start a task (in_progress), one per step of a plan, chained after the last task.",
      obj({"task_id": NAME, "description": NAME, "info_nodes": NAMES},
          ("task_id", "description")),
      category="task_update",
      for_apps=("Add a task to the person's list of what they are working on (kept in "
                "TrulyMEM). task_id is a short unique name, description says what it is; "
                "one task per step of a plan, chained in the order created. info_nodes "
                "optionally links memories (entity names) to the task."),
      compact=("Start a task, one per step of a plan.",
               obj({"task_id": NAME, "description": NAME}, ("task_id", "description"))))
def task_create(store: GraphStore, args: dict[str, Any]) -> Outcome:
    name = args["task_id"]
    if not normalize_name(name):
        raise ToolError(f"task_id {name!r} has no visible character")
    existing = store.find_node(name)
    if existing is not None:
        what = f"task (state {existing['state']})" if existing["kind"] == "task" else "memory"
        if existing["deleted_at"] is not None:
            what = "deleted task or memory in the trash"
        raise ToolError(f"{name!r} is already a {what}; choose another task_id")
    last = store.query_one(LIVE_TASKS + " ORDER BY created_at DESC, id DESC LIMIT 1")
    now = store.clock()
    task_id = store.insert("nodes", {
        "name": " ".join(name.split()), "norm_name": normalize_name(name), "kind": "task",
        "type": "Task", "description": args["description"], "state": "in_progress",
        "mention_count": 1, "created_at": now, "updated_at": now,
    })
    task = store.row("nodes", task_id)
    if last is not None:
        store.add_edge(last["id"], NEXT, task_id, category="task")
    _link(store, task, args.get("info_nodes", []))
    return Outcome(f"Task created: {task_line(store, task)}", {"task_id": task_id},
                   f"task {task['name']} created")


@tool("task_set_state", "Mark a task done, paused, cancelled or in progress again.",
      obj({"task_id": NAME, "state": {"type": "string", "enum": list(TASK_STATES)}},
          ("task_id", "state")),
      category="task_update",
      for_apps=("Mark one of the person's tasks (by its task_id) completed, paused, "
                "cancelled or in_progress again."),
      compact=("Mark a task completed, paused, cancelled or in_progress.",
               obj({"task_id": NAME, "state": {"type": "string", "enum": [
                   "in_progress", "completed", "paused", "cancelled"]}},
                   ("task_id", "state"))))
def task_set_state(store: GraphStore, args: dict[str, Any]) -> Outcome:
    task = _task(store, args["task_id"])
    state = TASK_STATES[args["state"]]
    if task["state"] == state:
        return Outcome(f"Task {task['name']} is already {state}; nothing changed.")
    task = store.update("nodes", task["id"], {"state": state, "updated_at": store.clock()})
    return Outcome(f"Task updated: {task_line(store, task)}", {"state": state},
                   f"task {task['name']} set to {state}")


@tool("task_delete", "Delete a task; its info nodes too unless something else uses them.",
      obj({"task_id": NAME, "delete_info_nodes": {"type": "boolean"}}, ("task_id",)),
      category="task_update", destroys="delete", tool_set=FULL)
def task_delete(store: GraphStore, args: dict[str, Any]) -> Outcome:
    """Move the task to the trash: the node is marked deleted and its links with it, so the
    person can restore it (Memory tab or undo) until the trash is emptied."""
    task = _task(store, args["task_id"])
    now = store.clock()
    edges = store.query("SELECT * FROM edges WHERE (source_id = ? OR target_id = ?)"
                        " AND status = 'active'", (task["id"], task["id"]))
    next_key = normalize_name(NEXT)
    before = [e["source_id"] for e in edges
              if e["target_id"] == task["id"] and e["norm_relation"] == next_key]
    after = [e["target_id"] for e in edges
             if e["source_id"] == task["id"] and e["norm_relation"] == next_key]
    info = [e["target_id"] for e in edges
            if e["source_id"] == task["id"] and e["norm_relation"] == normalize_name(CONTAINS)]
    for edge in edges:
        store.set_edge_status(edge, "deleted", valid_to=now)
    if before and after:
        store.add_edge(before[0], NEXT, after[0], category="task")
    store.update("nodes", task["id"], {"deleted_at": now, "updated_at": now})
    removed = 0
    if args.get("delete_info_nodes", True):
        for node_id in dict.fromkeys(info):
            node = store.row("nodes", node_id)
            # Any other edge, whatever its state (archived, superseded), keeps the node.
            used = store.query_one("SELECT 1 AS used FROM edges WHERE (source_id = ?"
                                   " OR target_id = ?) AND NOT (source_id = ? AND"
                                   " status = 'deleted' AND norm_relation = ?) LIMIT 1",
                                   (node_id, node_id, task["id"], normalize_name(CONTAINS)))
            if node and node["kind"] == "entity" and node["deleted_at"] is None and not used:
                store.update("nodes", node_id, {"deleted_at": now, "updated_at": now})
                removed += 1
    return Outcome(f"Task {task['name']} deleted (in the trash, restorable); {removed} info "
                   "node(s) no longer used by anything went with it.",
                   {"removed_info_nodes": removed}, f"task {task['name']} deleted")


@tool("task_link_info", "Link memories (node names) to a task.",
      obj({"task_id": NAME, "info_node_names": {**NAMES, "minItems": 1}},
          ("task_id", "info_node_names")),
      category="task_update", tool_set=FULL)
def task_link_info(store: GraphStore, args: dict[str, Any]) -> Outcome:
    task = _task(store, args["task_id"])
    count = _link(store, task, args["info_node_names"])
    store.update("nodes", task["id"], {"updated_at": store.clock()})
    return Outcome(f"Linked {count} to the task: {task_line(store, task)}", {"linked": count},
                   f"{count} memories linked to task {task['name']}")


@tool("task_archive", "Archive a finished task with a summary.",
      obj({"task_id": NAME, "summary": STR}, ("task_id",)),
      category="task_update", destroys="archive", tool_set=FULL)
def task_archive(store: GraphStore, args: dict[str, Any]) -> Outcome:
    task = _task(store, args["task_id"])
    now = store.clock()
    changes: dict[str, Any] = {"state": "archived", "updated_at": now}
    if args.get("summary"):
        changes["summary"] = args["summary"]
    task = store.update("nodes", task["id"], changes)
    links = store.query("SELECT * FROM edges WHERE source_id = ? AND norm_relation = ?"
                        " AND status = 'active'", (task["id"], normalize_name(CONTAINS)))
    for edge in links:
        store.update("edges", edge["id"], {"status": "archived", "archived_at": now,
                                           "updated_at": now})
    return Outcome(f"Task {task['name']} archived with {len(links)} linked memories.",
                   {"archived_links": len(links)}, f"task {task['name']} archived")


@tool("task_query", "List tasks, newest first.",
      obj({"limit": {"type": "integer", "minimum": 1, "maximum": 100},
           "state_filter": {"type": "string", "enum": [*TASK_STATES, "archived"]}}),
      category="task_query", writes=False, tool_set=FULL,
      for_apps=("List the person's tasks (what they are working on), newest first, with "
                "state and description; state_filter narrows to in_progress, completed, "
                "paused, cancelled or archived."))
def task_query(store: GraphStore, args: dict[str, Any]) -> Outcome:
    limit = args.get("limit", 10)
    state = args.get("state_filter")
    sql, params = LIVE_TASKS, []
    if state:
        sql += " AND state = ?"
        params.append(TASK_STATES.get(state, state))
    total = store.query_one(sql.replace("*", "count(*) AS n", 1), params)["n"]
    tasks = store.query(sql + " ORDER BY created_at DESC, id DESC LIMIT ?", [*params, limit])
    if not tasks:
        return Outcome("No tasks" + (f" in state {state}." if state else " yet."), {"tasks": []})
    text, _ = bounded(f"Tasks ({len(tasks)} of {total}, newest first):",
                      [task_line(store, t) for t in tasks])
    return Outcome(text, {"tasks": [t["name"] for t in tasks]})
