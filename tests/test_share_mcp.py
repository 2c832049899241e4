"""The memory shared with other apps: `trulymem mcp`, driven by the SDK's own client over
stdio and HTTP (and in-process for the budget's arithmetic), on a real SQLite file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from core.share.server import SharedMemory, build_server
from core.store import GraphStore, review
from core.tools import REGISTRY, ToolExecutor

pytestmark = pytest.mark.slow  # `-m "not slow"` leaves these out of a quick loop


ROOT = Path(__file__).resolve().parents[1]
APP_TOOLS = {"memory_recall", "memory_commit", "memory_purge", "memory_introspect",
             "task_query", "task_create", "task_set_state"}
TOKEN = "a-test-token-0123456789abcdef"


def share(home: Path, **settings: Any) -> Path:
    """A data folder whose settings share the memory (recall by words: no indexer)."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({
        "share_memory": True, "recall_by_meaning": False, "share_token": TOKEN,
        **settings}), "utf-8")
    return home


def stdio(home: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "app.main", "mcp", "--home", str(home), *extra],
                                 cwd=str(ROOT))


def app(name: str) -> types.Implementation:
    return types.Implementation(name=name, version="1.0")


def triplets(*facts: tuple[str, str, str]) -> dict[str, Any]:
    return {"triplets": [{"subject": s, "relation": r, "object": o} for s, r, o in facts]}


def text(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content)


def facts(home: Path, status: str = "active") -> list[str]:
    store = GraphStore(home / "graph_memory.db")
    try:
        return [f"{r['s']} {r['relation']} {r['t']}" for r in store.query(
            "SELECT s.name AS s, e.relation, t.name AS t FROM edges e JOIN nodes s ON"
            " s.id = e.source_id JOIN nodes t ON t.id = e.target_id WHERE e.status = ?"
            " AND e.category = 'general' ORDER BY e.id", (status,))]
    finally:
        store.close()


def test_an_app_lists_the_tools_and_resources_meant_for_it(tmp_path):
    home = share(tmp_path / "home")

    async def session() -> tuple[types.ListToolsResult, types.ListResourcesResult, str]:
        async with Client(stdio(home), client_info=app("Claude Desktop")) as client:
            listed = await client.list_tools()
            resources = await client.list_resources()
            persona = await client.read_resource("memory://snapshot")
            with pytest.raises(MCPError, match="unknown resource"):
                await client.read_resource("memory://../config.json")
            return listed, resources, persona.contents[0].text

    listed, resources, snapshot = anyio.run(session)
    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) == APP_TOOLS
    for name, tool in tools.items():
        assert tool.description == REGISTRY[name].for_apps  # written for outside agents
        assert tool.input_schema["type"] == "object"
        assert tool.annotations.read_only_hint == (not REGISTRY[name].writes)
    assert tools["memory_purge"].annotations.destructive_hint
    assert {str(r.uri) for r in resources.resources} == {
        "memory://snapshot", "memory://persona", "memory://tasks"}
    assert isinstance(snapshot, str)


def test_an_app_commits_and_recalls_in_english_and_chinese_and_the_person_can_undo(tmp_path):
    home = share(tmp_path / "home")

    async def session() -> list[str]:
        async with Client(stdio(home), client_info=app("Claude Desktop")) as client:
            saved = await client.call_tool("memory_commit", triplets(
                ("User", "lives in", "Hangzhou"), ("我", "喜欢", "龙井茶")))
            english = await client.call_tool("memory_recall",
                                             {"query_intent": "Hangzhou"})
            chinese = await client.call_tool("memory_recall", {"query_intent": "龙井茶"})
            bad = await client.call_tool("memory_recall", {"query_intent": 7})
            assert bad.is_error and "query_intent" in text(bad)
            return [text(saved), text(english), text(chinese)]

    saved, english, chinese = anyio.run(session)
    assert "2 new" in saved
    assert "User -lives in-> Hangzhou" in english
    assert "User -喜欢-> 龙井茶" in chinese

    store = GraphStore(home / "graph_memory.db")
    try:
        change = store.query_one("SELECT id, actor, tool FROM change_log")
        assert change == {"id": change["id"], "actor": "mcp:Claude Desktop",
                          "tool": "memory_commit"}
        waiting = review.waiting(store)["changes"]  # in the person's review inbox
        assert [(c["id"], c["actor"]) for c in waiting] == [(change["id"],
                                                             "mcp:Claude Desktop")]
        assert ToolExecutor(store).undo(change["id"])["success"]
    finally:
        store.close()
    assert facts(home) == []


def _in_process(home: Path, name: str, calls: list[tuple[str, dict[str, Any]]],
                memory: SharedMemory) -> list[types.CallToolResult]:
    """One app session against the server object itself (the SDK's in-process link)."""

    async def session() -> list[types.CallToolResult]:
        async with Client(build_server(memory), client_info=app(name)) as client:
            return [await client.call_tool(tool, args) for tool, args in calls]

    return anyio.run(session)


