"""Recall by meaning as the window shows it: the indexer's progress in the status bar and
the switch in the settings."""

from __future__ import annotations

import json

import pytest

from app.dialogs.settings import SettingsDialog
from core.meaning import engine as engines
from core.protocol.packets import PacketType
from core.store import GraphStore
from core.tools import ToolExecutor

pytestmark = [pytest.mark.meaning,
              pytest.mark.skipif(engines.problem() is not None,
                                 reason="no embedding engine on this platform")]


def test_the_status_bar_counts_down_the_indexing_and_settings_switch_it_off(
        qtbot, open_window, home):
    store = GraphStore(home / "graph_memory.db")
    result = ToolExecutor(store).execute("memory_commit", {"triplets": [
        {"subject": f"Friend {i}", "relation": "likes", "object": f"sport {i}"}
        for i in range(40)]})
    assert result["success"]
    store.close()

    busy = engines.engine("index")
    with busy._lock:  # the indexer cannot finish a batch until the test lets it
        window = open_window(home)
        label = window.status.meaning_label
        qtbot.waitUntil(lambda: label.isVisible() and "left" in label.text())
        assert label.text() == "Indexing: 40 left"
        assert "Recall works meanwhile" in label.toolTip()
    qtbot.waitUntil(lambda: not label.isVisible(), timeout=60_000)

    answers = []
    window.host.send(PacketType.GET_CONFIG, None, answers.append)
    qtbot.waitUntil(lambda: bool(answers))
    config = answers[0]["data"]
    assert config["meaning"]["state"] == "ready" and config["meaning"]["indexed"] == 40
    dialog = SettingsDialog(window.host, config, window)
    qtbot.addWidget(dialog)
    assert dialog.recall_by_meaning.isChecked() and dialog.recall_by_meaning.isEnabled()
    dialog.recall_by_meaning.setChecked(False)
    with qtbot.waitSignal(dialog.accepted, timeout=10_000):
        dialog.save()
    saved = json.loads((home / "config.json").read_text("utf-8"))
    assert saved["recall_by_meaning"] is False
    answers.clear()
    window.host.send(PacketType.GET_STATUS, None, answers.append)
    qtbot.waitUntil(lambda: bool(answers))
    assert answers[0]["data"]["meaning"] == {"state": "off"}


def test_a_platform_without_the_engine_says_so_in_the_settings(qtbot, open_window, home):
    window = open_window(home)
    config = {**window.config, "meaning": {"state": "unavailable", "problem": "no engine"}}
    dialog = SettingsDialog(window.host, config, window)
    qtbot.addWidget(dialog)
    assert not dialog.recall_by_meaning.isEnabled()
    assert dialog.meaning_note.text() == "Not available here: no engine."
