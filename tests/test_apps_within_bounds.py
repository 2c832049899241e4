"""Other apps within bounds: what an app writes is budgeted per session and per hour like
what it takes away (retyping and re-tagging count), a call past it waits for the person's
Allow, and the change log names the app as it named itself next to how it came, which it
cannot choose. Real SQLite files; the SDK's own client, in process and over stdio."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from core.protocol.packets import PacketType
from core.share.identity import client_actor, command_line, http_via
from core.share.server import SharedMemory, build_server
from core.store import GraphStore
from core.tools import ToolExecutor, approvals
from tests.conftest import ask
from tests.test_share_mcp import facts, share, stdio, text, triplets

pytestmark = pytest.mark.slow


def session(memory: SharedMemory, name: str,
            calls: list[tuple[str, dict[str, Any]]]) -> list[types.CallToolResult]:
    async def run() -> list[types.CallToolResult]:
        async with Client(build_server(memory),
                          client_info=types.Implementation(name=name, version="1")) as client:
            return [await client.call_tool(tool, args) for tool, args in calls]

    return anyio.run(run)


def pets(first: int, count: int) -> dict[str, Any]:
    return triplets(*[("User", "has a pet", f"cat {n}") for n in range(first, first + count)])


def log(home: Path) -> list[dict[str, Any]]:
    store = GraphStore(home / "graph_memory.db")
    try:
        return store.query("SELECT actor, via, tool FROM change_log ORDER BY id")
    finally:
        store.close()


@pytest.fixture
def shared(tmp_path):
    """A shared memory folder with these settings, and its server object (closed after)."""
    opened: list[SharedMemory] = []

    def start(**settings: Any) -> tuple[Path, SharedMemory]:
        home = share(tmp_path / "home", **settings)
        opened.append(SharedMemory(home))
        return home, opened[-1]

    yield start
    for memory in opened:
        memory.close()


def test_writing_past_the_session_budget_waits_for_the_person_and_allow_runs_it(shared):
    home, memory = shared(share_write_rows=10)
    # 4 facts: the person's node, 4 cats, 4 facts = 9 rows, within 10
    first, second = session(memory, "Cursor", [("memory_commit", pets(0, 4)),
                                                ("memory_commit", pets(4, 3))])
    assert not first.is_error, text(first)
    assert second.is_error
    assert "add or change 6 rows" in text(second)
    assert "1 of 10 rows left in this session" in text(second)
    assert "Nothing was changed" in text(second) and "request 1" in text(second)
    assert len(facts(home)) == 4
    asked = approvals.pending(memory.store)
    assert [(a["actor"], a["reason"], a["tool"], a["count"]) for a in asked] == [
        ("mcp:Cursor", "writes", "memory_commit", 6)]
    assert {"verb": "added", "text": "User -has a pet-> cat 4"} in asked[0]["preview"]
    decided = approvals.decide(memory.store, asked[0]["id"], True)
    assert decided["state"] == "allowed", decided
    assert len(facts(home)) == 7
    # the allowed call is the app's change, with how it came, not the person's
    assert [(r["actor"], r["via"] is not None) for r in log(home)] == [
        ("mcp:Cursor", True), ("mcp:Cursor", True)]


def test_retyping_existing_nodes_counts_as_writing(shared):
    _home, memory = shared(share_write_rows=20)
    people = triplets(*[("User", "knows", f"person {n}") for n in range(12)])
    assert ToolExecutor(memory.store).execute("memory_commit", people)["success"]
    # the same facts again, each naming its person a criminal: 12 reinforced facts
    # (within 20) and 12 retyped nodes, nothing new
    retype = {"triplets": [{"subject": "User", "relation": "knows",
                            "object": f"person {n}", "object_type": "Criminal"}
                           for n in range(12)]}
    refused = session(memory, "Prankster", [("memory_commit", retype)])[0]
    assert refused.is_error, text(refused)
    typed = memory.store.query("SELECT count(*) AS n FROM nodes WHERE type = 'Criminal'")
    assert typed[0]["n"] == 0  # rolled back whole


def test_the_hour_bounds_all_apps_together_and_an_app_cannot_bury_the_person(shared):
    _home, memory = shared(share_write_rows=5)
    # each session may write 5 rows, all apps 15 an hour; a new fact about new things
    # is 3 rows: five sessions use the hour up
    for n, name in enumerate(["A", "B", "C", "D", "E"]):
        outcome = session(memory, name, [("memory_commit", triplets(
            (f"thing {n}", "is", f"colour {n}")))])[0]
        assert not outcome.is_error, text(outcome)
    refusals = session(memory, "F", [("memory_commit", pets(10 * n, 1)) for n in range(5)])
    assert all(r.is_error for r in refusals)
    assert "5 of 5 rows left in this session, 0 of 15 this hour" in text(refusals[0])
    assert "request 3" in text(refusals[2]) and "3 of your requests already wait" in \
        text(refusals[3])
    assert approvals.waiting_from(memory.store, "mcp:F") == approvals.PENDING_PER_APP


def test_an_app_cannot_pose_as_the_person_or_the_assistant():
    for name in ("user", "User", "model", "You", "助手", " assistant ", "“user”"):
        actor = client_actor(name)
        assert actor.startswith("mcp:unnamed app"), (name, actor)
    assert client_actor("Cursor") == "mcp:Cursor"
    assert client_actor("Claude\nDesktop\x00") == "mcp:ClaudeDesktop"


def test_stdio_records_the_program_that_started_the_server(tmp_path):
    home = share(tmp_path / "home")

    async def run() -> str:
        async with Client(stdio(home), client_info=types.Implementation(
                name="model", version="1")) as client:
            return text(await client.call_tool("memory_commit", triplets(("User", "likes",
                                                                           "tea"))))

    assert "1 new" in anyio.run(run)
    [row] = log(home)
    assert row["actor"] == "mcp:unnamed app (says “model”)"
    # the server's parent is this test process (the SDK's client starts it)
    assert row["via"].startswith("stdio, started by ") and f"pid {os.getpid()}" in row["via"]
    assert Path(sys.executable).name in row["via"]


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="no socket tables to read")
def test_http_names_the_local_program_on_the_other_end():
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    client = socket.create_connection(server.getsockname())
    try:
        via = http_via(client.getsockname(), server.getsockname()[1])
    finally:
        client.close()
        server.close()
    assert via == f"HTTP from {command_line(os.getpid())} (pid {os.getpid()})" or \
        via.startswith("HTTP from 127.0.0.1:")  # a system that hides our own socket


def test_the_window_is_told_of_an_apps_request_and_of_the_hours_activity(tmp_path,
                                                                         headless):
    home = share(tmp_path / "home", share_write_rows=4)
    server, _client = headless()
    dispatcher = server.dispatcher
    memory = SharedMemory(home)
    heard: list[tuple[str, Any]] = []
    try:
        ask(dispatcher, PacketType.GET_STATUS, events=heard)
        session(memory, "Cursor", [("memory_commit", triplets(("User", "likes", "tea"))),
                                   ("memory_commit", pets(0, 2))])
        dispatcher.backend.notice_outside_changes()
        requests = [data for event, data in heard if event == "approval_requested"]
        assert [(r["actor"], r["reason"]) for r in requests] == [("mcp:Cursor", "writes")]
        activity = ask(dispatcher, PacketType.APPS_ACTIVITY).data
        assert (activity["written"], activity["write_limit"]) == (3, 12)
        assert [(a["name"], a["written"]) for a in activity["apps"]] == [("Cursor", 3)]
        assert activity["apps"][0]["via"].startswith("stdio")
    finally:
        memory.close()


def _facts_to_remove(home: Path, count: int) -> None:
    store = GraphStore(home / "graph_memory.db")
    try:
        assert ToolExecutor(store).execute("memory_commit", pets(0, count))["success"]
    finally:
        store.close()


PURGE = ("memory_purge", {"criteria": {"subject": "User", "relation_type": "has a pet"},
                          "confirm": True})


def test_rotating_names_over_one_token_cannot_flood_the_approvals(http_server):
    """One HTTP token, a new connection and a new name for every call (some posing as
    TrulyMEM or a well-known app): the requests kept are bounded by the token."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    from tests.test_share_mcp import TOKEN

    url, home = http_server
    _facts_to_remove(home, 40)
    names = ["Claude Desktop", "TrulyMEM (you)", "Cursor", "truly-mem"] + \
        [f"app {n}" for n in range(16)]

    async def flood() -> list[types.CallToolResult]:
        answers = []
        for name in names:
            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as \
                    http, Client(streamable_http_client(url, http_client=http),
                                 client_info=types.Implementation(name=name,
                                                                  version="1")) as client:
                answers.append(await client.call_tool(*PURGE))
        return answers

    answers = anyio.run(flood)
    assert all(a.is_error for a in answers)
    assert "requests from apps using the sharing token already wait" in text(answers[-1]) \
        or "requests from this connection already wait" in text(answers[-1])
    store = GraphStore(home / "graph_memory.db")
    try:
        waiting = approvals.pending(store)
        assert 0 < len(waiting) <= approvals.PENDING_PER_TOKEN
        assert len(facts(home)) == 40  # nothing was removed
        actors = [a["actor"] for a in waiting]
        assert "mcp:unnamed app (says “TrulyMEM (you)”)" in actors
        assert all(a["via"].startswith("HTTP from ") for a in waiting)
    finally:
        store.close()


