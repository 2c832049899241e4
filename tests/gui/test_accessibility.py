"""What a screen reader gets: every control a person can reach on every surface of the
window (the chat with its messages, the Memory tab, Review, each settings page, every
dialog) has an accessible name, in both languages, read through Qt's accessibility tree as
an assistive technology reads it."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible, QAccessibleInterface
from PySide6.QtWidgets import QToolButton, QWidget

from app.looks.access import heard
from tests.gui.conftest import a_reply_regenerated, wait_turn
from tests.gui.surfaces import fill, open_surfaces

Role = QAccessible.Role
# What a person acts on or moves through; labels, panes and groupings name themselves by
# what they hold
INTERACTIVE = {Role.PushButton, Role.CheckBox, Role.RadioButton, Role.ComboBox,
               Role.EditableText, Role.SpinBox, Role.Slider, Role.ButtonMenu,
               Role.ButtonDropDown, Role.PageTab, Role.List, Role.Table, Role.Tree,
               Role.Link, Role.ListItem, Role.TreeItem, Role.MenuItem, Role.Cell,
               Role.Dial, Role.HotkeyField}


def _later_cell(node: QAccessibleInterface) -> bool:
    """A table's cell after the first of its row: a blank one is an empty value (a call
    that took no time yet), not a control without a name; the row is named by its first."""
    cell = node.tableCellInterface()
    return cell is not None and cell.columnIndex() > 0


def unnamed(root: QWidget, where: str) -> list[str]:
    """The controls under `root` a person can reach that a screen reader could not name."""
    problems: list[str] = []

    def walk(node: QAccessibleInterface | None, path: str) -> None:
        if node is None or not node.isValid() or node.state().invisible:
            return
        name = node.text(QAccessible.Text.Name).strip()
        if node.role() in INTERACTIVE and not name and not _later_cell(node):
            widget = node.object()
            problems.append(f"{where} · {node.role().name} {type(widget).__name__} "
                            f"{widget.objectName() if widget else ''} in {path}")
        for index in range(node.childCount()):
            walk(node.child(index), f"{path}/{name or node.role().name}"[-90:])

    walk(QAccessible.queryAccessibleInterface(root), "")
    return problems


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_every_control_has_a_name(qtbot, open_window, home, in_language, llm, language):
    in_language(language)
    window = open_window(home)
    fill(qtbot, window)
    llm.play({"tool_calls": [{"name": "memory_commit", "arguments": {"triplets": [
        {"subject": "User", "relation": "plays", "object": "cello"}]}}]},
        {"text": "Noted: the cello."})
    window.turns.send("I play the cello")
    wait_turn(qtbot, window)
    window.trace_dock.show()
    problems = open_surfaces(qtbot, window, unnamed)
    assert problems == [], f"{len(problems)} controls without a name:\n" + "\n".join(problems)


def test_the_parts_qt_adds_have_names(qtbot, open_window, home):
    """A search field's clear button, a toolbar's overflow arrow and a drop-down's list:
    Qt makes them, the app names them."""
    window = open_window(home)
    window.tabs.setCurrentWidget(window.browser)
    window.browser.search.setText("tea")
    clear = [b for b in window.browser.search.findChildren(QToolButton) if b.isVisible()]
    assert clear and all(b.accessibleName() == "Clear" for b in clear)
    assert window.browser.kind.view().accessibleName() == window.browser.kind.accessibleName()
    overflow = window.findChildren(QToolButton, "qt_toolbar_ext_button")
    assert overflow and all(b.accessibleName() == "More commands" for b in overflow)


def test_a_message_reads_who_when_and_what_and_its_keys(qtbot, open_window, home, llm):
    window = open_window(home)
    a_reply_regenerated(qtbot, window, llm)
    view = window.pane.view
    reply = QAccessible.queryAccessibleInterface(view).child(1)
    said = reply.text(QAccessible.Text.Name)
    assert said.startswith("Assistant, ") and said.endswith(": Maybe Leafy?"), said
    keys = reply.text(QAccessible.Text.Description)
    assert "R writes the reply again" in keys and "(2 of 2)" in keys, keys
    view.setFocus()
    view.setCurrentIndex(window.chat.index(1))
    qtbot.keyClick(view, Qt.Key.Key_Left)  # the keyboard's way to the drawn ‹
    assert window.chat.messages[1].content == "How about Fern?"


def test_replies_errors_and_toasts_are_announced(qtbot, open_window, home, llm):
    window = open_window(home)
    heard.clear()
    llm.play({"status": 401, "message": "Incorrect API key provided"})
    window.turns.send("suggest a name for a houseplant")
    wait_turn(qtbot, window)
    assert any(h.startswith("The reply failed:") for h in heard), list(heard)
    llm.play({"text": "Your plant could be called Fern."})
    window.turns.retry()
    wait_turn(qtbot, window)
    assert "The assistant replied: Your plant could be called Fern." in heard
    window.notify("Text 120%")
    assert heard[-1] == "Text 120%"


def test_the_memory_picture_has_a_text_alternative(qtbot, open_window, home):
    window = open_window(home)
    fill(qtbot, window)
    window.tabs.setCurrentWidget(window.browser)
    browser = window.browser
    qtbot.waitUntil(lambda: browser.model.rowCount() > 0 and not window.host.busy)
    row = [browser.model.index(r, 0).data() for r in range(browser.model.rowCount())] \
        .index("小明")
    browser.list.selectRow(row)
    view = browser.view
    qtbot.waitUntil(lambda: "龙井茶" in view.accessibleDescription())
    assert view.accessibleDescription().startswith("小明: 小明 喜欢 龙井茶")


def test_tab_goes_through_the_window_in_reading_order(qtbot, open_window, home, llm):
    """Left to right, top to bottom: the conversations, the tabs, the conversation, the
    message box and Send, then the tool trace."""
    window = open_window(home)
    llm.play({"text": "Noted."})
    window.turns.send("I play the cello")
    wait_turn(qtbot, window)
    window.trace_dock.show()
    sidebar = window.conversations.sidebar
    anchors = [sidebar.new_button, sidebar.search, sidebar.list, window.tabs.tabBar(),
               window.pane.view, window.pane.input, window.pane.send_button,
               window.trace_dock.filter]
    qtbot.waitUntil(lambda: all(a.isVisible() for a in anchors))
    order, widget = [], anchors[0]
    for _ in range(5000):
        if widget in anchors and widget not in order:
            order.append(widget)
        widget = widget.nextInFocusChain()
        if widget is anchors[0]:
            break
    assert order == anchors, [type(w).__name__ for w in order]
