"""Text zoom: Ctrl+= (and Ctrl++), Ctrl+- and Ctrl+0 scale the chat's and the Memory tab's
text, say the new size, and the next window opens at it (the installation's setting, not
the memory's)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from app.chat.model import ChatMessage

CTRL = Qt.KeyboardModifier.ControlModifier


def sizes(window) -> dict[str, float]:
    browser = window.browser
    return {"chat": window.pane.view.font().pointSizeF(),
            "box": window.pane.input.font().pointSizeF(),
            "nodes": browser.list.font().pointSizeF(),
            "facts": browser.details.edge_table.font().pointSizeF(),
            "heading": browser.details.title.font().pointSizeF(),
            "review": browser.review.tree.font().pointSizeF()}


def message_height(window) -> int:
    return window.pane.view.sizeHintForIndex(window.chat.index(0)).height()


def test_ctrl_plus_minus_and_zero_scale_the_chat_and_the_memory_tab(qtbot, open_window, home):
    window = open_window(home)
    window.chat.append(ChatMessage("assistant", "A reply with some words in it, " * 8))
    before, tall = sizes(window), message_height(window)
    box = window.pane.input
    box.setFocus()
    qtbot.waitUntil(box.hasFocus)
    qtbot.keyClick(box, Qt.Key.Key_Equal, CTRL)  # Ctrl+=
    qtbot.keyClick(box, Qt.Key.Key_Plus, CTRL)  # Ctrl++, the same
    assert window.zoom.percent == 120
    assert window.toast.current() == "Text 120%"
    after = sizes(window)
    for part, size in before.items():
        assert after[part] == pytest.approx(size * 1.2, abs=0.01), part
    qtbot.waitUntil(lambda: message_height(window) > tall)  # laid out again, larger
    assert box.toPlainText() == ""  # the keys zoomed, they typed nothing

    window.close()
    again = open_window(home)
    assert again.zoom.percent == 120
    assert sizes(again)["chat"] == pytest.approx(before["chat"] * 1.2, abs=0.01)
    again.pane.input.setFocus()
    qtbot.waitUntil(again.pane.input.hasFocus)
    qtbot.keyClick(again.pane.input, Qt.Key.Key_0, CTRL)
    assert again.zoom.percent == 100 and again.toast.current() == "Text 100%"
    assert sizes(again) == pytest.approx(before)
    for _ in range(5):  # 90, 80, and no smaller
        qtbot.keyClick(again.pane.input, Qt.Key.Key_Minus, CTRL)
    assert again.zoom.percent == 80
    assert sizes(again)["nodes"] == pytest.approx(before["nodes"] * 0.8, abs=0.01)


def test_zoom_is_in_the_palette_and_rebindable(qtbot, open_window, home):
    window = open_window(home)
    registry = window.registry
    assert registry.actions["view.zoom_in"].text() == "Larger text"
    keys = [k.toString() for k in registry.actions["view.zoom_in"].shortcuts()]
    assert keys == ["Ctrl+=", "Ctrl++"]
    registry.apply_overrides({"view.zoom_in": "Ctrl+Shift+Up"})
    assert [k.toString() for k in registry.actions["view.zoom_in"].shortcuts()] == \
        ["Ctrl+Shift+Up"]
    registry.apply_overrides({})
    assert len(registry.actions["view.zoom_in"].shortcuts()) == 2
