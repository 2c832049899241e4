"""Fixtures for the window: a data folder whose config points at the loopback LLM server,
and windows that are closed, with their backend thread stopped, after each test."""

from __future__ import annotations

import os

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import QApplication

from app.backend_host import BackendHost
from app.startup import gui
from core.config import Config, save_config


@pytest.fixture(autouse=True)
def interface_font_from_the_environment(qapp):
    """`TRULYMEM_TEST_FONT="Noto Sans CJK SC"` runs the window tests with that family as
    the interface font, as a Chinese desktop sets it (.ci/run does it once)."""
    family = os.environ.get("TRULYMEM_TEST_FONT")
    if not family:
        yield
        return
    assert family in QFontDatabase.families(), f"{family} is not installed"
    original = qapp.font()
    qapp.setFont(QFont(family, 10))
    yield
    qapp.setFont(original)


@pytest.fixture(autouse=True)
def no_backend_thread_left_running():
    """Fail any test that leaves a backend QThread running (napari does the same)."""
    yield
    running = [h for h in list(BackendHost.live) if h.thread.isRunning()]
    for host in running:
        host.shutdown()
    assert not running, "a test left a backend thread running"


@pytest.fixture(autouse=True)
def no_window_left_behind(qapp):
    """Fail any test that leaves a window or a popup on screen (napari's leak checks): it
    would go on acting in the tests after it. (Tracking QTimers the way napari does, by
    patching `QTimer.__init__`, crashed the interpreter here: Shiboken types do not take a
    patched constructor well.)"""
    yield
    QApplication.processEvents()
    shown = [w for w in QApplication.topLevelWidgets() if w.isVisible()]
    for widget in shown:
        widget.close()
    assert not shown, f"a test left windows open: {[type(w).__name__ for w in shown]}"


@pytest.fixture
def home(tmp_path, llm):
    folder = tmp_path / "home"
    folder.mkdir()
    save_config(folder / "config.json",
                Config(api_key="sk-gui-test-000000", base_url=llm.base_url, model="test-model"))
    return folder


@pytest.fixture
def in_language():
    """Chooses the window's language for a test; English again after it."""
    chosen: list[str] = []

    def use(language: str) -> None:
        gui.make_application()
        gui.use_language(language)
        chosen.append(language)

    yield use
    gui.use_language("en")


@pytest.fixture
def open_window(qtbot):
    """Opens a window on a data folder and waits until its backend has loaded everything."""
    windows = []

    def _open(folder):
        gui.make_application()
        window = gui.open_window(folder)
        windows.append(window)
        qtbot.addWidget(window)
        with qtbot.waitSignal(window.host.ready, timeout=10000):
            window.show()
        qtbot.waitUntil(lambda: not window.host.busy, timeout=10000)
        return window

    yield _open
    for window in windows:
        window.close()
    QApplication.processEvents()


def wait_turn(qtbot, window, timeout=20000):
    qtbot.waitUntil(lambda: not window.turns.running and not window.host.busy, timeout=timeout)


def a_reply_regenerated(qtbot, window, llm) -> None:
    """One exchange whose reply wrote nothing, regenerated once: two versions of it,
    "How about Fern?" and, shown, "Maybe Leafy?"."""
    llm.play({"text": "How about Fern?"}, {"text": "Maybe Leafy?"})
    window.turns.send("suggest a name for a houseplant")
    wait_turn(qtbot, window)
    window.registry.actions["chat.regenerate"].trigger()
    wait_turn(qtbot, window)


def when_shown(kind, act, tries: int = 500) -> None:
    """Once a top-level `kind` (a modal dialog the action opens) is visible, `act` on it;
    the look gives up after `tries` (10 s), so a dialog that never opens leaves no timer
    behind (the test then fails on what `act` did not do)."""
    def poll(left: int) -> None:
        widget = next((w for w in QApplication.topLevelWidgets()
                       if isinstance(w, kind) and w.isVisible()), None)
        if widget is not None:
            act(widget)
        elif left:
            QTimer.singleShot(20, lambda: poll(left - 1))
    QTimer.singleShot(0, lambda: poll(tries))


def step_to_a_neighbour(qtbot, view, keys) -> int:
    """Arrow keys on the memory picture until the selection moves; the node it moved to."""
    view.setFocus()
    start = view.selected
    for key in keys:
        qtbot.keyClick(view, key)
        if view.selected != start:
            break
    assert view.selected != start
    return view.selected
