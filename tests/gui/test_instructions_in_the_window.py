"""Settings, Instructions: typed by the person (Chinese pasted too), saved with OK into
the config the backend reads, shown again next time; Tab leaves the box."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDialogButtonBox

from tests.gui.test_start_at_login import current_config, press, settings

OWN = "用几个词回答事实问题。Call me Sam."


def test_the_instructions_are_saved_and_shown_again(qtbot, open_window, home):
    window = open_window(home)
    dialog = settings(qtbot, window)
    page = dialog.tabs.indexOf(dialog.instructions.parentWidget())
    dialog.tabs.setCurrentIndex(page)
    dialog.instructions.setFocus()
    QGuiApplication.clipboard().setText(OWN)
    dialog.instructions.paste()
    assert dialog.instructions.accessibleName()  # a screen reader names the box
    qtbot.keyClick(dialog.instructions, Qt.Key.Key_Tab)
    assert not dialog.instructions.hasFocus()  # Tab moves on, it does not type a tab
    press(qtbot, dialog, QDialogButtonBox.StandardButton.Ok)
    qtbot.waitUntil(lambda: current_config(qtbot, window).get("instructions") == OWN)
    again = settings(qtbot, window)
    assert again.instructions.toPlainText() == OWN
    press(qtbot, again, QDialogButtonBox.StandardButton.Cancel)
