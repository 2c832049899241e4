"""The window end to end, offscreen, against the loopback OpenAI-compatible server."""

from __future__ import annotations

import dataclasses

import pytest
from PySide6.QtCore import QElapsedTimer, Qt, QTimer
from PySide6.QtWidgets import QApplication, QLineEdit

from app.chat.model import MessageRole
from app.dialogs.limits import LimitsDialog
from app.dialogs.local_start import LocalStartDialog
from app.dialogs.settings import SettingsDialog
from core.config import Config, load_config, save_config
from core.protocol.packets import PacketType
from core.recall import TURN_BUDGET
from core.store import GraphStore
from core.tools.limits import DEFAULT_LIMITS
from tests.gui.conftest import wait_turn, when_shown

COMMIT = {"name": "memory_commit", "arguments": {"triplets": [
    {"subject": "user", "relation": "likes", "object": "green tea"}]}}


def type_and_send(qtbot, window, text):
    box = window.pane.input
    box.setFocus()
    qtbot.keyClicks(box, text)
    qtbot.keyClick(box, Qt.Key.Key_Return)


def edges_in(folder):
    store = GraphStore(folder / "graph_memory.db")
    try:
        return [(r["relation"], r["obj"]) for r in store.query(
            "SELECT e.relation, t.name AS obj FROM edges e JOIN nodes t ON t.id = e.target_id")]
    finally:
        store.close()


def test_a_message_streams_in_lists_its_tool_calls_and_writes_memory(qtbot, open_window,
                                                                     home, llm):
    llm.play({"tool_calls": [COMMIT]},
             # 14 pieces over about 0.4 s: several repaints (every 16 ms) while it streams,
             # however busy the machine; at 10 ms apart a loaded machine saw three
             {"text": "Noted: you like **green tea**. " * 3, "chunk_delay": 0.03})
    window = open_window(home)
    seen = []
    window.chat.dataChanged.connect(
        lambda index, *_: seen.append(index.data(MessageRole).content))
    type_and_send(qtbot, window, "I like green tea")
    wait_turn(qtbot, window)

    assert window.pane.input.toPlainText() == ""
    user, reply = window.chat.messages
    assert user.content == "I like green tea"
    assert reply.content.startswith("Noted: you like **green tea**.")
    assert not reply.streaming and reply.error is None
    partial = [text for text in seen if text and text != reply.content]
    assert len(partial) > 3  # the reply grew in place, delta by delta
    turn = window.trace.turns[-1]
    assert [c.name for c in turn.calls] == ["memory_commit"]
    assert "Committed: 1 new" in turn.calls[0].result
    assert turn.round_trips == 2 and turn.usage["total_tokens"] == 240
    assert "Tokens: last 240" in window.status.tokens_label.text()
    qtbot.waitUntil(lambda: "1 fact" in window.status.memory_label.text())
    window.close()
    assert ("likes", "green tea") in edges_in(home)


def test_history_and_trace_come_back_after_a_restart(qtbot, open_window, home, llm):
    llm.play({"tool_calls": [COMMIT]}, {"text": "Noted."})
    window = open_window(home)
    type_and_send(qtbot, window, "I like green tea")
    wait_turn(qtbot, window)
    window.close()

    again = open_window(home)
    assert [m.content for m in again.chat.messages] == ["I like green tea", "Noted."]
    assert [c.name for c in again.trace.turns[-1].calls] == ["memory_commit"]
    # the turn's record says what the memory showed the model, and the budget it was cut to
    tree = again.trace_dock.tree
    tree.setCurrentIndex(tree.model().index(0, 0))
    shown = again.trace_dock.detail.toPlainText()
    assert f"Recalled: 0 memories, 0 earlier messages: 0 of {TURN_BUDGET} tokens" in shown
    assert "recall." not in shown.split("Usage:")[1]
    box = again.pane.input
    box.setFocus()
    qtbot.keyClick(box, Qt.Key.Key_Up)  # Up in an empty box brings back the last message
    assert box.toPlainText() == "I like green tea"


