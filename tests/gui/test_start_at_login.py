"""Settings' "Start TrulyMEM when I log in": the checkbox shows whether the autostart entry
exists, OK writes it (starting this program on this data folder) or removes it through the
backend, and Cancel changes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtWidgets import QDialogButtonBox

from app.dialogs.settings import SettingsDialog
from core import desktop_files
from core.protocol.packets import PacketType

pytestmark = pytest.mark.skipif(not desktop_files.SUPPORTED, reason="XDG desktops only")


def current_config(qtbot, window) -> dict[str, Any]:
    answers: list[dict[str, Any]] = []
    window.host.send(PacketType.GET_CONFIG, None, answers.append)
    qtbot.waitUntil(lambda: bool(answers))
    assert answers[0]["success"], answers[0]
    return answers[0]["data"]


def settings(qtbot, window) -> SettingsDialog:
    dialog = SettingsDialog(window.host, current_config(qtbot, window), window)
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def press(qtbot, dialog: SettingsDialog, button: QDialogButtonBox.StandardButton) -> None:
    with qtbot.waitSignal(dialog.finished, timeout=10000):
        dialog.buttons.button(button).click()


def test_the_checkbox_writes_and_removes_the_autostart_entry(qtbot, open_window, home,
                                                             tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    entry = tmp_path / "config" / "autostart" / "trulymem.desktop"
    window = open_window(home)

    dialog = settings(qtbot, window)
    assert not dialog.start_at_login.isChecked()
    dialog.start_at_login.click()
    press(qtbot, dialog, QDialogButtonBox.StandardButton.Cancel)
    assert not entry.exists()  # Cancel changes nothing

    dialog = settings(qtbot, window)
    dialog.start_at_login.click()
    press(qtbot, dialog, QDialogButtonBox.StandardButton.Ok)
    keys = dict(line.split("=", 1) for line in entry.read_text().splitlines() if "=" in line)
    assert keys["Exec"].split(" ")[0] == desktop_files.program_command()[0]
    assert keys["Exec"].endswith(f" --home {home}")  # this data folder, not the default
    assert desktop_files.starts_at_login()

    dialog = settings(qtbot, window)
    assert dialog.start_at_login.isChecked()  # read back from the file
    dialog.start_at_login.click()
    press(qtbot, dialog, QDialogButtonBox.StandardButton.Ok)
    assert not entry.exists()
    assert not settings_checked(qtbot, window)


def settings_checked(qtbot, window) -> bool:
    dialog = settings(qtbot, window)
    checked = dialog.start_at_login.isChecked()
    press(qtbot, dialog, QDialogButtonBox.StandardButton.Cancel)
    return checked
