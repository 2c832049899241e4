"""The person stays in charge in the window: removals over the budget wait for Allow or
Deny in the chat, a whole turn can be undone, the trash is emptied only by the person."""

from __future__ import annotations

import stat

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QPushButton

from app.dialogs.backups import BackupsDialog
from core.store import GraphStore, backups
from core.tools import ToolExecutor
from tests.gui.conftest import wait_turn, when_shown
from tests.test_bad_days import damage

FACTS = 30


def seed(folder) -> None:
    store = GraphStore(folder / "graph_memory.db")
    try:
        assert ToolExecutor(store).execute("memory_commit", {"triplets": [
            {"subject": f"person {i}", "relation": "likes", "object": f"item {i}"}
            for i in range(FACTS)]})["success"]
    finally:
        store.close()


def deleted_facts(folder) -> int:
    store = GraphStore(folder / "graph_memory.db")
    try:
        return store.query_one("SELECT count(*) AS n FROM edges WHERE status = 'deleted'")["n"]
    finally:
        store.close()


PURGE_ALL = {"name": "memory_purge", "arguments": {"criteria": {"relation_type": "likes"},
                                                   "confirm": True}}


def send(qtbot, window, text):
    box = window.pane.input
    box.setFocus()
    box.setPlainText(text)
    qtbot.keyClick(box, Qt.Key.Key_Return)
    wait_turn(qtbot, window)


def test_a_removal_over_the_budget_waits_for_allow_in_the_chat(qtbot, open_window, home,
                                                                 llm):
    seed(home)
    llm.play({"tool_calls": [PURGE_ALL]}, {"text": "I asked you to approve that."})
    window = open_window(home)
    send(qtbot, window, "forget who likes what")
    card = window.pane.approvals
    assert card.isVisible()
    assert card.title.text() == f"The assistant wants to delete {FACTS} memories."
    assert "deleted: person 0 -likes-> item 0" in card.rows.toPlainText()
    assert deleted_facts(home) == 0  # nothing removed while it waits
    # waiting is a question, not a failure: the reply and the trace say so
    reply = window.chat.messages[-1]
    assert reply.memory_note == "1 call waits for you" and "refused" not in reply.memory_note
    [call] = window.trace.turns[-1].calls
    assert not call.rejected and call.waiting_text().startswith("waiting for you")

    qtbot.mouseClick(card.allow, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not card.isVisible() and not window.host.busy, timeout=10000)
    assert deleted_facts(home) == FACTS
    assert "Allowed" in window.toast.current()
    assert window.chat.messages[-1].memory_note == "1 call allowed by you"
    assert call.waiting_text().startswith("allowed by you: ")
    # and so after a restart, from the saved history
    window.close()
    again = open_window(home)
    assert again.chat.messages[-1].memory_note == "1 call allowed by you"
    assert again.trace.turns[-1].calls[0].approval == "allowed"


def test_deny_removes_nothing_and_the_card_comes_back_after_a_restart(qtbot, open_window,
                                                                       home, llm):
    seed(home)
    llm.play({"tool_calls": [PURGE_ALL]}, {"text": "Asked."},
             {"tool_calls": [PURGE_ALL]}, {"text": "Asked again."})
    window = open_window(home)
    send(qtbot, window, "forget everything")
    send(qtbot, window, "really, forget everything")
    assert window.pane.approvals.position.text() == "1 of 2 requests"
    window.close()

    window = open_window(home)
    card = window.pane.approvals
    qtbot.waitUntil(card.isVisible, timeout=10000)
    for left in (1, 0):
        qtbot.mouseClick(card.deny, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda left=left: len(card.pending) == left, timeout=10000)
    assert not card.isVisible()
    assert deleted_facts(home) == 0


def test_undo_this_turn_takes_back_the_turns_changes(qtbot, open_window, home, llm):
    seed(home)
    llm.play({"tool_calls": [
        {"name": "memory_purge", "arguments": {"criteria": {"subject": "person 1"}}},
        {"name": "memory_purge", "arguments": {"criteria": {"subject": "person 2"}}},
        {"name": "memory_commit", "arguments": {"triplets": [
            {"subject": "user", "relation": "moved to", "object": "Shanghai"}]}}]},
        {"text": "Done."})
    window = open_window(home)
    send(qtbot, window, "I moved to Shanghai; forget persons 1 and 2")
    assert deleted_facts(home) == 2
    window.registry.actions["memory.undo_turn"].trigger()
    qtbot.waitUntil(lambda: "Took back 3 memory changes" in
                    window.toast.current(), timeout=10000)
    assert deleted_facts(home) == 0
    store = GraphStore(home / "graph_memory.db")
    try:
        assert store.find_node("Shanghai") is None
    finally:
        store.close()
    # the reply and the trace say its changes were taken back, then and after a restart
    qtbot.waitUntil(lambda: window.chat.messages[-1].memory_note.endswith("taken back"))
    assert window.trace.turns[-1].undone and "taken back" in window.trace.turns[-1].heading()
    window.close()
    again = open_window(home)
    assert again.chat.messages[-1].memory_note.endswith("· taken back")
    assert again.trace.turns[-1].undone


