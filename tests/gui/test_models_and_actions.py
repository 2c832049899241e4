"""The list models under Qt's model tester, the command palette, the shortcut list and
shortcut overrides from the config."""

from __future__ import annotations

import json
import time

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication

from app.chat.model import ChatMessage, ChatModel, MessageRole
from app.dialogs.palette import CommandPalette
from app.dialogs.shortcuts import ShortcutList
from app.trace.model import TraceModel
from core.store import GraphStore
from core.store.history import History
from tests.gui.conftest import when_shown


def test_chat_model_passes_the_model_tester(qtmodeltester):
    model = ChatModel()
    model.reset([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"},
                 {"role": "system", "content": "hidden"}])
    qtmodeltester.check(model, force_py=True)
    row = model.append(ChatMessage("assistant", "", streaming=True))
    model.extend_text(row, "partial")
    assert model.rowCount() == 3 and model.messages[row].content == "partial"
    assert model.streaming_row() == row
    assert model.index(0).data() == "You: hi"


def test_trace_model_passes_the_model_tester_while_a_turn_grows(qtmodeltester):
    model = TraceModel()
    qtmodeltester.check(model, force_py=True)
    model.begin_turn("first message")
    model.call_started("memory_recall", '{"query_intent": "tea"}')
    model.call_finished({"name": "memory_recall", "arguments": {"query_intent": "tea"},
                         "result": "Recall 'tea': 1 matched\n[1] a -likes-> tea",
                         "duration_ms": 1.5})
    model.call_started("persona_update", "{}")
    model.call_rejected("persona_update", "Tool call rejected: limit reached")
    model.call_finished({"name": "persona_update", "arguments": {}, "result": "rejected",
                         "duration_ms": 0.1})
    model.set_usage({"total_tokens": 99})
    model.end_turn({"success": True, "round_trips": 2, "usage": {"total_tokens": 120}})
    turn = model.index(0, 0)
    assert model.rowCount(turn) == 2
    assert model.index(0, 0, turn).data() == "memory_recall"
    assert model.index(1, 0, turn).data() == "✕ persona_update"
    assert model.index(1, 2, turn).data().startswith("rejected: Tool call rejected")
    assert "1 call · 1 rejected · 2 round trips · 120 tokens" in turn.data()
    assert '"query_intent": "tea"' in model.index(0, 0, turn).data(Qt.ItemDataRole.UserRole + 1)


def test_the_palette_finds_an_action_by_words_and_runs_it(qtbot, open_window, home):
    window = open_window(home)
    palette = CommandPalette(window.registry, window)
    qtbot.addWidget(palette)
    qtbot.keyClicks(palette.query, "trace tool")
    assert "Tool trace" in palette.proxy.index(0, 0).data()  # the best match first
    qtbot.keyClick(palette.query, Qt.Key.Key_Return)
    assert palette.chosen is window.registry.actions["view.trace"]
    palette.chosen.trigger()
    assert window.trace_dock.isVisible()


def test_the_palette_is_a_fuzzy_popup_that_says_when_nothing_matches(qtbot, open_window,
                                                                     home):
    window = open_window(home)
    palette = CommandPalette(window.registry, window)
    qtbot.addWidget(palette)
    assert palette.windowFlags() & Qt.WindowType.Popup
    qtbot.keyClicks(palette.query, "tlim")
    assert "Tool limits" in palette.proxy.index(0, 0).data()
    palette.query.setText("zzzq")
    assert palette.proxy.rowCount() == 0 and palette.empty.isVisibleTo(palette)
    assert "No action matches “zzzq”" in palette.empty.text()


def test_the_shortcut_list_narrows_as_you_type(qtbot, open_window, home):
    window = open_window(home)
    listing = ShortcutList(window.registry, window)
    qtbot.addWidget(listing)
    everything = listing.table.model().rowCount()
    qtbot.keyClicks(listing.search, "ctrl+t")
    model = listing.table.model()
    assert 0 < model.rowCount() < everything
    assert "Tool trace" in {model.index(r, 0).data() for r in range(model.rowCount())}


def test_ctrl_k_opens_the_palette_and_enter_runs_the_choice(qtbot, open_window, home):
    window = open_window(home)
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    opened = []

    def choose(palette):
        qtbot.keyClicks(palette.query, "shortcuts")
        qtbot.keyClick(palette.query, Qt.Key.Key_Return)

    def close_list(listing):
        opened.append(listing)
        listing.close()

    when_shown(CommandPalette, choose)
    when_shown(ShortcutList, close_list)
    # Both dialogs are modal: the key press returns once the chosen action's list closed.
    qtbot.keyClick(window.pane.input, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: bool(opened))
    assert isinstance(opened[0], ShortcutList)


def test_the_shortcut_list_shows_every_action(qtbot, open_window, home):
    window = open_window(home)
    listing = ShortcutList(window.registry, window)
    qtbot.addWidget(listing)
    model = listing.table.model()
    rows = {model.index(r, 0).data(): model.index(r, 1).data() for r in range(model.rowCount())}
    assert len(rows) == len(window.registry.actions)
    assert rows["Tool trace"] == "Ctrl+T" and rows["Command palette"] == "Ctrl+K"
    assert rows["Memory graph"] == "Ctrl+G" and rows["Keyboard shortcuts"] == "F1"


def test_shortcut_overrides_come_from_the_config_and_bad_ones_are_reported(
        qtbot, open_window, home):
    config = json.loads((home / "config.json").read_text())
    config["shortcuts"] = {"view.trace": "Ctrl+Shift+T", "view.graph": "Ctrl+Shift+T",
                           "no.such": "F9"}
    (home / "config.json").write_text(json.dumps(config))
    window = open_window(home)
    assert window.registry.shortcut_text("view.trace") == "Ctrl+Shift+T"
    assert window.registry.shortcut_text("view.graph") == "Ctrl+G"  # clash refused
    assert any("already used" in p for p in window.registry.problems)
    assert any("no.such" in p for p in window.registry.problems)


@pytest.mark.slow
def test_two_thousand_messages_load_and_scroll(qtbot, open_window, home):
    store = GraphStore(home / "graph_memory.db")
    history = History(store)
    started = time.time() - 2000 * 60
    for i in range(1000):
        history.append("user", f"Question {i}: what about **item {i}**?",
                       created_at=started + i * 120)
        history.append("assistant", f"Answer {i}:\n\n- point one\n- point two\n\n`code {i}`",
                       created_at=started + i * 120 + 30)
    store.close()
    window = open_window(home)
    chat, view = window.chat, window.pane.view
    assert chat.rowCount() + len(chat.older) == 2000
    bar = view.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum(), timeout=10000)
    center = view.viewport().rect().center()
    assert view.indexAt(center).data(MessageRole).content.startswith(
        ("Answer 99", "Question 99"))
    while chat.older:  # scrolling to the top brings older pages in, keeping the place
        shown = chat.rowCount()
        bar.setValue(0)
        qtbot.waitUntil(lambda shown=shown: chat.rowCount() > shown)
        under_eye = view.indexAt(center).data(MessageRole)
        assert under_eye is not None and under_eye is not chat.messages[0]
    assert chat.rowCount() == 2000
    bar.setValue(0)
    assert view.indexAt(view.viewport().rect().topLeft() + QPoint(30, 30)).row() == 0
