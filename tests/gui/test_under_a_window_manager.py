"""The keyboard as a person uses it, under a real X server and window manager (Xvfb and
openbox), with real key events from xdotool: what offscreen tests cannot see, such as a
popup left without keyboard focus by the window manager.

Run as part of the suite, the one test here starts Xvfb and openbox on a free display and
runs this file again inside them (TRULYMEM_DESKTOP=1, Qt's xcb platform); there the other
tests drive the window. Skipped where Xvfb, openbox or xdotool is not installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from core.store import GraphStore
from core.tools import ToolExecutor
from tests.gui.desktop import run_inside

INSIDE = os.environ.get("TRULYMEM_DESKTOP") == "1"
ROOT = Path(__file__).resolve().parents[2]
TOOLS = ("Xvfb", "openbox", "xdotool")
INSIDE_TESTS = 3  # the tests below that run inside the desktop


@pytest.mark.slow
@pytest.mark.skipif(INSIDE, reason="this is the run inside the desktop")
@pytest.mark.skipif(not all(shutil.which(t) for t in TOOLS),
                    reason="needs Xvfb, openbox and xdotool")
def test_the_keyboard_works_under_xvfb_and_openbox(tmp_path):
    run = run_inside(str(Path(__file__)), [["openbox", "--sm-disable"]],
                     {"TRULYMEM_DESKTOP": "1"})
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    summary = run.stdout.strip().splitlines()[-1]  # "3 passed, 1 skipped" (this one)
    assert f"{INSIDE_TESTS} passed, 1 skipped" in summary, summary


inside = pytest.mark.skipif(not INSIDE, reason="runs inside Xvfb and openbox")


def press(*keys: str) -> None:
    """Real key events through the X server, to whichever window has the focus."""
    subprocess.run(["xdotool", "key", "--delay", "30", *keys], check=True)


def typed(text: str) -> None:
    subprocess.run(["xdotool", "type", "--delay", "30", text], check=True)


def shown(qtbot, window) -> None:
    window.activateWindow()
    window.raise_()
    qtbot.waitUntil(window.isActiveWindow, timeout=10000)


def seeded(home: Path) -> Path:
    store = GraphStore(home / "graph_memory.db")
    try:
        for thing in ("cello", "Berlin", "black coffee"):
            assert ToolExecutor(store).execute("memory_commit", {"triplets": [
                {"subject": "User", "relation": "likes", "object": thing}]},
                actor="model")["success"]
    finally:
        store.close()
    return home


@inside
def test_ctrl_k_takes_typing_at_once(qtbot, open_window, home):
    from app.dialogs.palette import CommandPalette
    from tests.gui.conftest import when_shown

    window = open_window(home)
    shown(qtbot, window)
    seen: list[str] = []

    def type_into(palette: CommandPalette) -> None:
        typed("sett")
        qtbot.waitUntil(lambda: palette.query.text() == "sett", timeout=5000)
        seen.append(palette.list.currentIndex().data())
        palette.reject()

    when_shown(CommandPalette, type_into)
    press("ctrl+k")
    qtbot.waitUntil(lambda: bool(seen), timeout=10000)
    assert "Settings" in seen[0]


@inside
def test_review_takes_k_after_its_tab_is_chosen(qtbot, open_window, home):
    window = open_window(seeded(home))
    shown(qtbot, window)
    window.tabs.setCurrentWidget(window.browser)
    browser = window.browser
    browser.pages.setCurrentWidget(browser.review)  # as a click on the tab does
    qtbot.waitUntil(lambda: browser.review.tree.currentIndex().isValid(), timeout=10000)
    assert browser.review.tree.hasFocus()
    before = browser.review.count
    press("k")
    qtbot.waitUntil(lambda: browser.review.count < before, timeout=10000)


@inside
def test_plus_on_the_main_keyboard_zooms_the_picture(qtbot, open_window, home):
    window = open_window(seeded(home))
    shown(qtbot, window)
    window.tabs.setCurrentWidget(window.browser)
    view = window.browser.view
    window.browser.show_node(1)
    qtbot.waitUntil(lambda: bool(view.positions), timeout=10000)
    view.setFocus()
    qtbot.waitUntil(view.hasFocus, timeout=5000)
    scale = view.transform().m11()
    press("shift+equal")  # "+" on the main keyboard of a US layout
    qtbot.waitUntil(lambda: view.transform().m11() > scale, timeout=5000)
    scale = view.transform().m11()
    press("KP_Add")
    qtbot.waitUntil(lambda: view.transform().m11() > scale, timeout=5000)
    scale = view.transform().m11()
    press("minus")
    qtbot.waitUntil(lambda: view.transform().m11() < scale, timeout=5000)