def test_only_the_person_empties_the_trash_after_saying_yes(qtbot, open_window, home):
    seed(home)
    store = GraphStore(home / "graph_memory.db")
    try:
        assert ToolExecutor(store).execute("memory_purge", {"criteria": {
            "subject": "person 3"}})["success"]
    finally:
        store.close()
    window = open_window(home)
    window.tabs.setCurrentWidget(window.browser)
    window.browser.status.setCurrentIndex(3)  # deleted: the trash
    assert window.browser.trash_bar.isVisible()

    asked = []

    def answer(button):
        def click(box):
            asked.append(box.text())
            box.button(button).click()
        return click

    when_shown(QMessageBox, answer(QMessageBox.StandardButton.Cancel))
    qtbot.mouseClick(window.browser.trash_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(asked) == 1, timeout=10000)
    qtbot.waitUntil(lambda: not window.host.busy)
    assert "1 deleted fact" in asked[0] and deleted_facts(home) == 1

    when_shown(QMessageBox, answer(QMessageBox.StandardButton.Yes))
    window.registry.actions["memory.empty_trash"].trigger()
    qtbot.waitUntil(lambda: "Emptied the trash" in window.toast.current(),
                    timeout=10000)
    assert deleted_facts(home) == 0


def test_the_window_settings_file_is_private(qtbot, open_window, home):
    window = open_window(home)
    window.close()
    mode = stat.S_IMODE((home / "window.ini").stat().st_mode)
    assert mode == 0o600


def test_a_damaged_memory_points_to_its_backups_and_restoring_one_works(qtbot, open_window,
                                                                        home):
    seed(home)
    store = GraphStore(home / "graph_memory.db")
    try:
        backups.make_backup(store.conn, home / "backups")
    finally:
        store.close()
    damage(home / "graph_memory.db")
    window = open_window(home)
    notice = window.pane.notice
    assert notice.isVisible() and "damaged" in notice.text.text()
    assert notice.button.text() == "Restore from backup…"

    reported = []

    def restore(dialog):
        assert dialog.model.rowCount() == 1
        assert dialog.model.item(0, 1).text() == f"{FACTS}"
        dialog.restore_selected(confirm=False)
        when_shown(QMessageBox, lambda box: (reported.append(box.text()), box.accept()))

    when_shown(BackupsDialog, restore)
    qtbot.mouseClick(notice.button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(reported), timeout=10000)
    assert "kept as" in reported[0] and f": {FACTS} facts, 0 conversations." in reported[0]
    qtbot.waitUntil(lambda: not notice.isVisible(), timeout=10000)
    qtbot.waitUntil(lambda: f"{FACTS} facts" in window.status.memory_label.text(), timeout=10000)


def test_restoring_asks_once_with_what_is_replaced_and_undo_restore_brings_it_back(
        qtbot, open_window, home):
    seed(home)
    store = GraphStore(home / "graph_memory.db")
    try:
        backups.make_backup(store.conn, home / "backups")
        assert ToolExecutor(store).execute("memory_commit", {"triplets": [
            {"subject": "User", "relation": "plays", "object": "cello"}]})["success"]
    finally:
        store.close()
    window = open_window(home)
    qtbot.waitUntil(lambda: f"{FACTS + 1} facts" in window.status.memory_label.text(),
                    timeout=10000)
    asked: list[str] = []
    told: list[str] = []

    def restore(dialog: BackupsDialog) -> None:
        def answer(box: QMessageBox) -> None:
            asked.append(f"{box.text()}\n{box.informativeText()}")
            assert box.defaultButton() is box.button(QMessageBox.StandardButton.Cancel)
            box.findChild(QPushButton, "restoreConfirm").click()
            when_shown(QMessageBox, undo_it)

        def undo_it(box: QMessageBox) -> None:
            told.append(box.text())
            box.findChild(QPushButton, "undoRestore").click()

        when_shown(QMessageBox, answer)
        dialog.restore_selected()

    when_shown(BackupsDialog, restore)
    window.registry.actions["memory.restore_backup"].trigger()
    qtbot.waitUntil(lambda: bool(told), timeout=10000)
    assert "memory and your conversations" in asked[0]
    assert f"Now: {FACTS + 1} facts, 0 conversations" in asked[0]  # the new chat is empty
    assert f"The backup: {FACTS} facts, 0 conversations" in asked[0]
    assert "undo the restore" in asked[0]
    assert f": {FACTS} facts, 0 conversations." in told[0]
    qtbot.waitUntil(lambda: "Restore undone" in window.toast.current(), timeout=10000)
    qtbot.waitUntil(lambda: f"{FACTS + 1} facts" in window.status.memory_label.text(),
                    timeout=10000)


def test_a_forget_that_reached_past_what_was_asked_waits_with_its_list(qtbot, open_window,
                                                                        home, llm):
    store = GraphStore(home / "graph_memory.db")
    try:
        assert ToolExecutor(store).execute("memory_commit", {"triplets": [
            {"subject": s, "relation": r, "object": o} for s, r, o in (
                ("User", "name", "Lin Wei"), ("User", "works as", "nurse"),
                ("User", "father", "Wang Jun"), ("Wang Jun", "lives in", "Lyon"))]})[
            "success"]
    finally:
        store.close()
    llm.play({"tool_calls": [{"name": "memory_purge", "arguments": {
        "criteria": {"subject": "User"}, "mode": "soft"}}]}, {"text": "Forgotten."})
    window = open_window(home)
    send(qtbot, window, "Forget that my father lives in Lyon.")
    card = window.pane.approvals
    assert card.isVisible()
    assert card.note.text().startswith("That is more than you asked to forget")
    assert "Lin Wei" in card.rows.toPlainText() and "nurse" in card.rows.toPlainText()
    assert deleted_facts(home) == 0
    qtbot.mouseClick(card.deny, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not card.isVisible() and not window.host.busy, timeout=10000)
    assert deleted_facts(home) == 0
