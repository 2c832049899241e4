"""The graph browser in the window: search, filters, lazy list, neighbourhood, details,
corrections with undo, export and import, and the highlight after a turn."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt

from app.graph.node_model import NodeIdRole, NodeListModel
from core.store import GraphStore
from core.tools import ToolExecutor
from tests.gui.conftest import step_to_a_neighbour, wait_turn

FACTS = [("Anna", "lives in", "Berlin"), ("Anna", "plays", "the violin"),
         ("Bob", "lives in", "Berlin"), ("小明", "喜欢", "苹果"), ("小明", "住在", "上海")]


@pytest.fixture
def seeded(home):
    store = GraphStore(home / "graph_memory.db")
    ToolExecutor(store).execute("memory_commit", {"triplets": [
        {"subject": s, "relation": r, "object": o} for s, r, o in FACTS]}, turn_id="t0",
        actor="model")
    store.close()
    return home


def browser_of(qtbot, window):
    window.open_graph()
    browser = window.browser
    qtbot.waitUntil(lambda: browser.model.rowCount() > 0 and not window.host.busy)
    return browser


def shown_names(browser):
    model = browser.model
    return [model.index(r, 0).data() for r in range(model.rowCount())]


def search(qtbot, window, browser, text):
    browser.search.setText(text)
    qtbot.waitUntil(lambda: not browser._search_timer.isActive() and not window.host.busy)


def choose(qtbot, window, browser, name):
    row = shown_names(browser).index(name)
    browser.list.selectRow(row)
    qtbot.waitUntil(lambda: not window.host.busy and browser.details.node is not None
                    and browser.details.node["name"] == name)


def test_ctrl_g_opens_the_browser_and_the_list_is_lazy(qtbot, open_window, seeded,
                                                         qtmodeltester):
    window = open_window(seeded)
    browser = browser_of(qtbot, window)
    assert window.tabs.currentWidget() is browser
    assert sorted(shown_names(browser)) == sorted(
        {n for s, _, o in FACTS for n in (s, o)})
    assert browser.count.text() == "7 nodes"
    qtmodeltester.check(browser.model, force_py=True)
    window.open_graph()
    assert window.tabs.currentWidget() is window.pane


def test_paging_fetches_rows_as_the_list_grows(qtbot):
    asked = []
    model = NodeListModel(lambda ids, deliver: (asked.append(ids), deliver(
        [{"id": i, "name": f"n{i}", "kind": "entity", "type": None, "mention_count": 1,
          "updated_at": 0.0} for i in ids])))
    model.set_ids(list(range(1, 1001)))
    assert model.rowCount() == 200 and model.canFetchMore()
    assert asked == [list(range(1, 201))]
    model.fetchMore()
    assert model.rowCount() == 400 and asked[-1] == list(range(201, 401))
    assert model.index(399, 0).data() == "n400"
    while model.canFetchMore():
        model.fetchMore()
    assert model.rowCount() == 1000 and len(asked) == 5


def test_search_in_english_and_chinese_and_filters(qtbot, open_window, seeded):
    window = open_window(seeded)
    browser = browser_of(qtbot, window)
    search(qtbot, window, browser, "violin")
    assert shown_names(browser)[0] == "the violin"
    search(qtbot, window, browser, "苹")
    assert {"苹果", "小明"} <= set(shown_names(browser))
    search(qtbot, window, browser, "")
    browser.kind.setCurrentIndex(2)  # Persona
    qtbot.waitUntil(lambda: not window.host.busy)
    assert shown_names(browser) == []
    browser.kind.setCurrentIndex(0)
    qtbot.waitUntil(lambda: not window.host.busy)
    browser.list.sortByColumn(2, Qt.SortOrder.DescendingOrder)  # by mentions
    qtbot.waitUntil(lambda: not window.host.busy)
    assert shown_names(browser)[0] in ("Anna", "Berlin", "小明")


def test_choosing_a_node_shows_its_neighbourhood_and_details(qtbot, open_window, seeded):
    window = open_window(seeded)
    browser = browser_of(qtbot, window)
    choose(qtbot, window, browser, "Anna")
    view = browser.view
    assert set(view.node_items) == {browser.current, *view.neighbours[browser.current]}
    assert len(view.node_items) == 3
    assert {e["relation"] for e in browser.details.edges.rows} == {"lives in", "plays"}
    assert browser.details.history.rows[0]["tool"] == "memory_commit"
    browser.depth.setValue(2)
    qtbot.waitUntil(lambda: not window.host.busy and len(view.node_items) == 4)  # + Bob
    # keyboard: move to a neighbour and make it the centre
    target = step_to_a_neighbour(qtbot, view, (Qt.Key.Key_Right, Qt.Key.Key_Left,
                                               Qt.Key.Key_Up, Qt.Key.Key_Down))
    qtbot.keyClick(view, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not window.host.busy and view.center == target)


def test_rename_merge_delete_restore_and_undo(qtbot, open_window, seeded):
    window = open_window(seeded)
    browser = browser_of(qtbot, window)
    choose(qtbot, window, browser, "Bob")
    bob = browser.current
    browser._correct("rename_node", {"node_id": bob, "name": "Robert"})
    qtbot.waitUntil(lambda: not window.host.busy and "Robert" in shown_names(browser))
    assert browser.details.node["name"] == "Robert"
    window.registry.actions["memory.undo"].trigger()  # Ctrl+Z
    qtbot.waitUntil(lambda: not window.host.busy and "Bob" in shown_names(browser))

    browser._correct("merge_nodes", {"merge_id": bob, "keep_name": "Anna"})
    qtbot.waitUntil(lambda: not window.host.busy and "Bob" not in shown_names(browser))
    choose(qtbot, window, browser, "Anna")
    lives = [e for e in browser.details.edges.rows if e["relation"] == "lives in"]
    assert lives[0]["mention_count"] == 2  # Bob's fact folded into Anna's
    browser.undo()
    qtbot.waitUntil(lambda: not window.host.busy and "Bob" in shown_names(browser))

    choose(qtbot, window, browser, "Anna")
    edge = next(e for e in browser.details.edges.rows if e["relation"] == "plays")
    browser.details.select_edge(edge["id"])
    browser.run("fact.delete")
    qtbot.waitUntil(lambda: not window.host.busy and any(
        e["status"] == "deleted" for e in browser.details.edges.rows))
    deleted = next(e for e in browser.details.edges.rows if e["status"] == "deleted")
    browser.details.select_edge(deleted["id"])
    browser.run("fact.delete")
    qtbot.waitUntil(lambda: not window.host.busy and all(
        e["status"] == "active" for e in browser.details.edges.rows))
    browser.add_fact({"subject": "Anna", "relation": "likes", "object": "tea"})
    qtbot.waitUntil(lambda: not window.host.busy and "tea" in shown_names(browser))


def test_export_then_import_into_a_fresh_memory(qtbot, open_window, seeded, tmp_path):
    window = open_window(seeded)
    path = tmp_path / "memory.json"
    window.memory.export_memory(str(path), "json")
    qtbot.waitUntil(lambda: path.exists() and not window.host.busy)
    assert len(json.loads(path.read_text())["edges"]) == len(FACTS)
    graphml = tmp_path / "memory.graphml"
    window.memory.export_memory(str(graphml), "graphml")
    qtbot.waitUntil(lambda: graphml.exists() and not window.host.busy)
    window.close()

    fresh = tmp_path / "fresh"
    other = open_window(fresh)
    other.memory.import_memory(str(path))
    qtbot.waitUntil(lambda: not other.host.busy and "5 facts" in other.status.memory_label.text())
    assert "Imported" in other.toast.current()
    browser = browser_of(qtbot, other)  # names, not "…", and a Name column that shows them
    qtbot.waitUntil(lambda: "…" not in shown_names(browser) and len(shown_names(browser)) == 7)
    assert browser.list.columnWidth(0) >= browser.list.fontMetrics().horizontalAdvance(
        "the violin")


def test_a_bad_import_is_refused_with_a_message(qtbot, open_window, seeded, tmp_path,
                                                monkeypatch):
    window = open_window(seeded)
    shown = []
    monkeypatch.setattr("app.main_window.QMessageBox.warning",
                        lambda _parent, _title, text: shown.append(text))
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "trulymem-memory", "version": 1, "nodes": 5, "edges": []}')
    window.memory.import_memory(str(bad))
    qtbot.waitUntil(lambda: bool(shown))
    assert "not a TrulyMEM memory export" in shown[0]


def test_a_turn_highlights_what_it_recalled_and_changed(qtbot, open_window, seeded, llm):
    window = open_window(seeded)
    browser = browser_of(qtbot, window)
    llm.play({"tool_calls": [
        {"name": "memory_recall", "arguments": {"query_intent": "violin"}},
        {"name": "memory_commit", "arguments": {"triplets": [
            {"subject": "Anna", "relation": "likes", "object": "jazz"}]}}]},
        {"text": "Noted."})
    window.turns.send("Anna likes jazz, and what does she play?")
    wait_turn(qtbot, window)
    qtbot.waitUntil(lambda: not window.host.busy and "jazz" in shown_names(browser))
    highlighted = {browser.model.index(r, 0).data() for r in range(browser.model.rowCount())
                   if browser.model.index(r, 0).data(NodeIdRole) in browser.model.highlighted}
    assert {"Anna", "jazz", "the violin"} <= highlighted
    changed = {browser.model.index(r, 0).data() for r in range(browser.model.rowCount())
               if browser.model.index(r, 0).data(NodeIdRole) in browser.model.changed}
    assert changed == {"Anna", "jazz"}  # the commit; the recall only read


def test_go_to_message_jumps_to_the_chat(qtbot, open_window, seeded, llm):
    window = open_window(seeded)
    llm.play({"tool_calls": [{"name": "memory_commit", "arguments": {"triplets": [
        {"subject": "Eve", "relation": "likes", "object": "chess"}]}}]}, {"text": "ok"})
    window.turns.send("Eve likes chess")
    wait_turn(qtbot, window)
    browser = browser_of(qtbot, window)
    qtbot.waitUntil(lambda: "Eve" in shown_names(browser))
    choose(qtbot, window, browser, "Eve")
    edge = browser.details.edges.rows[0]
    assert edge["message"]["content"] == "Eve likes chess"
    browser.details.select_edge(edge["id"])
    browser.run("fact.open_message")
    assert window.tabs.currentWidget() is window.pane
    assert window.pane.view.currentIndex().row() == 0


def test_a_type_keeps_its_colour_in_every_view_and_run():
    from app.graph.colors import type_shade

    assert type_shade("Person") == type_shade(" person ") == type_shade("PERSON")
    shades = {type_shade(t) for t in ("Person", "City", "Food", "Book", "Drink", "Animal")}
    assert len(shades) >= 5  # common types rarely share one


def test_the_persons_node_is_named_in_the_persons_language():
    from app.graph.node_model import NodeListModel, shown_name
    from core import i18n

    try:
        i18n.set_language("zh_CN")
        assert shown_name("User") == shown_name("user") == "你"
        assert shown_name("Mia") == "Mia"
        row = {"name": "User", "kind": "entity", "type": "Person", "mention_count": 3,
               "updated_at": 0, "deleted_at": None}
        assert NodeListModel._cell(row, 0) == "你" and NodeListModel._cell(row, 1) == "Person"
    finally:
        i18n.set_language("en")


def test_the_persons_name_in_chinese_finds_their_node(qtbot, open_window, seeded):
    from core import i18n

    window = open_window(seeded)
    try:
        i18n.set_language("zh_CN")
        window.browser.search.setText("你")
        assert window.browser.filters()["query"] == "User"
        window.browser.search.setText("你好")
        assert window.browser.filters()["query"] == "你好"
    finally:
        i18n.set_language("en")