def test_forgetting_past_the_budget_is_refused_whole_and_confirm_does_not_lift_it(tmp_path):
    home = share(tmp_path / "home", tool_limits={"destroyed_rows_max": 3})
    memory = SharedMemory(home)

    def forget(*cats: int) -> list[tuple[str, dict[str, Any]]]:
        return [("memory_purge", {"criteria": {"object": f"cat {n}"}}) for n in cats]

    try:
        pets = [("User", "has a pet", f"cat {n}") for n in range(12)]
        saved, refused, one = _in_process(home, "Cursor", [
            ("memory_commit", triplets(*pets)),
            ("memory_purge", {"criteria": {"relation": "has a pet"}, "confirm": True}),
            *forget(0)], memory)
        assert not saved.is_error
        assert refused.is_error, text(refused)
        assert "Nothing was changed" in text(refused)
        assert "3 of 3 rows left in this session" in text(refused)
        assert not one.is_error  # within the budget: done
        assert len(facts(home)) == 11
        # Each session may take 3 rows, all apps together 9 an hour: new sessions do not
        # reset what the hour allows.
        for outcome in [*_in_process(home, "App 1", forget(1, 2, 3), memory),
                        *_in_process(home, "App 2", forget(4, 5, 6), memory),
                        *_in_process(home, "App 3", forget(7, 8), memory)]:
            assert not outcome.is_error, text(outcome)
        last = _in_process(home, "App 3", forget(9), memory)[0]
        assert last.is_error and "0 of 9 this hour" in text(last)
        assert len(facts(home)) == 3
    finally:
        memory.close()


def test_read_only_sharing_offers_and_runs_no_write(tmp_path):
    home = share(tmp_path / "home")

    async def session() -> tuple[set[str], types.CallToolResult]:
        async with Client(stdio(home, "--read-only"), client_info=app("Cursor")) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            return names, await client.call_tool("memory_commit", triplets(
                ("User", "likes", "tea")))

    names, refused = anyio.run(session)
    assert names == {"memory_recall", "memory_introspect", "task_query"}
    assert refused.is_error and "read-only" in text(refused)
    store = GraphStore(home / "graph_memory.db")
    try:
        assert store.query("SELECT count(*) AS n FROM change_log")[0]["n"] == 0
    finally:
        store.close()


def test_a_forget_past_the_budget_over_stdio_changes_nothing(tmp_path):
    home = share(tmp_path / "home", tool_limits={"destroyed_rows_max": 2})

    async def session() -> types.CallToolResult:
        async with Client(stdio(home), client_info=app("Claude Desktop")) as client:
            await client.call_tool("memory_commit", triplets(
                *[("User", "visited", city) for city in ("Oslo", "Lima", "Pune")]))
            return await client.call_tool("memory_purge", {
                "criteria": {"subject": "User"}, "mode": "soft", "confirm": True})

    refused = anyio.run(session)
    assert refused.is_error and "Nothing was changed" in text(refused)
    assert len(facts(home)) == 3


def test_turning_sharing_off_stops_a_running_server_at_its_next_call(tmp_path):
    home = share(tmp_path / "home")
    memory = SharedMemory(home)
    try:
        assert memory.call("memory_introspect", {}, "Cursor", "s")["success"]
        config = json.loads((home / "config.json").read_text("utf-8"))
        (home / "config.json").write_text(json.dumps({**config, "share_memory": False,
                                                      "trash_days": 31}), "utf-8")
        refused = memory.call("memory_commit", triplets(("User", "a", "b")), "Cursor", "s")
        assert not refused["success"] and "stopped sharing" in refused["error"]
    finally:
        memory.close()


def test_the_server_will_not_start_while_sharing_is_off(tmp_path):
    home = share(tmp_path / "home", share_memory=False)
    done = subprocess.run([sys.executable, "-m", "app.main", "mcp", "--home", str(home)],
                          cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 3
    assert "Share memory with other apps" in done.stderr
    assert not (home / "graph_memory.db").exists()


def test_http_needs_the_token_and_attributes_the_change(http_server):
    url, home = http_server
    for wrong in ({}, {"Authorization": "Bearer not-the-token"},
                  {"Authorization": TOKEN}, {"Authorization": f"Basic {TOKEN}"},
                  {"Authorization": f"Bearer {TOKEN}x"}):
        refused = httpx2.post(url, headers=wrong, json={
            "jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert refused.status_code == 401, wrong

    async def session() -> tuple[str, str]:
        # The scheme in lower case, as some clients send it (RFC 7235: case-insensitive).
        async with httpx2.AsyncClient(headers={"Authorization": f"bearer {TOKEN}"}) as http, \
                Client(streamable_http_client(url, http_client=http),
                       client_info=app("Cherry Studio")) as client:
            saved = await client.call_tool("memory_commit", triplets(("User", "住在", "成都")))
            recalled = await client.call_tool("memory_recall", {"query_intent": "成都"})
            return text(saved), text(recalled)

    saved, recalled = anyio.run(session)
    assert "1 new" in saved and "User -住在-> 成都" in recalled
    store = GraphStore(home / "graph_memory.db")
    try:
        [change] = store.query("SELECT actor, via FROM change_log")
        assert change["actor"] == "mcp:Cherry Studio"
        # how it came, which the app cannot choose: this test process holds the connection
        assert change["via"].startswith("HTTP from ")
        if Path("/proc/net/tcp").exists():
            assert f"(pid {os.getpid()})" in change["via"], change["via"]
    finally:
        store.close()


def test_a_damaged_memory_is_shared_for_reading_only_and_says_why(tmp_path):
    from tests.test_bad_days import damage

    home = share(tmp_path / "home")
    store = GraphStore(home / "graph_memory.db")
    ToolExecutor(store).execute("memory_commit", triplets(("User", "likes", "tea")))
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    damage(home / "graph_memory.db")
    memory = SharedMemory(home)
    try:
        assert "memory_commit" not in memory.tools() and "memory_recall" in memory.tools()
        refused = memory.call("memory_commit", triplets(("User", "a", "b")), "Cursor", "s")
        assert not refused["success"] and "nothing was written" in refused["error"]
        assert "damaged" in refused["error"]  # the store's own reason, not the settings'
    finally:
        memory.close()
