"""The tray and notifications as a desktop gives them: a real X server (Xvfb) with a window
manager (openbox), a real tray host (trayer, the XEmbed tray) and a real notification daemon
(dunst) on a session bus of the test's own (dbus-daemon). Where there is none of them (the
offscreen tests), the window behaves as well: no tray, nothing notified, nothing broken.

Run as part of the suite, the outer test starts those programs and runs this file again
inside them (TRULYMEM_TRAY_DESKTOP=1, Qt's xcb platform)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from PySide6.QtWidgets import QSystemTrayIcon

from tests.gui.desktop import run_inside

INSIDE = os.environ.get("TRULYMEM_TRAY_DESKTOP") == "1"
ROOT = Path(__file__).resolve().parents[2]
TOOLS = ("Xvfb", "openbox", "trayer", "dunst", "dunstctl", "dbus-daemon")
INSIDE_TESTS = 3
inside = pytest.mark.skipif(not INSIDE, reason="runs inside Xvfb with a tray and dunst")


@pytest.mark.slow
@pytest.mark.skipif(INSIDE, reason="this is the run inside the desktop")
@pytest.mark.skipif(not all(shutil.which(t) for t in TOOLS),
                    reason="needs Xvfb, openbox, trayer, dunst and dbus-daemon")
def test_tray_and_notifications_on_a_real_desktop(tmp_path):
    bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"],
                           stdout=subprocess.PIPE, text=True)
    address = bus.stdout.readline().strip()
    try:
        run = run_inside(str(Path(__file__)), [
            ["openbox", "--sm-disable"],
            ["trayer", "--edge", "top", "--align", "right", "--widthtype", "request",
             "--height", "24"],
            ["dunst"]], {"DBUS_SESSION_BUS_ADDRESS": address, "TRULYMEM_TEST_BUS": "1",
                         "TRULYMEM_TRAY_DESKTOP": "1"})
    finally:
        bus.terminate()
        bus.wait(10)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    summary = run.stdout.strip().splitlines()[-1]
    assert f"{INSIDE_TESTS} passed, 2 skipped" in summary, summary


def _dunst_summaries() -> list[str]:
    shown = subprocess.run(["dunstctl", "history"], capture_output=True, text=True,
                           check=True, timeout=10).stdout
    items = json.loads(shown)["data"][0]
    return [item["summary"]["data"] for item in items]


def _tray_ready(qtbot, window) -> QSystemTrayIcon:
    qtbot.waitUntil(lambda: window.desktop.tray is not None and window.desktop.tray.isVisible()
                    and window.desktop.tray.geometry().width() > 0, timeout=10000)
    return window.desktop.tray


@inside
def test_the_tray_shows_hides_and_keeps_the_app_running_when_chosen(qtbot, home, open_window):
    window = open_window(home)
    tray = _tray_ready(qtbot, window)
    menu = tray.contextMenu()
    texts = [a.text() for a in menu.actions() if not a.isSeparator()]
    assert texts[1:] == ["New chat", "Keep running in the tray when closed", "Quit TrulyMEM"]
    # which memory it is: two memories open have two icons alike
    qtbot.waitUntil(lambda: tray.toolTip() == "TrulyMEM — home")
    menu.aboutToShow.emit()
    assert menu.actions()[0].text() in ("Show TrulyMEM (home)", "Hide TrulyMEM (home)")
    window.desktop.close_to_tray.setChecked(True)
    window.close()
    assert not window.isVisible()
    assert window.host.thread.isRunning()  # still running, in the tray
    tray.activated.emit(QSystemTrayIcon.ActivationReason.Trigger)
    qtbot.waitUntil(window.isVisible, timeout=5000)
    window.desktop.close_to_tray.setChecked(False)
    window.close()
    qtbot.waitUntil(lambda: not window.host.thread.isRunning(), timeout=20000)  # closing quits


@inside
def test_a_reply_while_the_window_is_hidden_is_notified_by_the_desktop(
        qtbot, home, open_window, llm):
    window = open_window(home)
    _tray_ready(qtbot, window)
    llm.play({"text": "Your sister lives in Lyon."})
    window.hide()
    window.pane.input.setPlainText("Where does my sister live?")
    window.pane.send_typed()
    qtbot.waitUntil(lambda: "TrulyMEM replied" in _dunst_summaries(), timeout=30000)
    assert window.desktop.notifier.sent[-1] == ("desktop", "TrulyMEM replied")


@inside
def test_a_reply_the_person_watches_is_not_notified(qtbot, home, open_window, llm):
    window = open_window(home)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=10000)
    before = len(window.desktop.notifier.sent)
    llm.play({"text": "Lyon."})
    window.pane.input.setPlainText("Where?")
    window.pane.send_typed()
    qtbot.waitUntil(lambda: not window.turns.running and window.chat.last_reply() is not None,
                    timeout=30000)
    assert len(window.desktop.notifier.sent) == before


def test_without_a_tray_or_a_notification_service_nothing_breaks(qtbot, home, open_window):
    window = open_window(home)  # offscreen: no tray, and the session bus is not there
    if INSIDE:
        pytest.skip("the desktop here has both")
    assert window.desktop.tray is None
    assert window.desktop.notifier.notify("Hello", "there").result(timeout=20) == "none"
    window.desktop.close_to_tray.setChecked(True)
    assert "no tray" in window.toast.current()
    window.close()
    qtbot.waitUntil(lambda: not window.host.thread.isRunning(), timeout=20000)  # still quits
