"""Importing past conversations in the window: what will be sent is said first, the
build runs while the window answers, its progress sits in the status bar, the imported
conversations are marked in the sidebar, and Undo import takes the facts back."""

from __future__ import annotations

import json
import re

import pytest
from PySide6.QtWidgets import QInputDialog, QMessageBox

from app.chat.sidebar import HtmlRole
from core.config import Config, save_config
from core.testing.remembering_model import RememberingModel
from tests.gui.conftest import when_shown

SESSIONS = {
    "speaker_a": "Ada", "speaker_b": "Ben",
    "session_1_date_time": "10:00 am on 8 May, 2023",
    "session_1": [{"speaker": "Ada", "dia_id": "D1:1", "text": "I live in Paris, Ben."},
                  {"speaker": "Ben", "dia_id": "D1:2", "text": "I work as a baker."}],
    "session_2_date_time": "4:30 pm on 20 June, 2023",
    "session_2": [{"speaker": "Ada", "dia_id": "D2:1", "text": "News: I moved to Rome."}]}


@pytest.fixture
def model():
    server = RememberingModel()
    yield server
    server.close()


def test_conversations_are_imported_built_and_taken_back(qtbot, open_window, tmp_path,
                                                         model):
    home = tmp_path / "home"
    home.mkdir()
    save_config(home / "config.json", Config(api_key="sk-gui-test-000000",
                                             base_url=model.base_url, model="local-model"))
    export = tmp_path / "locomo.json"
    export.write_text(json.dumps([{"sample_id": "inv", "qa": [], "conversation": SESSIONS}]),
                      "utf-8")
    window = open_window(home)
    asked: list[str] = []

    def build(box: QMessageBox) -> None:
        asked.append(box.informativeText())
        next(b for b in box.buttons() if b.text() == "Build memory").click()

    when_shown(QMessageBox, build)
    window.history_import.import_file(str(export))
    qtbot.waitUntil(lambda: "memory is built" in window.toast.current(), timeout=30000)
    assert "2 conversations" in asked[0] and model.base_url in asked[0]
    assert not window.history_import.status.isVisible()
    items = [window.conversations.sidebar.list.item(i)
             for i in range(window.conversations.sidebar.list.count())]
    marks = [item.data(HtmlRole) or "" for item in items]
    assert sum("Imported · 2023-" in mark for mark in marks) == 2
    # one meaning of "facts": what stands in the memory, in the toast, the status bar and
    # Undo import alike (Paris was written, then replaced by Rome)
    built = window.toast.current()
    written = int(re.search(r"(\d+) facts? written", built).group(1))
    now = re.search(r"(\d+) in the memory now \((\d+) replaced", built)
    standing = int(now.group(1)) if now else written
    assert not now or standing + int(now.group(2)) == written
    qtbot.waitUntil(lambda: window.status.memory_label.text().startswith(
        f"Memory: {standing} facts"))

    # Review dates each fact by when it was said, and says who said it
    window.registry.actions["memory.review"].trigger()
    review = window.browser.review
    qtbot.waitUntil(lambda: review.model.invisibleRootItem().rowCount() > 0)
    root = review.model.invisibleRootItem()
    heads = [root.child(g).text() for g in range(root.rowCount())]
    assert all(h.startswith("2023-") and "in an imported conversation" in h for h in heads)
    assert any("Ada said" in h for h in heads), heads
    window.tabs.setCurrentIndex(0)

    when_shown(QInputDialog, lambda dialog: dialog.accept())
    window.history_import.undo()
    qtbot.waitUntil(lambda: "Took back" in window.toast.current(), timeout=20000)
    assert f"the {standing} facts it wrote" in window.toast.current()


def test_a_file_that_is_not_an_export_is_refused_with_nothing_kept(qtbot, open_window,
                                                                   home, tmp_path):
    window = open_window(home)
    notes = tmp_path / "notes.json"
    notes.write_text('{"notes": []}', "utf-8")
    said: list[str] = []

    def read(box: QMessageBox) -> None:
        said.append(box.text())
        box.accept()

    when_shown(QMessageBox, read)
    window.history_import.import_file(str(notes))
    qtbot.waitUntil(lambda: bool(said), timeout=20000)
    assert said[0].startswith("Nothing was imported")
