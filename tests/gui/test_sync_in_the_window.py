"""Settings › Sync in the window: start a set, show the code another device joins with,
Sync now brings that device's memory in, and the status bar says when it synced."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox

from app.dialogs.settings import SettingsDialog
from core.protocol.packets import PacketType
from core.store import GraphStore
from core.sync.service import DeviceSync
from core.tools.executor import ToolExecutor
from tests.gui.conftest import wait_turn, when_shown
from tests.gui.test_window import type_and_send


def test_start_join_from_another_device_and_sync_now(qtbot, open_window, home, tmp_path):
    window = open_window(home)
    dialog = SettingsDialog(window.host, window.config, window)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.tabs.setCurrentIndex(dialog.tabs.count() - 1)
    page = dialog.sync_page
    qtbot.waitUntil(lambda: not page.before.isHidden(), timeout=10000)
    page.start_button.click()  # no folder yet: says what is missing, sends nothing
    assert page.result.text() == "Choose the shared folder first."
    shared = tmp_path / "Sync"
    page.folder.setText(str(shared))
    page.device_name.setText("laptop")
    with qtbot.waitSignal(window.host.events.sync, timeout=20000):
        page.start_button.click()
    qtbot.waitUntil(lambda: bool(page.shown_code.text()), timeout=20000)
    assert not page.after.isHidden() and page.before.isHidden()
    assert window.status.sync_label.text().startswith("Synced ")
    code = page.shown_code.text()

    other_home = tmp_path / "desktop"
    other_home.mkdir()
    other = GraphStore(other_home / "graph_memory.db")
    try:
        DeviceSync(other, other_home).join(shared, code, "desktop")
        assert ToolExecutor(other).execute("memory_commit", {"triplets": [
            {"subject": "User", "relation": "lives in", "object": "Hangzhou"}]},
            actor="user")["success"]
        DeviceSync(other, other_home).write()
    finally:
        other.close()

    with qtbot.waitSignal(window.host.events.memory_changed, timeout=20000):
        page.sync_button.click()
    qtbot.waitUntil(lambda: "arrived" in page.result.text(), timeout=20000)
    assert page.result.text().startswith("Synced: sent 0 changes; ")
    qtbot.waitUntil(lambda: page.devices.count() == 1 and "desktop" in
                    page.devices.item(0).text(), timeout=10000)
    assert "1 file applied" in page.devices.item(0).text()

    when_shown(QMessageBox, lambda box: box.button(QMessageBox.StandardButton.Yes).click())
    with qtbot.waitSignal(window.host.events.sync, timeout=20000):
        page.leave_button.click()
    qtbot.waitUntil(lambda: not page.before.isHidden(), timeout=10000)
    assert page.result.text() == "This device no longer syncs."
    assert window.status.sync_label.text() == ""
    assert not (home / "sync.key").exists()


def test_what_came_from_another_device_names_it_and_large_ids_work(qtbot, open_window,
                                                                    home, tmp_path):
    """Ids numbered in a device's range lie above 2**31: the Memory tab, the node's
    Changes (naming the device) and the trace all carry them."""
    shared = tmp_path / "Sync"
    other_home = tmp_path / "desktop"
    other_home.mkdir()
    window = open_window(home)
    answers = []
    window.host.send(PacketType.SYNC_START, {"folder": str(shared), "name": "laptop"},
                     answers.append)
    qtbot.waitUntil(lambda: bool(answers), timeout=20000)
    other = GraphStore(other_home / "graph_memory.db")
    try:
        DeviceSync(other, other_home).join(shared, answers[0]["data"]["code"], "desktop")
        ToolExecutor(other).execute("memory_commit", {"triplets": [
            {"subject": "Ann", "relation": "is sister of", "object": "User"}]}, actor="user")
        DeviceSync(other, other_home).write()
    finally:
        other.close()
    with qtbot.waitSignal(window.host.events.memory_changed, timeout=20000):
        window.setup.sync_now()
    trace = window.trace
    qtbot.waitUntil(lambda: any("desktop" in t.heading() for t in trace.turns),
                    timeout=10000)
    browser = window.browser
    window.tabs.setCurrentWidget(browser)
    qtbot.waitUntil(lambda: "Ann" in [browser.model.index(r, 0).data()
                                      for r in range(browser.model.rowCount())],
                    timeout=10000)
    names = [browser.model.index(r, 0).data() for r in range(browser.model.rowCount())]
    browser.list.selectRow(names.index("Ann"))
    qtbot.waitUntil(lambda: (browser.details.node or {}).get("name") == "Ann",
                    timeout=10000)
    node_id = browser.details.node["id"]
    assert node_id > 2 ** 31
    browser.view.node_selected.emit(node_id)  # the picture's signal carries it whole
    rows = browser.details.history
    qtbot.waitUntil(lambda: rows.rowCount() > 0, timeout=10000)
    assert "on desktop" in rows.index(0, 1).data()


def test_a_turn_that_remembers_is_written_for_the_other_devices(qtbot, open_window, home,
                                                                llm, tmp_path):
    """End to end: a message in the window, the model remembers a fact, and without
    anyone pressing Sync the fact is in the folder; another device applies it."""
    llm.play({"tool_calls": [{"name": "memory_commit", "arguments": {"triplets": [
        {"subject": "User", "relation": "likes", "object": "green tea"}]}}]},
        {"text": "Noted."})
    window = open_window(home)
    shared = tmp_path / "Sync"
    answers = []
    window.host.send(PacketType.SYNC_START, {"folder": str(shared), "name": "laptop"},
                     answers.append)
    qtbot.waitUntil(lambda: bool(answers), timeout=20000)
    device = answers[0]["data"]["device"]
    qtbot.waitUntil(lambda: not window.host.busy, timeout=10000)  # read again, renumbered
    before = len(list((shared / device).glob("0*.tmsync")))
    with qtbot.waitSignal(window.host.events.sync, timeout=30000):
        type_and_send(qtbot, window, "I like green tea")
    wait_turn(qtbot, window)
    assert len(list((shared / device).glob("0*.tmsync"))) == before + 1  # the turn's
    other_home = tmp_path / "desktop"
    other_home.mkdir()
    other = GraphStore(other_home / "graph_memory.db")
    try:
        DeviceSync(other, other_home).join(shared, answers[0]["data"]["code"], "desktop")
        assert other.query("SELECT t.name FROM edges e JOIN nodes t ON t.id = e.target_id"
                           " WHERE e.relation = 'likes'") == [{"name": "green tea"}]
    finally:
        other.close()
