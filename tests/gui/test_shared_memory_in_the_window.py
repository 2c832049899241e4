"""The window and an MCP server on one data folder at once: both write, nothing is lost, the
window shows the other app's changes (status, review, trace) without being asked."""

from __future__ import annotations

import sqlite3
import sys
import threading
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from PySide6.QtCore import Qt

from core.config import Config, save_config
from core.protocol.packets import PacketType

ROOT = Path(__file__).resolve().parents[2]
EACH = 15  # changes made by each side


@pytest.mark.slow
def test_the_window_and_an_app_write_one_memory_at_once(qtbot, tmp_path, llm, open_window):
    home = tmp_path / "home"
    home.mkdir()
    save_config(home / "config.json", Config(
        api_key="sk-gui-test-000000", base_url=llm.base_url, model="test-model",
        share_memory=True, recall_by_meaning=False))
    window = open_window(home)
    outside: list[dict] = []
    window.host.progress.connect(
        lambda event, data: outside.append(data)
        if event == "memory_changed" and data["actor"].startswith("mcp:") else None)

    app_done = threading.Event()
    app_errors: list[str] = []

    def the_app() -> None:
        async def session() -> None:
            params = StdioServerParameters(
                command=sys.executable, cwd=str(ROOT),
                args=["-m", "app.main", "mcp", "--home", str(home)])
            async with Client(params, client_info=types.Implementation(
                    name="Claude Desktop", version="1")) as client:
                for n in range(EACH):
                    result = await client.call_tool("memory_commit", {"triplets": [
                        {"subject": "User", "relation": "read", "object": f"book {n}"}]})
                    if result.is_error:
                        app_errors.append(result.content[0].text)

        try:
            anyio.run(session)
        except Exception as error:  # reported by the assertion below
            app_errors.append(repr(error))
        finally:
            app_done.set()

    threading.Thread(target=the_app, daemon=True).start()
    answers: list[dict] = []
    for n in range(EACH):  # the person's own corrections, meanwhile
        window.host.send(PacketType.EXECUTE_TOOL, {
            "tool_name": "memory_commit", "arguments": {"triplets": [
                {"subject": "User", "relation": "visited", "object": f"city {n}"}]}},
            answers.append)
    qtbot.waitUntil(lambda: app_done.is_set() and len(answers) == EACH, timeout=60000)
    assert app_errors == []
    assert all(a["success"] for a in answers), answers
    # The window hears of each of the app's changes once, through the one change event.
    qtbot.waitUntil(lambda: len(outside) == EACH, timeout=10000)
    assert len({e["change_id"] for e in outside}) == EACH
    qtbot.waitUntil(lambda: window.status.review_label.text() == f"Review: {EACH}", timeout=10000)
    assert window.status.memory_label.text().startswith(f"Memory: {2 * EACH} facts")
    assert sum(1 for turn in window.trace.turns if "Claude Desktop" in turn.message) == EACH

    conn = sqlite3.connect(home / "graph_memory.db")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT count(*) FROM edges WHERE status = 'active'"
                            " AND category = 'general'").fetchone()[0] == 2 * EACH
        actors = dict(conn.execute("SELECT actor, count(*) FROM change_log GROUP BY actor"))
    finally:
        conn.close()
    assert actors == {"mcp:Claude Desktop": EACH, "user": EACH}


def test_an_apps_call_over_its_budget_waits_on_the_card_and_allow_runs_it(qtbot, tmp_path,
                                                                          llm, open_window):
    from core.share.server import SharedMemory

    home = tmp_path / "home"
    home.mkdir()
    save_config(home / "config.json", Config(
        api_key="sk-gui-test-000000", base_url=llm.base_url, model="test-model",
        share_memory=True, recall_by_meaning=False, share_write_rows=2))
    window = open_window(home)
    memory = SharedMemory(home)
    try:
        refused = memory.call("memory_commit", {"triplets": [
            {"subject": "User", "relation": "plays", "object": "cello"}]}, "Cursor", "s1",
            "stdio, started by /usr/bin/cursor (pid 42)")
    finally:
        memory.close()
    assert not refused["success"] and refused["approval_id"] == 1
    card = window.pane.approvals
    qtbot.waitUntil(card.isVisible, timeout=10000)
    assert card.title.text() == \
        "An app that calls itself “Cursor” wants to add or change 3 memories."
    assert "other apps may write" in card.note.text()
    assert "/usr/bin/cursor" in card.note.text()
    assert "added: User -plays-> cello" in card.rows.toPlainText()
    qtbot.mouseClick(card.allow, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not card.isVisible(), timeout=10000)
    qtbot.waitUntil(lambda: window.status.memory_label.text().startswith("Memory: 1 fact"),
                    timeout=10000)
    conn = sqlite3.connect(home / "graph_memory.db")
    try:
        assert conn.execute("SELECT actor, via FROM change_log").fetchall() == [
            ("mcp:Cursor", "stdio, started by /usr/bin/cursor (pid 42)")]
    finally:
        conn.close()
