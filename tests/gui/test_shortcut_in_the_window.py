"""A shortcut from anywhere, from the window: the commands to bind in any desktop's
keyboard settings, and where the desktop has the global-shortcuts portal, one button that
lets it set the key; each press then shows or hides the window, at every start."""

from __future__ import annotations

import shlex

import pytest

from tests.test_shortcut_portal import Portal, bus  # noqa: F401  (the bus fixture)

pytest.importorskip("jeepney")


def test_the_commands_shown_start_this_program_on_this_memory(qtbot, home, open_window):
    window = open_window(home)
    dialog = window.desktop.shortcut_dialog()
    qtbot.addWidget(dialog)
    toggle = shlex.split(dialog.fields["toggle"].text())
    assert toggle[-1] == "--toggle" and "--home" in toggle
    assert toggle[toggle.index("--home") + 1] == str(home.absolute())
    assert dialog.fields["ask"].text().endswith('--ask "…"')
    qtbot.waitUntil(lambda: "no shortcut service" in dialog.portal_note.text(),
                    timeout=10000)
    assert not dialog.portal_button.isVisible()


def test_the_portal_sets_the_key_and_each_press_toggles_the_window_at_every_start(
        qtbot, home, open_window, bus):  # noqa: F811  (the fixture)
    portal = Portal(bus)
    window = open_window(home)
    try:
        dialog = window.desktop.shortcut_dialog()
        qtbot.addWidget(dialog)
        dialog.show()
        qtbot.waitUntil(dialog.portal_button.isVisible, timeout=10000)
        dialog.portal_button.click()
        qtbot.waitUntil(lambda: window.desktop.portal is not None, timeout=10000)
        assert "Ctrl+Alt+Space" in dialog.portal_note.text()
        window.desktop._in_front = window.isVisible  # offscreen: never active
        portal.press("toggle-window")
        qtbot.waitUntil(lambda: not window.isVisible(), timeout=10000)
        portal.press("toggle-window")
        qtbot.waitUntil(window.isVisible, timeout=10000)
        dialog.close()
        window.close()
        again = open_window(home)  # bound again at start, without asking
        qtbot.waitUntil(lambda: again.desktop.portal is not None, timeout=10000)
        assert len(portal.sessions) == 2
    finally:
        portal.close()
