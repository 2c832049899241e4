"""Every save in the window confirms the same way: a toast that goes away by itself, never
a status-bar line that stays ("Settings saved" stayed until the next turn)."""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QDialog

from app.dialogs.limits import LimitsDialog
from app.dialogs.settings import SettingsDialog


def change_and_save(qtbot, kind, change):
    """Waits for the dialog an action opens, changes it and presses OK; answers the
    dialogs it filled in."""
    seen = []

    def fill():
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, kind):
            QTimer.singleShot(10, fill)  # polls until it is open
            return
        seen.append(dialog)
        change(dialog)
        dialog.save()

    QTimer.singleShot(0, fill)
    return seen


def confirmed(qtbot, window, words):
    """The toast says `words`, the status bar does not, and the toast goes by itself."""
    qtbot.waitUntil(lambda: window.toast.current() == words, timeout=5000)
    assert window.status.state_label.text() != words
    qtbot.waitUntil(lambda: window.toast.current() == "", timeout=8000)
    assert window.status.state_label.text() != words


def test_saving_settings_and_limits_confirm_alike_and_the_confirmation_goes(
        qtbot, open_window, home):
    window = open_window(home)
    change_and_save(qtbot, SettingsDialog, lambda d: d.trash_days.setValue(12))
    window.setup.open_settings()
    confirmed(qtbot, window, "Settings saved")

    change_and_save(qtbot, LimitsDialog, lambda d: d.boxes["task_query_max"].setValue(7))
    window.setup.open_limits()
    confirmed(qtbot, window, "Tool limits saved")

    # OK with nothing changed saves nothing, and says nothing
    window.toast.hide()
    seen = change_and_save(qtbot, LimitsDialog, lambda d: None)
    window.setup.open_limits()
    qtbot.waitUntil(lambda: bool(seen) and seen[0].result() == QDialog.DialogCode.Accepted)
    assert window.toast.current() == ""


def test_renaming_a_conversation_confirms_like_a_save(qtbot, open_window, home):
    window = open_window(home)
    qtbot.waitUntil(lambda: window.conversations.current is not None)
    window.conversations.rename(window.conversations.current, "Tea plans")
    confirmed(qtbot, window, "Renamed to “Tea plans”")
