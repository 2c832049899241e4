"""A large import in the window: progress shows, the window keeps answering, and Cancel
leaves the memory as it was."""

from __future__ import annotations

import threading

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton

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
