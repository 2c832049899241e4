"""The Memory tab's second pass in the window: the review inbox by keyboard, the status-bar
count across a restart, the picture's colours and labels, list and picture in step, the
merge picker, undo and redo messages, the empty memory's hint, and one change event
instead of a storm of refresh packets."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QDialog, QLineEdit

from app.graph.fact_form import FactDialog
from app.graph.node_picker import NodePicker
from app.graph.review import ChangeRole
from core.protocol.packets import PacketType
from core.store import GraphStore
from core.tools import ToolExecutor
from tests.gui.conftest import step_to_a_neighbour, wait_turn


def commit(*triplets):
    return {"name": "memory_commit", "arguments": {"triplets": [
        {"subject": s, "relation": r, "object": o, **extra}
        for s, r, o, *rest in triplets for extra in [rest[0] if rest else {}]]}}


def review_of(qtbot, window):
    window.registry.actions["memory.review"].trigger()
    review = window.browser.review
    qtbot.waitUntil(lambda: review.isVisible() and not window.host.busy)
    return review


def review_texts(review):
    root = review.model.invisibleRootItem()
    return [root.child(g).child(c).text() for g in range(root.rowCount())
            for c in range(root.child(g).rowCount())]


@pytest.fixture
def two_turns(home, llm, qtbot, open_window):
    llm.play({"tool_calls": [commit(("User", "likes", "green tea"),
                                    ("User", "lives in", "Berlin", {"confidence": 0.4}))]},
             {"text": "Noted."},
             {"tool_calls": [commit(("User", "works at", "Bosch"))]},
             {"text": "Noted too."})
    window = open_window(home)
    for text in ("I like green tea; I live in Berlin maybe", "I work at Bosch"):
        window.turns.send(text)
        wait_turn(qtbot, window)
    return window


def test_the_inbox_by_keyboard_keep_undo_and_edit(qtbot, two_turns):
    window = two_turns
    assert window.status.review_label.text() == "Review: 2"
    review = review_of(qtbot, window)
    assert review.tree.hasFocus()
    texts = review_texts(review)
    assert texts[0] == "+ added: User works at Bosch"  # newest first
    assert "a guess (confidence 0.4)" in texts[1]
    root = review.model.invisibleRootItem()
    assert "I work at Bosch" in root.child(0).text()  # grouped under the message
    guess = root.child(1).child(0)
    assert guess.background().color().alpha() > 0  # the guess stands out

    # K keeps the selected change: it leaves the inbox and the count goes down
    assert review.tree.currentIndex().data(ChangeRole)["lines"][0]["object"] == "Bosch"
    qtbot.keyClick(review.tree, Qt.Key.Key_K)
    qtbot.waitUntil(lambda: not window.host.busy and len(review_texts(review)) == 1)
    assert window.status.review_label.text() == "Review: 1"
    assert "Kept 'User works at Bosch'" in window.toast.current()

    # E edits the fact the model guessed (a menu asks which of the change's two facts)
    def fill_in_the_dialog():
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, FactDialog):
            QTimer.singleShot(10, fill_in_the_dialog)  # polls until it is open
            return
        dialog.object.setText("Hamburg")
        dialog.accept()

    qtbot.keyClick(review.tree, Qt.Key.Key_E)
    qtbot.waitUntil(lambda: QApplication.activePopupWidget() is not None)
    menu = QApplication.activePopupWidget()
    guess_action = next(a for a in menu.actions() if "Berlin" in a.text())
    menu.close()
    QTimer.singleShot(0, fill_in_the_dialog)
    guess_action.trigger()  # opens the dialog, which the timer fills in and accepts
    qtbot.waitUntil(lambda: not window.host.busy and "Hamburg" in window.toast.current())
    # one of its two facts corrected: the change still waits, for the other fact
    qtbot.waitUntil(lambda: not window.host.busy and len(review_texts(review)) == 1)
    assert "green tea" in review_texts(review)[0]
    assert window.status.review_label.text() == "Review: 1"
    review.tree.setFocus()
    qtbot.keyClick(review.tree, Qt.Key.Key_K)
    qtbot.waitUntil(lambda: not window.host.busy and review_texts(review) == [])
    assert window.status.review_label.text() == "Nothing to review"
    store = window.host.backend.store
    live = {r["relation"] + " " + r["name"] for r in store.query(
        "SELECT e.relation, n.name FROM edges e JOIN nodes n ON n.id = e.target_id"
        " WHERE e.status = 'active'")}
    assert live == {"likes green tea", "lives in Hamburg", "works at Bosch"}

    # Ctrl+Z takes the correction back, with words, and Ctrl+Shift+Z brings it again
    window.registry.actions["memory.undo"].trigger()
    qtbot.waitUntil(lambda: "Redo" in window.toast.current())
    assert "Hamburg" in window.toast.current()
    window.registry.actions["memory.redo"].trigger()
    qtbot.waitUntil(lambda: window.toast.current().startswith("Added")
                    or ("Hamburg" in window.toast.current()
                    and "Redo" not in window.toast.current()))


def test_undo_in_the_inbox_and_the_count_after_a_restart(qtbot, two_turns, open_window,
                                                        home):
    window = two_turns
    review = review_of(qtbot, window)
    review.tree.setCurrentIndex(review.model.invisibleRootItem().child(0).index())  # a group
    qtbot.keyClick(review.tree, Qt.Key.Key_U)
    # an undo, the change event and the list read again: seconds on a loaded machine
    qtbot.waitUntil(lambda: not window.host.busy and len(review_texts(review)) == 1,
                    timeout=20000)
    assert window.toast.current().startswith("Undid: added “User works at Bosch”")
    window.close()
    qtbot.waitUntil(lambda: not window.host.thread.isRunning())

    again = open_window(home)
    qtbot.waitUntil(lambda: again.status.review_label.text() == "Review: 1")
    review = review_of(qtbot, again)
    assert review.count == 1 and len(review_texts(review)) == 1
    qtbot.keyClick(review.tree, Qt.Key.Key_K, Qt.KeyboardModifier.ShiftModifier)  # keep all
    qtbot.waitUntil(lambda: not again.host.busy and review_texts(review) == [])
    assert review.empty.isVisible() and "reviewed" in review.empty.text()
    assert again.status.review_label.text() == "Nothing to review"


def test_a_turn_causes_one_round_of_reads_not_a_storm(qtbot, home, llm, open_window):
    store = GraphStore(home / "graph_memory.db")
    ToolExecutor(store).execute("memory_commit", {"triplets": [
        {"subject": "Anna", "relation": "lives in", "object": "Berlin"}]})
    store.close()
    llm.play({"tool_calls": [commit(("Anna", "likes", "tea")), commit(("Anna", "likes",
                                                                       "jazz"))]},
             {"text": "Noted."},
             {"tool_calls": [commit(("Bob", "likes", "chess"))]}, {"text": "ok"})
    window = open_window(home)
    window.open_graph()  # the Memory tab on show, Anna chosen
    browser = window.browser
    qtbot.waitUntil(lambda: not window.host.busy and browser.details.node is not None)
    sent = []
    original = window.host.send

    def counting(type_, body=None, on_answer=None):
        sent.append(type_)
        return original(type_, body, on_answer)

    window.host.send = counting
    window.turns.send("Anna likes tea and jazz")
    wait_turn(qtbot, window)
    qtbot.waitUntil(lambda: not window.host.busy and "jazz" in {
        browser.model.index(r, 0).data() for r in range(browser.model.rowCount())})
    after = sent[1:]  # what the turn's end and its two changes caused
    assert sent[0] == PacketType.PROCESS_MESSAGE
    assert len(after) == len(set(after)), after  # nothing asked twice
    # (LIST_MODELS: once a session, after its first reply, for a model going away)
    assert set(after) <= {PacketType.LIST_CONVERSATIONS, PacketType.LIST_NODES,
                          PacketType.NODE_ROWS, PacketType.GET_SUBGRAPH,
                          PacketType.GET_NODE, PacketType.LIST_MODELS}, after
    assert window.status.memory_label.text() == "Memory: 3 facts · 4 entities · 0 tasks"

    # with the chat on show, a turn reads nothing for the Memory tab
    window.open_graph()
    qtbot.waitUntil(lambda: window.tabs.currentWidget() is window.pane)
    sent.clear()
    window.turns.send("Bob likes chess")
    wait_turn(qtbot, window)
    assert sent == [PacketType.PROCESS_MESSAGE, PacketType.LIST_CONVERSATIONS]
    assert window.status.review_label.text() == "Review: 3"


@pytest.fixture
def crowded(home):
    """Anna with 24 neighbours of three types, one much mentioned; and 小明."""
    store = GraphStore(home / "graph_memory.db")
    tools = ToolExecutor(store)
    kinds = ("Person", "City", "Food")
    triplets = [{"subject": "Anna", "relation": "knows", "object": f"Friend {n:02d}",
                 "object_type": kinds[n % 3]} for n in range(24)]
    tools.execute("memory_commit", {"triplets": triplets})
    for _ in range(4):
        tools.execute("memory_commit", {"triplets": [
            {"subject": "Anna", "relation": "knows", "object": "Friend 07"}]},
            turn_id=f"t{_}")
    tools.execute("memory_commit", {"triplets": [
        {"subject": "小明", "relation": "喜欢", "object": "绿茶"}]})
    store.close()
    return home


def test_the_picture_colours_by_type_and_keeps_crowded_labels_readable(qtbot, crowded,
                                                                       open_window):
    window = open_window(crowded)
    window.open_graph()
    browser = window.browser
    qtbot.waitUntil(lambda: not window.host.busy and browser.model.rowCount() > 0)
    row = next(r for r in range(browser.model.rowCount())
               if browser.model.index(r, 0).data() == "Anna")
    browser.list.selectRow(row)
    view = browser.view
    # 24 neighbours: the much mentioned one single, the others grouped by relation and
    # type (Friend 07 is a City): Anna, Friend 07 and three groups
    qtbot.waitUntil(lambda: not window.host.busy and len(view.node_items) == 5)
    assert sorted(g["name"] for g in view.groups.values()) == [
        "knows · City · 7", "knows · Food · 8", "knows · Person · 8"]
    fills = {view.node_items[i].brush().color().name() for i in view.node_items}
    assert len(fills) >= 4  # three types and Anna's own
    assert {"Person", "City", "Food"} <= {text for _, text in view.legend}
    # no name covers another, nor a relation's name on its line
    from PySide6.QtCore import QPointF, QRectF

    def box(anchor):
        return QRectF(anchor.childrenBoundingRect()).translated(
            QPointF(view.mapFromScene(anchor.scenePos())))

    shown = [box(d.label) for d in view.node_items.values() if d.label.isVisible()]
    shown += [box(a) for a in view.edge_labels if a.isVisible()]
    assert not any(a.intersects(b) for n, a in enumerate(shown) for b in shown[n + 1:])
    labelled = {i for i, dot in view.node_items.items() if dot.label.isVisible()}
    assert browser.current in labelled and len(labelled) < 15
    friend = next(i for i, dot in view.node_items.items()
                  if dot.toolTip().startswith("Friend 07"))
    assert friend in labelled  # the most mentioned keeps its label
    # labels keep their size whatever the zoom: readable when the picture is fitted
    label = view.node_items[browser.current].label
    assert label.deviceTransform(view.viewportTransform()).m11() == pytest.approx(1.0)

    # moving through the picture moves the list and the details with it
    chosen = step_to_a_neighbour(qtbot, view, (Qt.Key.Key_Right, Qt.Key.Key_Down,
                                               Qt.Key.Key_Left, Qt.Key.Key_Up))
    if chosen >= 0:  # a group is no node: the list and details stay
        qtbot.waitUntil(lambda: not window.host.busy and browser.details.node["id"] == chosen)
        assert browser.list.currentIndex().data(Qt.ItemDataRole.UserRole + 1) == chosen
    assert label.isVisible()

    # Enter on a group opens it where it is; its first member is selected
    people = next(g for g in view.groups.values() if g["type"] == "Person")
    view.select(people["id"])
    qtbot.keyClick(view, Qt.Key.Key_Return)
    assert len(view.node_items) == 5 - 1 + 8 and view.selected == people["members"][0]
    # every node stands out from the background, untyped ones too, in either theme
    base = view.palette().color(view.backgroundRole())
    for dot in view.node_items.values():
        assert abs(dot.brush().color().lightness() - base.lightness()) > 40


def test_merge_picks_the_target_by_typing_and_shows_the_kept_node(qtbot, crowded,
                                                                  open_window, monkeypatch):
    window = open_window(crowded)
    window.open_graph()
    browser = window.browser
    qtbot.waitUntil(lambda: not window.host.busy and browser.model.rowCount() > 0)
    names = [browser.model.index(r, 0).data() for r in range(browser.model.rowCount())]
    browser.list.selectRow(names.index("小明"))
    qtbot.waitUntil(lambda: not window.host.busy and browser.details.node["name"] == "小明")
    chosen = []

    def pick(picker):
        picker.show()
        picker.query.setText("anna")
        qtbot.waitUntil(lambda: picker.results.count() > 0 and not window.host.busy)
        chosen.append(picker.results.item(0).text())
        picker.accept()
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(NodePicker, "exec", pick)
    window.registry.actions["node.merge"].trigger()
    assert chosen and chosen[0].startswith("Anna")
    qtbot.waitUntil(lambda: not window.host.busy and browser.details.node is not None
                    and browser.details.node["name"] == "Anna")
    assert "does not exist" not in window.toast.current()
    assert "小明" not in [browser.model.index(r, 0).data()
                          for r in range(browser.model.rowCount())]
    assert any(e["relation"] == "喜欢" for e in browser.details.edges.rows)


def test_a_fresh_memory_says_how_it_fills_and_columns_fit_the_names(qtbot, home,
                                                                    open_window):
    window = open_window(home)
    window.open_graph()
    browser = window.browser
    qtbot.waitUntil(lambda: not window.host.busy and browser.empty_hint.isVisible())
    assert "Tell the assistant about yourself" in browser.empty_hint.text()
    browser.add_fact({"subject": "Xiao Ming's older sister", "relation": "lives in",
                      "object": "Shanghai"})
    qtbot.waitUntil(lambda: not window.host.busy and browser.model.rowCount() == 2)
    assert not browser.empty_hint.isVisible()
    metrics = browser.list.fontMetrics()
    assert browser.list.columnWidth(0) >= metrics.horizontalAdvance("Xiao Ming's older sister")
    browser.list.setColumnWidth(0, 333)
    window.close()
    qtbot.waitUntil(lambda: not window.host.thread.isRunning())
    again = open_window(home)
    assert again.browser.list.columnWidth(0) == 333  # the person's width is remembered


def test_add_fact_dialog_is_wide_enough_for_its_hints(qtbot):
    dialog = FactDialog.to_add("Anna")
    qtbot.addWidget(dialog)
    dialog.show()
    for field in dialog.findChildren(QLineEdit):
        hint = field.placeholderText()
        assert field.width() >= field.fontMetrics().horizontalAdvance(hint) + 8, hint


def test_the_status_bar_says_review_is_done_when_nothing_waits(qtbot, home, open_window):
    window = open_window(home)
    qtbot.waitUntil(lambda: window.status.review_label.text() == "Nothing to review")


def test_review_says_task_links_in_words_and_the_person_by_name(qapp):
    from app.graph.review import change_text
    from core import i18n

    change = {"summary": "", "lines": [
        {"verb": "added", "table": "edges", "text": "Book flights NEXT_TASK Reserve ryokan",
         "subject": "Book flights", "relation": "NEXT_TASK", "object": "Reserve ryokan"},
        {"verb": "added", "table": "edges", "text": "User plays cello", "subject": "User",
         "relation": "plays", "object": "cello"}]}
    assert change_text(change).splitlines() == [
        "+ added: Book flights then Reserve ryokan", "+ added: User plays cello"]
    try:
        i18n.set_language("zh_CN")
        assert "你 plays cello" in change_text(change)
        assert "NEXT_TASK" not in change_text(change)
    finally:
        i18n.set_language("en")


def test_a_search_that_finds_nothing_says_why(qtbot, home, open_window):
    window = open_window(home)
    window.open_graph()
    browser = window.browser
    browser.add_fact({"subject": "User", "relation": "lives in", "object": "Berlin"})
    qtbot.waitUntil(lambda: not window.host.busy and browser.model.rowCount() == 2)
    browser.search.setText("zebra")
    qtbot.waitUntil(lambda: not window.host.busy and browser.empty_hint.isVisible())
    said = browser.empty_hint.text()
    assert '"zebra"' in said and "meaning" in said  # what was searched, and why not found
    assert not browser.list.isVisible()
    browser.search.setText("Berl")
    qtbot.waitUntil(lambda: not window.host.busy and browser.model.rowCount() > 0)
    assert not browser.empty_hint.isVisible() and browser.list.isVisible()
    window.close()
