"""An 800×500 window: the Memory tab shows several facts with every column on show whole,
and Settings fits the screen with its buttons in sight; a large window shows every column."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from app.dialogs.settings import SettingsDialog
from core.protocol.packets import PacketType
from core.store import GraphStore
from core.tools import ToolExecutor

THINGS = ("cello", "black coffee", "jazz", "hiking in the Alps", "green tea", "Berlin",
          "Siemens", "Anna", "German", "Mandarin", "12 March", "a grey cat named Mochi")


@pytest.fixture
def seeded(home):
    store = GraphStore(home / "graph_memory.db")
    ToolExecutor(store).execute("memory_commit", {"triplets": [
        {"subject": "User", "relation": "likes", "object": thing} for thing in THINGS]},
        turn_id="t0", actor="model")
    store.close()
    return home


def columns_whole(table) -> bool:
    """Every column on show fits the table's width, and its header's words fit it."""
    header = table.horizontalHeader()
    shown = [c for c in range(header.count()) if not header.isSectionHidden(c)]
    metrics = header.fontMetrics()
    words = {c: metrics.horizontalAdvance(str(table.model().headerData(
        c, Qt.Orientation.Horizontal) or "")) for c in shown}
    return sum(header.sectionSize(c) for c in shown) <= table.viewport().width() \
        and all(header.sectionSize(c) >= words[c] for c in shown)


def memory_tab_with_user(qtbot, window):
    window.open_graph()
    browser = window.browser
    qtbot.waitUntil(lambda: browser.model.rowCount() > 0 and not window.host.busy)
    row = [browser.model.index(r, 0).data() for r in range(browser.model.rowCount())] \
        .index("User")
    browser.list.selectRow(row)
    qtbot.waitUntil(lambda: browser.details.edges.rowCount() == len(THINGS))
    return browser


@pytest.mark.parametrize("size", [(800, 500), (1600, 1000)])
def test_the_memory_tab_shows_facts_and_whole_columns(qtbot, open_window, seeded, size):
    window = open_window(seeded)
    window.resize(*size)
    qtbot.waitUntil(lambda: (window.width(), window.height()) == size)
    browser = memory_tab_with_user(qtbot, window)
    facts, nodes = browser.details.edge_table, browser.list
    qtbot.waitUntil(lambda: columns_whole(facts) and columns_whole(nodes)
                    and not facts.horizontalScrollBar().isVisible()
                    and not nodes.horizontalScrollBar().isVisible())
    rows = facts.viewport().height() // facts.verticalHeader().defaultSectionSize()
    header = facts.horizontalHeader()
    shown = [facts.model().headerData(c, Qt.Orientation.Horizontal)
             for c in range(header.count()) if not header.isSectionHidden(c)]
    if size == (800, 500):
        assert rows >= 4, rows
        assert {"Relation", "Other node", "Status"} <= set(shown)
    else:  # room for all of them
        assert rows >= 12 and len(shown) == header.count()
        assert not any(nodes.horizontalHeader().isSectionHidden(c) for c in range(4))
    # The node's commands sit beside its name: no row of their own.
    details = browser.details
    assert abs(details.node_bar.geometry().top() - details.title.geometry().top()) \
        < details.title.height()
    # what the filters say is read whole, both tabs show without scroll arrows, the
    # search field's hint is whole
    for combo in (browser.kind, browser.status):
        assert combo.width() >= combo.fontMetrics().horizontalAdvance(combo.currentText()) \
            + combo.iconSize().width(), combo.currentText()
    bar = details.tabs.tabBar()
    assert all(bar.tabRect(i).right() <= bar.width() for i in range(bar.count()))
    search = browser.search
    assert search.fontMetrics().horizontalAdvance(search.placeholderText()) < \
        search.width() - 2 * search.fontMetrics().averageCharWidth()


def test_with_nothing_chosen_the_details_count_nothing(qtbot, open_window, seeded):
    window = open_window(seeded)
    browser = memory_tab_with_user(qtbot, window)
    browser.details.clear()
    tabs = browser.details.tabs
    assert [tabs.tabText(i).replace("&", "") for i in range(tabs.count())] == \
        ["Facts", "Changes"]


def test_settings_fits_the_screen_with_its_buttons_in_sight(qtbot, open_window, home):
    window = open_window(home)
    got = []
    window.host.send(PacketType.GET_CONFIG, None, got.append)
    qtbot.waitUntil(lambda: bool(got))
    dialog = SettingsDialog(window.host, got[0]["data"], window)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    screen = dialog.screen().availableGeometry()
    assert dialog.frameGeometry().height() <= screen.height()
    assert dialog.frameGeometry().width() <= screen.width()
    assert screen.contains(dialog.geometry())
    assert dialog.buttons.isVisible()
    assert dialog.rect().contains(dialog.buttons.geometry())
    page = dialog.tabs.currentWidget()  # the scrolling page: nothing cut at its right
    qtbot.waitUntil(lambda: page.widget().width() <= page.viewport().width())
    dialog.reject()


def test_larger_text_keeps_the_columns_whole(qtbot, open_window, seeded):
    window = open_window(seeded)
    window.resize(1600, 1000)
    qtbot.waitUntil(lambda: window.width() == 1600)
    browser = memory_tab_with_user(qtbot, window)
    name = browser.list.horizontalHeader().sectionSize(0)
    window.zoom.set_percent(150)
    nodes = browser.list
    qtbot.waitUntil(lambda: columns_whole(nodes) and columns_whole(browser.details.edge_table)
                    and not nodes.horizontalScrollBar().isVisible())
    assert nodes.horizontalHeader().sectionSize(0) > name  # names keep their room
