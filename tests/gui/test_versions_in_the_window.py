"""An edited message keeps its earlier version: ‹ 1/2 › on it switches between the
versions, each with its own replies, and the memory follows the version shown."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QStyleOptionViewItem

from tests.gui.conftest import wait_turn
from tests.gui.test_chat_pane import active_facts, commit_step


def test_an_edit_makes_a_version_and_the_arrows_switch_the_replies_and_the_memory(
        qtbot, open_window, home, llm):
    window = open_window(home)
    llm.play(commit_step("Rome"), {"text": "Rome, noted."}, commit_step("jazz"),
             {"text": "Jazz, noted."}, commit_step("Oslo"), {"text": "Oslo, noted."})
    for text in ("I live in Rome", "I like jazz"):
        window.turns.send(text)
        wait_turn(qtbot, window)
    view = window.pane.view
    view.run_action(0, "edit")
    editor = view.editor_of_edit()
    assert "one click away" in editor.note.text()
    editor.text.setPlainText("I live in Oslo")
    qtbot.mouseClick(editor.send, Qt.MouseButton.LeftButton)
    wait_turn(qtbot, window)
    asked = window.chat.messages[0]
    assert asked.position() == (2, 2)
    option = QStyleOptionViewItem()
    view.initViewItemOption(option)
    option.rect = view.visualRect(window.chat.index(0))
    names = [name for _rect, name in view.delegate.layout(option, asked).actions]
    assert names[:3] == ["older", "position", "newer"]
    drawn = [view.delegate.layout(option, m).body.toPlainText() for m in window.chat.messages]
    assert drawn == ["I live in Oslo", "Oslo, noted."]  # the words drawn are the new ones
    assert active_facts(home) == ["Oslo"]

    view.run_action(0, "older")
    qtbot.waitUntil(lambda: window.chat.messages[0].content == "I live in Rome",
                    timeout=10000)
    assert [m.content for m in window.chat.messages] == [
        "I live in Rome", "Rome, noted.", "I like jazz", "Jazz, noted."]
    assert window.chat.messages[0].position() == (1, 2)
    assert sorted(active_facts(home)) == ["Rome", "jazz"]
    assert "Version 1 of 2" in window.toast.current()

    view.run_action(0, "newer")
    qtbot.waitUntil(lambda: window.chat.messages[0].content == "I live in Oslo",
                    timeout=10000)
    assert [m.content for m in window.chat.messages] == ["I live in Oslo", "Oslo, noted."]
    assert active_facts(home) == ["Oslo"]


def test_the_versions_come_back_with_the_conversation(qtbot, open_window, home, llm):
    window = open_window(home)
    llm.play({"text": "first"}, {"text": "second"})
    window.turns.send("one")
    wait_turn(qtbot, window)
    window.turns.resend(window.chat.messages[0].turn_id, "two")
    wait_turn(qtbot, window)
    window.close()
    again = open_window(home)
    qtbot.waitUntil(lambda: len(again.chat.messages) == 2, timeout=10000)
    assert again.chat.messages[0].position() == (2, 2)
    assert again.chat.messages[1].position() == (1, 1)  # the reply has no versions
