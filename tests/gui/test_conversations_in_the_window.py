"""Conversations in the window: the sidebar lists them, New chat starts one that still
knows the person, search jumps to a message in another conversation, delete and restore."""

from __future__ import annotations

from app.chat.sidebar import IdRole
from tests.gui.conftest import wait_turn


def titles(window) -> list[str]:
    listing = window.conversations.sidebar.list
    return [listing.item(r).text() for r in range(listing.count())]


def test_conversations_are_listed_switched_searched_and_restored(qtbot, open_window, home,
                                                                  llm):
    def until(condition) -> None:  # a loaded 2-core machine's ceiling, not an expected time
        qtbot.waitUntil(condition, timeout=20000)

    window = open_window(home)
    sidebar = window.conversations.sidebar
    assert sidebar.isVisible() and window.sidebar_action.isChecked()
    llm.play({"tool_calls": [{"name": "memory_commit", "arguments": {"triplets": [
        {"subject": "User", "relation": "loves", "object": "jazz"}]}}]},
        {"text": "Jazz it is."})
    window.turns.send("I love jazz, remember that")
    wait_turn(qtbot, window)
    until(lambda: titles(window) == ["I love jazz, remember that"])

    window.registry.actions["chat.new"].trigger()
    until(lambda: window.chat.rowCount() == 0 and len(titles(window)) == 2)
    assert "• loves jazz" in window.pane.empty.text()  # the new chat knows the person
    llm.play({"text": "京都的春天很美。"})
    window.turns.send("春天去京都怎么样？")
    wait_turn(qtbot, window)
    until(lambda: titles(window)[0] == "春天去京都怎么样？")

    sidebar.search.setText("jazz")
    until(lambda: sidebar.list.count() >= 1
                    and "I love jazz" in sidebar.list.item(0).text())
    sidebar.list.itemClicked.emit(sidebar.list.item(0))
    until(lambda: window.chat.rowCount() == 2
                    and window.chat.messages[0].content == "I love jazz, remember that")
    sidebar.search.clear()
    until(lambda: len(titles(window)) == 2)

    # The list's answer names the current conversation; wait for the one it names after
    # the jump, not one that left before it (reads have their own lane).
    shown = next(c["id"] for c in window.conversations.listed
                 if c["title"] == "I love jazz, remember that")
    until(lambda: window.conversations.current == shown)
    window.conversations.delete(shown)
    until(lambda: titles(window) == ["春天去京都怎么样？"]
                    and window.chat.messages[0].content == "春天去京都怎么样？")
    sidebar.deleted_button.click()
    until(lambda: titles(window) == ["I love jazz, remember that"])
    deleted = sidebar.list.item(0).data(IdRole)
    window.conversations.restore(deleted)
    until(lambda: titles(window) == ["No deleted conversations"])
    sidebar.deleted_button.click()
    until(lambda: len(titles(window)) == 2)


def test_a_conversation_exports_as_markdown(qtbot, open_window, home, llm, tmp_path):
    window = open_window(home)
    llm.play({"text": "Here:\n\n```python\nprint('hi')\n```"})
    window.turns.send("show me code")
    wait_turn(qtbot, window)
    path = tmp_path / "chat.md"
    window.conversations.export_to(str(path))
    qtbot.waitUntil(path.exists)
    text = path.read_text()
    assert text.startswith("# show me code\n") and "```python\nprint('hi')\n```" in text


def test_the_sidebar_toggles_and_remembers(qtbot, open_window, home):
    window = open_window(home)
    window.registry.actions["view.sidebar"].trigger()
    assert not window.conversations.sidebar.isVisible()
    window.close()
    again = open_window(home)
    assert not again.conversations.sidebar.isVisible()
    assert not again.sidebar_action.isChecked()
