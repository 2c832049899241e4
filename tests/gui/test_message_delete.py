"""Deleting an exchange without the right-click menu: the Delete hover action in a message's
header, and the Delete key on the focused message; Ctrl+Z in the chat brings it back, and
Delete in the message box still deletes characters."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QStyleOptionViewItem

from tests.gui.conftest import wait_turn


def two_exchanges(qtbot, window, llm) -> None:
    llm.play({"text": "Jazz, noted."}, {"text": "Hello."})
    for text in ("I like jazz", "hi"):
        window.turns.send(text)
        wait_turn(qtbot, window)
    assert len(window.chat.messages) == 4


def action_rect(view, row: int, name: str):
    option = QStyleOptionViewItem()
    view.initViewItemOption(option)
    option.rect = view.visualRect(view.chat.index(row))
    return {n: r for r, n in view.delegate.layout(option, view.chat.messages[row]).actions}[name]


def test_the_delete_hover_action_deletes_the_exchange_and_ctrl_z_brings_it_back(
        qtbot, open_window, home, llm):
    window = open_window(home)
    two_exchanges(qtbot, window, llm)
    view = window.pane.view
    reply = 1  # the first reply: its exchange goes, the person's message with it
    view.scrollTo(view.chat.index(reply))
    rect = action_rect(view, reply, "delete")
    assert view.viewport().rect().contains(rect)
    qtbot.mouseMove(view.viewport(), rect.center())
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: len(window.chat.messages) == 2)
    assert [m.content for m in window.chat.messages] == ["hi", "Hello."]
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: len(window.chat.messages) == 4)
    assert window.chat.messages[0].content == "I like jazz"


def test_the_delete_key_deletes_the_focused_messages_exchange(qtbot, open_window, home, llm):
    window = open_window(home)
    two_exchanges(qtbot, window, llm)
    view = window.pane.view
    view.setCurrentIndex(view.chat.index(2))  # your "hi"
    view.setFocus()
    qtbot.waitUntil(view.hasFocus)
    qtbot.keyClick(view, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: len(window.chat.messages) == 2)
    assert [m.content for m in window.chat.messages] == ["I like jazz", "Jazz, noted."]
    assert "Ctrl+Z" in window.toast.current()


def test_delete_in_the_message_box_deletes_a_character_not_a_message(qtbot, open_window,
                                                                     home, llm):
    window = open_window(home)
    two_exchanges(qtbot, window, llm)
    view, box = window.pane.view, window.pane.input
    view.setCurrentIndex(view.chat.index(3))  # a message is current, the box has focus
    box.setPlainText("abc")
    box.setFocus()
    qtbot.waitUntil(box.hasFocus)
    cursor = box.textCursor()
    cursor.setPosition(0)
    box.setTextCursor(cursor)
    qtbot.keyClick(box, Qt.Key.Key_Delete)
    assert box.toPlainText() == "bc"
    # A delete would have been sent at once (the host counts it unanswered until then).
    assert not window.host.busy and len(window.chat.messages) == 4
