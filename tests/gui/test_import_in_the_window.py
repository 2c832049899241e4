"""A large import in the window: progress shows, the window keeps answering, and Cancel
leaves the memory as it was."""

from __future__ import annotations

import threading

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton

from core.protocol.packets import PacketType
from core.testing.sample_export import write_export


def test_a_large_import_shows_progress_and_cancel_changes_nothing(qtbot, open_window, home,
                                                                  tmp_path):
    export = write_export(tmp_path / "big.json", 12_000, 12_000)
    window = open_window(home)
    gate = threading.Event()
    held = threading.Event()

    def hold(event: str, data: dict) -> None:
        """On the backend thread: the import waits here until the person has pressed
        Cancel, so the test never races the import to its end."""
        if event == "import" and data["phase"] == "reading" and not held.is_set():
            held.set()
            gate.wait(60)

    window.host.worker.progress.connect(hold, Qt.ConnectionType.DirectConnection)
    try:
        window.memory.import_memory(str(export))
        qtbot.waitUntil(lambda: window.memory.import_progress is not None
                        and window.memory.import_progress.value() > 0, timeout=20000)
        dialog = window.memory.import_progress
        assert "big.json" in dialog.labelText()
        # The window answers while the backend works.
        window.tabs.setCurrentIndex(1)
        window.tabs.setCurrentIndex(0)
        dialog.findChild(QPushButton).click()
    finally:
        gate.set()
    qtbot.waitUntil(lambda: window.memory.import_progress is None and not window.host.busy,
                    timeout=20000)
    assert "cancelled" in window.toast.current()
    assert window.status.memory_label.text().startswith("Memory: 0")


def test_the_window_reads_the_memory_while_an_import_holds_the_backend(qtbot, open_window,
                                                                       home, tmp_path):
    """The Memory tab's list, the counts and the history are answered on the read lane
    while the backend's worker is inside an import."""
    export = write_export(tmp_path / "big.json", 12_000, 12_000)
    window = open_window(home)
    gate, held = threading.Event(), threading.Event()

    def hold(event: str, data: dict) -> None:
        if event == "import" and data["phase"] == "reading" and not held.is_set():
            held.set()
            gate.wait(60)

    window.host.worker.progress.connect(hold, Qt.ConnectionType.DirectConnection)
    answers: dict = {}
    try:
        window.memory.import_memory(str(export))
        qtbot.waitUntil(held.is_set, timeout=20000)
        for kind in (PacketType.LIST_NODES, PacketType.MEMORY_STATE, PacketType.GET_HISTORY,
                     PacketType.GET_STATUS):
            window.host.send(kind, {}, lambda answer, kind=kind: answers.update({kind: answer}))
        qtbot.waitUntil(lambda: len(answers) == 4, timeout=20000)
        assert not gate.is_set()  # answered while the import was held
    finally:
        gate.set()
    assert all(answer["success"] for answer in answers.values()), answers
    assert answers[PacketType.MEMORY_STATE]["data"]["counts"]["nodes"] == 0
    qtbot.waitUntil(lambda: window.memory.import_progress is None and not window.host.busy,
                    timeout=60000)
    assert "12,000 entities" in window.status.memory_label.text()