def test_shift_enter_breaks_the_line_and_enter_during_a_turn_does_not_send(qtbot, open_window,
                                                                            home, llm):
    llm.play({"text": "slow " * 60, "chunk_delay": 0.02}, {"text": "second"})
    window = open_window(home)
    box = window.pane.input
    box.setFocus()
    qtbot.keyClicks(box, "line one")
    qtbot.keyClick(box, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(box, "line two")
    assert box.toPlainText() == "line one\nline two"
    qtbot.keyClick(box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.turns.running)
    qtbot.keyClicks(box, "queued thought")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    assert box.toPlainText() == "queued thought"  # kept, not sent over the running turn
    assert len(window.chat.messages) == 2
    wait_turn(qtbot, window)
    assert len(llm.requests) == 1


def test_escape_stops_a_slow_turn(qtbot, open_window, home, llm):
    llm.play({"text": "word " * 400, "chunk_delay": 0.05}, {"text": "next one works"})
    window = open_window(home)
    type_and_send(qtbot, window, "tell me a long story")
    qtbot.waitUntil(lambda: len(window.chat.messages[-1].content) > 10)
    qtbot.keyClick(window.pane.input, Qt.Key.Key_Escape)
    wait_turn(qtbot, window, timeout=5000)
    stopped = window.chat.messages[-1]
    assert stopped.partial and not stopped.streaming and stopped.error is None
    assert 10 < len(stopped.content) < len("word " * 400)
    assert window.status.state_label.text() == "Stopped"
    type_and_send(qtbot, window, "and now?")
    wait_turn(qtbot, window)
    assert window.chat.messages[-1].content == "next one works"


def test_a_dead_endpoint_shows_an_inline_error_and_retry_works(qtbot, open_window, home,
                                                               llm):
    window = open_window(home)
    answers = []
    window.host.send(PacketType.SET_CONFIG, {"base_url": "http://127.0.0.1:9/v1"},
                     answers.append)
    qtbot.waitUntil(lambda: bool(answers))
    type_and_send(qtbot, window, "hello?")
    wait_turn(qtbot, window, timeout=30000)
    failed = window.chat.messages[-1]
    assert "cannot reach the API at http://127.0.0.1:9/v1" in failed.error
    assert window.registry.actions["chat.retry"].isEnabled()
    assert window.pane.view.delegate.retry_message is window.chat.messages[-1]

    window.host.send(PacketType.SET_CONFIG, {"base_url": llm.base_url}, answers.append)
    qtbot.waitUntil(lambda: len(answers) == 2)
    llm.play({"text": "I am here."})
    window.registry.actions["chat.retry"].trigger()
    wait_turn(qtbot, window)
    assert window.chat.messages[-2].content == "hello?"
    assert window.chat.messages[-1].content == "I am here."
    assert not window.registry.actions["chat.retry"].isEnabled()


def test_first_run_without_a_key_says_what_is_missing(qtbot, open_window, tmp_path, llm):
    folder = tmp_path / "fresh"
    window = open_window(folder)
    assert window.pane.notice.isVisible()
    assert "No model to chat with yet" in window.pane.notice.text.text()
    assert window.pane.notice.button.text() == "Chat on this computer…"  # no key needed
    assert window.pane.notice.other.text() == "Use an API key…"
    opened = []
    when_shown(LocalStartDialog, lambda dialog: (opened.append(dialog.models.isVisible()),
                                                 dialog.reject()))
    window.pane.notice.button.click()
    qtbot.waitUntil(lambda: bool(opened))
    assert opened == [True]
    type_and_send(qtbot, window, "hello")
    wait_turn(qtbot, window)
    assert window.chat.messages[-1].error == (
        "No model yet: choose one in the notice above (on this computer, or an API key; "
        "Settings: Ctrl+,); this message can be sent then")
    assert llm.requests == []
    assert window.status.state_label.text() != "Waiting for the model…"
    window.refresh_memory_counts()  # what needs no key still works
    qtbot.waitUntil(lambda: "Memory: 0 facts" in window.status.memory_label.text())


def _set_up_a_model(qtbot, window, llm) -> None:
    """What Settings › OK does with a key and an endpoint."""
    answers = []
    window.host.send(PacketType.SET_CONFIG, {"api_key": "sk-later-000000",
                                             "base_url": llm.base_url, "model": "m"},
                     answers.append)
    qtbot.waitUntil(lambda: bool(answers))
    assert answers[0]["success"], answers
    window.setup.changed.emit()


def _conversations(folder) -> list[tuple[str, list[str]]]:
    store = GraphStore(folder / "graph_memory.db")
    try:
        return [(c["title"], [m["content"] for m in store.query(
            "SELECT content FROM messages WHERE conversation_id = ? AND deleted_at IS NULL"
            " ORDER BY id", (c["id"],))])
            for c in store.query("SELECT id, title FROM conversations WHERE deleted_at IS"
                                 " NULL ORDER BY id")]
    finally:
        store.close()


def test_what_was_written_before_a_model_is_sent_once_one_is_set_up(qtbot, open_window,
                                                                    tmp_path, llm):
    folder = tmp_path / "fresh"
    window = open_window(folder)
    for said in ("hello there", "what can you do?"):
        type_and_send(qtbot, window, said)
        wait_turn(qtbot, window)
    assert _conversations(folder)[-1][0] == "New chat"  # not named by a message nobody read
    llm.play({"text": "Hello!"}, {"text": "I remember what matters to you."})
    _set_up_a_model(qtbot, window, llm)
    notice = window.pane.notice
    qtbot.waitUntil(lambda: notice.isVisible() and notice.button.text() == "Send now")
    assert "hello there" in notice.text.text() and "1 more" in notice.text.text()
    notice.button.click()
    qtbot.waitUntil(lambda: len(llm.requests) >= 2 and not window.turns.running
                    and not window.turns.queued, timeout=20000)
    wait_turn(qtbot, window)
    assert [(m.role, m.content, m.error) for m in window.chat.messages] == [
        ("user", "hello there", None), ("assistant", "Hello!", None),
        ("user", "what can you do?", None),
        ("assistant", "I remember what matters to you.", None)]
    assert _conversations(folder)[-1] == ("hello there", [
        "hello there", "Hello!", "what can you do?", "I remember what matters to you."])
    assert not notice.isVisible()


def test_what_was_written_before_a_model_can_be_put_away(qtbot, open_window, tmp_path, llm):
    folder = tmp_path / "fresh"
    window = open_window(folder)
    type_and_send(qtbot, window, "hello there")
    wait_turn(qtbot, window)
    window.close()
    window = open_window(folder)  # a later start still knows it was never sent
    assert window.turns.unsent() and window.turns.unsent()[0][1] == "hello there"
    _set_up_a_model(qtbot, window, llm)
    notice = window.pane.notice
    qtbot.waitUntil(lambda: notice.isVisible() and notice.other.text() == "Put away")
    notice.other.click()
    qtbot.waitUntil(lambda: window.chat.messages == [] and not notice.isVisible())
    assert llm.requests == []
    assert _conversations(folder)[-1] == ("New chat", [])


def test_limits_dialog_cancel_changes_nothing_and_ok_saves(qtbot, open_window, home):
    window = open_window(home)
    dialog = LimitsDialog(window.host, dict(DEFAULT_LIMITS), window)
    qtbot.addWidget(dialog)
    dialog.boxes["persona_update_max"].setValue(5)
    dialog.reject()
    assert read_config(home).get("tool_limits", DEFAULT_LIMITS)["persona_update_max"] == 2

    dialog = LimitsDialog(window.host, dict(DEFAULT_LIMITS), window)
    qtbot.addWidget(dialog)
    dialog.boxes["persona_update_max"].setValue(5)
    dialog.boxes["memory_query_max"].setValue(0)  # the box refuses values below 1
    assert dialog.boxes["memory_query_max"].value() == 1
    with qtbot.waitSignal(dialog.accepted, timeout=5000):
        dialog.save()
    assert read_config(home)["tool_limits"]["persona_update_max"] == 5
    assert read_config(home)["tool_limits"]["memory_query_max"] == 1

    dialog = LimitsDialog(window.host, read_config(home)["tool_limits"], window)
    qtbot.addWidget(dialog)
    dialog.restore_defaults()
    assert dialog.values() == DEFAULT_LIMITS


def read_config(folder):
    """The settings as the app reads them back (the file keeps only non-defaults)."""
    config, warning = load_config(folder / "config.json")
    assert warning is None
    return dataclasses.asdict(config)


def test_settings_dialog_cancel_reverts_ok_saves_and_tests_the_connection(qtbot, open_window,
                                                                          home, llm):
    window = open_window(home)
    config = dict(window.config)
    dialog = SettingsDialog(window.host, config, window)
    qtbot.addWidget(dialog)
    assert dialog.api_key.echoMode() == QLineEdit.EchoMode.Password
    dialog.show_key.click()
    assert dialog.api_key.echoMode() == QLineEdit.EchoMode.Normal
    dialog.model.setText("other-model")
    dialog.reject()
    assert read_config(home)["model"] == "test-model"

    dialog = SettingsDialog(window.host, config, window)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    page = dialog.tabs.widget(0)
    before = dialog.height()
    dialog.test_connection()
    qtbot.waitUntil(lambda: "is available" in dialog.result.text())
    # a long answer grows the dialog where the screen has room, instead of a scroll bar
    dialog.result.setText("Connected in 3 ms. The server does not list the model demo; it "
                          "lists deepseek-chat, test-model, and many others besides. " * 2)
    dialog.show_result()
    room = dialog.screen().availableGeometry().height() - 60
    assert not page.verticalScrollBar().isVisible() or dialog.height() >= room, \
        (before, dialog.height(), room)
    dialog.preset.setCurrentText("Ollama (local)")
    assert dialog.base_url.text() == "http://localhost:11434/v1"
    assert dialog.first_token_timeout.value() == 600 and dialog.turn_timeout.value() == 1800
    dialog.preset.setCurrentText("DeepSeek")  # back to a cloud service: its timeouts
    assert dialog.first_token_timeout.value() == 120 and dialog.turn_timeout.value() == 300
    dialog.preset.setCurrentText("Ollama (local)")
    dialog.base_url.setText(llm.base_url)
    dialog.model.setText("deepseek-chat")
    dialog.round_trips.setValue(7)
    assert dialog.trash_days.value() == 30
    dialog.trash_days.setValue(45)
    with qtbot.waitSignal(dialog.accepted, timeout=5000):
        dialog.save()
    saved = read_config(home)
    assert saved["model"] == "deepseek-chat" and saved["max_round_trips"] == 7
    assert saved["trash_days"] == 45 and saved["first_token_timeout"] == 600
    assert saved["api_key"] == "sk-gui-test-000000"

    dialog = SettingsDialog(window.host, config, window)
    qtbot.addWidget(dialog)
    dialog.base_url.setText("ftp://nowhere")
    dialog.save()
    qtbot.waitUntil(lambda: "Not saved" in dialog.result.text())
    assert read_config(home)["base_url"] == llm.base_url


def close_dialogs_while(callback):
    """Modal dialogs opened by an action are closed as soon as they appear."""
    def close():
        widget = QApplication.activeModalWidget()
        if widget is not None:
            widget.close()
    timer = QTimer()
    timer.timeout.connect(close)
    timer.start(20)
    try:
        callback()
    finally:
        timer.stop()


def test_every_registered_shortcut_triggers_its_action(qtbot, open_window, home):
    window = open_window(home)
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    # An action's answer can open a box after its key was handled (Undo this turn on an
    # empty memory says there is nothing to undo): closed whenever it comes, or its
    # nested event loop would hold the test.
    closer = QTimer()
    closer.timeout.connect(lambda: QApplication.activeModalWidget() is not None
                           and QApplication.activeModalWidget().close())
    closer.start(20)
    try:
        _press_every_shortcut(qtbot, window)
    finally:
        closer.stop()
    assert window.trace_dock.isVisible()  # Ctrl+T toggled the dock once


def _close_popups() -> None:
    while QApplication.activePopupWidget() is not None:
        QApplication.activePopupWidget().close()


def _press_every_shortcut(qtbot, window) -> None:
    for spec, action in window.registry.ordered():
        if not spec.shortcut or spec.name == "app.quit":
            continue
        action.setEnabled(True)
        fired = []
        action.triggered.connect(lambda *_args, out=fired: out.append(True))
        sequence = action.shortcut()
        combo = sequence[0]
        # The earlier keys' answers are in first: one that comes late opens its dialog or
        # menu (Settings, the model menu) in the middle of a later key, and on a loaded
        # machine that took the window's activation for good. Then the window is made
        # active again until it is.
        qtbot.waitUntil(lambda: not window.host.busy, timeout=30000)
        qtbot.waitUntil(lambda: (_close_popups(), window.activateWindow(),
                                 QApplication.activeModalWidget() is None
                                 and QApplication.activeWindow() is window)[2],
                        timeout=15000)
        scope = next((w for w in action.associatedObjects() if w is not window), None)
        if action.shortcutContext() == Qt.ShortcutContext.WidgetWithChildrenShortcut:
            # a Memory key works where its command applies, never in the chat box
            window.tabs.setCurrentWidget(window.browser)
            window.browser.pages.setCurrentWidget(window.browser.browse_page)
            target = window.browser.view if scope.focusPolicy() == Qt.FocusPolicy.NoFocus \
                else scope
            # (an answer to an earlier key may still move the focus, or open a popup that
            # takes the window's activation, the search's suggestions after Ctrl+F: set it
            # until it stays)
            qtbot.waitUntil(lambda target=target: not window.host.busy and (
                _close_popups(), window.activateWindow(), target.setFocus(),
                target.hasFocus())[3])
            action.setEnabled(True)  # it waits for a chosen node; the key is what is tested
        else:
            # not the message box: there Ctrl+Z is the text's own undo, as it should be
            window.tabs.setCurrentWidget(window.pane)
            window.tabs.tabBar().setFocus()
        close_dialogs_while(lambda combo=combo: qtbot.keyClick(
            QApplication.focusWidget() or window, combo.key(), combo.keyboardModifiers()))
        assert fired, f"{spec.name} ({spec.shortcut}) did not trigger"
        qtbot.waitUntil(lambda: QApplication.activeModalWidget() is None)


def test_the_trace_dock_filter_keeps_matching_calls_with_their_turn(qtbot, open_window, home,
                                                                    llm):
    recall = {"name": "memory_recall", "arguments": {"query_intent": "tea"}}
    llm.play({"tool_calls": [COMMIT, recall]}, {"text": "ok"})
    window = open_window(home)
    type_and_send(qtbot, window, "remember tea")
    wait_turn(qtbot, window)
    dock = window.trace_dock
    dock.filter.setText("memory_recall")
    turn = dock.proxy.index(dock.proxy.rowCount() - 1, 0)
    assert dock.proxy.rowCount(turn) == 1
    assert dock.proxy.index(0, 0, turn).data() == "memory_recall"
    dock.filter.clear()
    assert dock.proxy.rowCount(dock.proxy.index(dock.proxy.rowCount() - 1, 0)) == 2


def test_rejected_calls_are_listed_with_their_reason(qtbot, open_window, home, llm):
    update = {"name": "persona_update",
              "arguments": {"attributes": [{"attribute": "tone", "value": "warm"}]}}
    llm.play({"tool_calls": [update, update]}, {"text": "ok"})
    window = open_window(home)
    type_and_send(qtbot, window, "be warm")
    wait_turn(qtbot, window)
    calls = window.trace.turns[-1].calls
    assert [c.rejected is None for c in calls] == [True, False]
    assert calls[1].rejected.startswith("Not run: this exact persona_update call")
    assert "1 rejected" in window.trace.turns[-1].summary()


def test_closing_the_window_during_a_turn_stops_the_thread(qtbot, open_window, home, llm):
    llm.play({"text": "never ending " * 500, "chunk_delay": 0.05})
    window = open_window(home)
    type_and_send(qtbot, window, "go on")
    qtbot.waitUntil(lambda: len(window.chat.messages[-1].content) > 5)
    timer = QElapsedTimer()
    timer.start()
    window.close()
    assert not window.host.thread.isRunning()
    assert timer.elapsed() < 5000


@pytest.mark.slow
def test_the_event_loop_keeps_running_during_a_slow_turn(qtbot, open_window, home, llm):
    """Behaviour, not speed: the GUI thread never waits on the backend. A 5 ms probe
    records the longest gap; bench/gui_bench.py reports the figure itself."""
    llm.play({"tool_calls": [COMMIT]}, {"text": "tok " * 100, "chunk_delay": 0.02})
    window = open_window(home)
    gaps = []
    clock = QElapsedTimer()
    clock.start()
    last = [clock.elapsed()]

    def probe():
        now = clock.elapsed()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.timeout.connect(probe)
    timer.start(5)
    type_and_send(qtbot, window, "stream slowly")
    wait_turn(qtbot, window)
    timer.stop()
    assert len(gaps) > 100
    assert max(gaps) < 1000  # a blocked GUI thread would stall for the whole turn (2+ s)


def test_window_size_and_dock_state_are_remembered(qtbot, open_window, home):
    window = open_window(home)
    window.resize(700, 500)
    window.trace_action.setChecked(True)
    assert window.trace_dock.isVisible()
    window.close()
    again = open_window(home)
    assert (again.size().width(), again.size().height()) == (700, 500)
    assert again.trace_dock.isVisible() and again.trace_action.isChecked()


def test_reasoning_streams_into_a_collapsed_block_that_opens(qtbot, open_window, home, llm):
    llm.play({"reasoning": "First I think about tea.", "text": "Tea it is."})
    window = open_window(home)
    type_and_send(qtbot, window, "tea?")
    wait_turn(qtbot, window)
    reply = window.chat.messages[-1]
    assert reply.reasoning == "First I think about tea." and not reply.reasoning_open
    view = window.pane.view
    view.setCurrentIndex(window.chat.index(len(window.chat.messages) - 1))
    qtbot.keyClick(view, Qt.Key.Key_Space)
    assert reply.reasoning_open
    window.close()
    again = open_window(home)
    assert again.chat.messages[-1].reasoning == "First I think about tea."


def test_a_packet_sent_while_the_window_is_built_is_answered_once_the_backend_runs(
        qtbot, home):
    """The Memory tab asks for its list while the window is built, before the backend
    thread starts: it waits for it instead of failing ("the backend is not running")."""
    from app.backend_host import BackendHost

    host = BackendHost(home)
    got = []
    host.send(PacketType.GET_STATUS, None, got.append)
    assert got == []
    host.start()
    qtbot.waitUntil(lambda: bool(got), timeout=10000)
    assert got[0]["success"]
    host.shutdown()
    host.send(PacketType.GET_STATUS, None, got.append)
    assert got[-1]["error"] == "the backend is not running"


def test_a_memory_is_named_in_the_title_bar_and_the_tray(qtbot, open_window, tmp_path, llm):
    """Two memories (two --home folders) open at once are told apart: by the folder's
    name, or the name the person gives one in Settings."""
    folder = tmp_path / "work"
    folder.mkdir()
    save_config(folder / "config.json", Config(api_key="sk-gui-test-000000",
                                               base_url=llm.base_url, model="test-model"))
    window = open_window(folder)
    qtbot.waitUntil(lambda: window.windowTitle() == "TrulyMEM — work")
    dialog = SettingsDialog(window.host, {**window.config}, window)
    assert dialog.memory_name.placeholderText() == "work"
    dialog.memory_name.setText("  Family   photos ")
    with qtbot.waitSignal(dialog.accepted, timeout=5000):
        dialog.save()
    window.setup.changed.emit()
    qtbot.waitUntil(lambda: window.windowTitle() == "TrulyMEM — Family photos")
    assert read_config(folder)["memory_name"] == "Family photos"


def test_deepseek_thinking_is_offered_only_for_deepseek(qtbot, open_window, home):
    window = open_window(home)
    dialog = SettingsDialog(window.host, {**window.config}, window)
    dialog.show()
    for url, shown in (("https://api.deepseek.com", True), ("http://127.0.0.1:8080/v1", False),
                       ("https://api.openai.com/v1", False),
                       ("https://api.deepseek.com.evil.example/v1", False)):
        dialog.base_url.setText(url)
        assert dialog.thinking.isVisible() == shown, url
    dialog.reject()


def test_the_model_on_this_computer_says_what_it_needs_and_that_nothing_leaves(
        qtbot, open_window, home, tmp_path, monkeypatch):
    monkeypatch.setenv("TRULYMEM_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("TRULYMEM_RUNTIME_DIR", str(tmp_path / "no-runtime"))
    window = open_window(home)
    dialog = SettingsDialog(window.host, {**window.config}, window)
    dialog.show()
    assert not dialog.local_note.isVisible()
    dialog.preset.setCurrentIndex(dialog.preset.findData(
        "On this computer (no key; nothing leaves it)"))
    assert dialog.base_url.text() == "local"
    assert dialog.model.text() == "qwen2.5-coder-1.5b-instruct"
    assert dialog.local_note.isVisible() and dialog.local_models.isVisible()
    assert "nothing you say leaves this computer" in dialog.local_note.text()
    qtbot.waitUntil(lambda: "qwen2.5-coder-1.5b-instruct" in dialog.local_models.rows)
    row = dialog.local_models.rows["qwen2.5-coder-1.5b-instruct"]
    assert "Not downloaded" in row.state.text() and row.action.text() == "Download (1.12\u00a0GB)"
    runtime = dialog.local_models.runtime  # not built in this folder: said, with a button
    assert runtime.isVisible() and "packaging/build_runtime.py" in runtime.words.text()
    assert not dialog.thinking.isVisible()
    assert not dialog.api_key.isVisible()  # no key for it
    dialog.preset.setCurrentIndex(dialog.preset.findData("DeepSeek"))
    assert dialog.api_key.isVisible() and not dialog.local_note.isVisible()
    dialog.reject()
