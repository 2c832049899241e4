"""One window per memory: a second `trulymem` on the same data folder hands its wish to the
running window (show, toggle, `--ask TEXT`) and exits, without opening the store."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from app.desktop import summon
from app.desktop.single_instance import SingleInstance

ROOT = Path(__file__).resolve().parents[2]


def _sent_in_a_thread(home: Path, message: dict) -> list[bool]:
    """`send` blocks for the answer, which the window gives from its event loop."""
    answered: list[bool] = []
    threading.Thread(target=lambda: answered.append(summon.send(home, message)),
                     daemon=True).start()
    return answered


def test_ask_puts_the_text_in_the_running_window_and_keeps_a_draft(
        qtbot, home, open_window):
    window = open_window(home)
    instance = SingleInstance(home)
    assert instance.claim()
    try:
        instance.wished.connect(window.desktop.wished)
        window.pane.input.setPlainText("my draft")
        answered = _sent_in_a_thread(home, summon.wish("ask", "What did I say about 北京?"))
        qtbot.waitUntil(lambda: answered == [True], timeout=10000)
        assert window.pane.input.toPlainText() == "my draft\n\nWhat did I say about 北京?"
        assert window.tabs.currentWidget() is window.pane
    finally:
        instance.close()


def test_toggle_hides_the_window_in_front_and_brings_a_hidden_one_back(
        qtbot, home, open_window):
    window = open_window(home)
    desktop = window.desktop
    desktop._in_front = window.isVisible  # offscreen: no window is ever active
    desktop.wished(summon.wish("toggle"))
    assert not window.isVisible()
    desktop.wished(summon.wish("toggle"))
    assert window.isVisible()
    window.showMinimized()
    desktop.wished(summon.wish("show"))
    assert window.isVisible() and not window.isMinimized()


def test_hiding_and_showing_keeps_the_docks_and_their_sizes(qtbot, home, open_window):
    window = open_window(home)
    window.resize(1280, 850)
    window.trace_action.trigger()  # the tool trace, open beside the chat
    qtbot.waitUntil(window.trace_dock.isVisible)
    window.resizeDocks([window.trace_dock], [400], Qt.Orientation.Horizontal)
    qtbot.waitUntil(lambda: window.trace_dock.width() == 400)
    sidebar = window.conversations.sidebar
    before = (sidebar.isVisible(), sidebar.width(), window.trace_dock.width())
    desktop = window.desktop
    desktop._in_front = window.isVisible  # offscreen: no window is ever active
    desktop.wished(summon.wish("toggle"))
    assert not window.isVisible()
    desktop.wished(summon.wish("toggle"))
    qtbot.waitUntil(window.trace_dock.isVisible)
    assert window.trace_action.isChecked()
    assert (sidebar.isVisible(), sidebar.width(), window.trace_dock.width()) == before


def test_a_second_claim_on_the_same_memory_is_refused_and_junk_is_answered_no(
        qtbot, home, tmp_path):
    first, second = SingleInstance(home), SingleInstance(home)
    other = SingleInstance(tmp_path / "elsewhere")
    (tmp_path / "elsewhere").mkdir()
    try:
        assert first.claim()
        assert not second.claim()
        assert other.claim()  # another memory is another window
        wished = []
        first.wished.connect(wished.append)
        answered = _sent_in_a_thread(home, {"action": "format the disk"})
        qtbot.waitUntil(lambda: answered == [False], timeout=10000)
        assert wished == []
    finally:
        for instance in (first, second, other):
            instance.close()


def test_nothing_running_answers_false_at_once(home):
    assert summon.send(home, summon.wish("show")) is False


def _start(home: Path, *options: str) -> subprocess.Popen:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.Popen([sys.executable, "-m", "app.main", "--home", str(home), *options],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _ready(process: subprocess.Popen) -> None:
    line = process.stdout.readline()
    assert line.strip() == "ready", line + process.stderr.read()[-3000:]


@pytest.mark.slow
def test_starting_again_reaches_the_running_window_and_a_killed_one_leaves_no_lock(home):
    first = _start(home, "--say-when-ready")
    try:
        _ready(first)
        for options in ((), ("--toggle",), ("--ask", "hello")):
            again = subprocess.run([sys.executable, "-m", "app.main", "--home", str(home),
                                    *options], cwd=ROOT, capture_output=True, text=True,
                                   timeout=60, check=False)
            assert again.returncode == 0, again.stderr
            assert "ready" not in again.stdout
    finally:
        first.kill()  # a crash: the lock goes with the process
        first.wait(30)
    assert summon.send(home, summon.wish("show")) is False
    after = _start(home, "--say-when-ready")
    try:
        _ready(after)
    finally:
        after.send_signal(signal.SIGTERM)
        assert after.wait(60) == 0


@pytest.mark.slow
def test_two_starts_at_once_make_one_window(home):
    starts = [_start(home, "--say-when-ready") for _ in range(2)]
    try:
        outcomes = []
        for process in starts:
            try:
                outcomes.append(process.wait(30))
            except subprocess.TimeoutExpired:
                outcomes.append(None)  # the window: it stays
        assert sorted(outcomes, key=str) == [0, None], outcomes
        window = starts[outcomes.index(None)]
        _ready(window)
    finally:
        for process in starts:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                process.wait(60)
