"""Settings say where the API key is kept: in the system keychain (a real Secret Service on
a bus of the test's own), or in the private file, and why."""

from __future__ import annotations

import json

from app.dialogs.settings import SettingsDialog
from tests.test_keychain import KEY, desktop, needs_daemon  # noqa: F401  (a fixture)


def test_without_a_keychain_settings_say_the_key_is_in_a_private_file(qtbot, open_window,
                                                                       home):
    window = open_window(home)
    dialog = SettingsDialog(window.host, window.config, window)
    qtbot.addWidget(dialog)
    assert dialog.key_note.text().startswith(
        "Kept in a file only you can read: no system keychain answered (")
    assert not dialog.key_note.isHidden()


@needs_daemon
def test_with_a_keychain_settings_say_so_and_save_the_key_there(qtbot, open_window, home,
                                                                desktop):  # noqa: F811
    window = open_window(home)  # the file's key moves into the keychain at start
    assert "api_key" not in json.loads((home / "config.json").read_text("utf-8"))
    dialog = SettingsDialog(window.host, window.config, window)
    qtbot.addWidget(dialog)
    assert dialog.key_note.text() == "Kept in the system keychain."
    assert dialog.api_key.text() == "sk-gui-test-000000"  # read back from the keychain
    dialog.api_key.setText(KEY)
    with qtbot.waitSignal(dialog.accepted, timeout=10000):
        dialog.buttons.button(dialog.buttons.StandardButton.Ok).click()
    assert desktop.entries() == {str(home.resolve()): KEY}
    assert "api_key" not in json.loads((home / "config.json").read_text("utf-8"))