def test_waiting_requests_are_bounded_per_connection_and_for_all_apps(shared):
    home, memory = shared()
    _facts_to_remove(home, 40)
    # one program, many names: its connection's bound
    for n in range(6):
        memory.call(*PURGE, f"name {n}", f"session {n}", via="stdio, started by x (pid 7)")
    assert len(approvals.pending(memory.store)) == approvals.PENDING_PER_CONNECTION
    # many programs: all apps together
    for n in range(12):
        refused = memory.call(*PURGE, f"other {n}", f"other session {n}",
                              via=f"stdio, started by y (pid {100 + n})")
        assert not refused["success"]
    assert len(approvals.pending(memory.store)) == approvals.PENDING_FROM_APPS
    assert "requests from apps already wait" in refused["error"]


def test_a_name_cannot_claim_to_be_trulymem():
    for name in ("TrulyMEM (you)", "Truly MEM", "TRULYMEM helper", "Your assistant",
                 "用户的助手"):
        assert client_actor(name).startswith("mcp:unnamed app (says"), name
    assert client_actor("Claude Desktop") == "mcp:Claude Desktop"


def test_a_name_in_look_alike_letters_is_read_as_it_looks():
    """Other scripts' look-alikes and full-width forms are folded before the check:
    a Cyrillic ѕ, a Greek Ε, full-width Latin."""
    for name in ("Uѕer", "ＵＳＥＲ", "TrulyMΕM", "Уоu", "ＡＳＳＩＳＴＡＮＴ", "ʏᴏᴜ"):
        assert client_actor(name).startswith("mcp:unnamed app (says"), name
    assert client_actor("Мой клиент") == "mcp:Мой клиент"  # Russian is not a claim
    assert client_actor("Cherry Studio") == "mcp:Cherry Studio"
