"""Every surface of the window, opened one after another for a test to look at: the chat,
the Memory tab, Review, each settings page, every dialog and the About box. The tests that
read every word in the other language and every accessible name share this walk."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QMenu, QMessageBox, QWidget

from app.dialogs.backups import BackupsDialog
from app.dialogs.import_progress import ImportProgress
from app.dialogs.limits import LimitsDialog
from app.dialogs.local_start import LocalStartDialog
from app.dialogs.palette import CommandPalette
from app.dialogs.settings import LOCAL_PRESET, SettingsDialog
from app.dialogs.shortcuts import ShortcutList
from app.graph.fact_form import FactDialog
from app.graph.node_picker import NodePicker
from core import i18n
from core.protocol.packets import PacketType
from core.tools.limits import DEFAULT_LIMITS
from tests.gui.conftest import when_shown

Look = Callable[[QWidget, str], list[str]]


def fill(qtbot, window) -> None:
    """Chinese memory, written as an app would write it."""
    answers = []
    window.host.send(PacketType.EXECUTE_TOOL, {"tool_name": "memory_commit", "arguments": {
        "triplets": [{"subject": "我", "relation": "住在", "object": "杭州"},
                     {"subject": "小明", "relation": "喜欢", "object": "龙井茶"}]}},
        answers.append)
    qtbot.waitUntil(lambda: bool(answers), timeout=10000)


def open_surfaces(qtbot, window, look: Look,
                  menu_look: Callable[[QMenu], list[str]] | None = None) -> list[str]:
    """`look` at every surface in turn (and `menu_look` at each menu of the bar): the
    problems it finds, each named by where it was seen."""
    problems = look(window, "window (chat)")
    if menu_look is not None:
        for menu in window.menuBar().findChildren(QMenu):
            problems += menu_look(menu)
    window.tabs.setCurrentWidget(window.browser)
    qtbot.waitUntil(window.browser.isVisible, timeout=5000)
    problems += look(window, "memory tab")
    window.open_review()
    problems += look(window, "review")
    window.tabs.setCurrentIndex(0)

    settings = SettingsDialog(window.host, {**window.config, "home": "/tmp/x"}, window)
    settings.show()
    for index in range(settings.tabs.count()):
        settings.tabs.setCurrentIndex(index)
        problems += look(settings, f"settings page {index}")
    settings.sharing.share.setChecked(True)
    problems += look(settings, "settings, sharing on")
    settings.tabs.setCurrentIndex(0)
    settings.choose_preset(LOCAL_PRESET)
    qtbot.waitUntil(lambda: bool(settings.local_models.rows), timeout=5000)
    problems += look(settings, "settings, on this computer")
    settings.close()
    start = LocalStartDialog(window.host, window)
    start.show()
    qtbot.waitUntil(lambda: bool(start.models.rows), timeout=5000)
    start.models.others.setChecked(True)
    problems += look(start, "chat on this computer")
    start.close()
    for dialog in (LimitsDialog(window.host, dict(DEFAULT_LIMITS), window),
                   ShortcutList(window.registry, window), CommandPalette(window.registry, window),
                   BackupsDialog(window.host, {"backups": [], "folder": "/tmp/backups"}, window),
                   FactDialog.to_add("杭州", window),
                   FactDialog.to_edit("我", "住在", "杭州", window),
                   NodePicker(window.host, i18n.tr(
                       "Merge {name} into which node? Its facts move there and this node "
                       "goes away; Undo brings it back.", name="杭州"), None, window),
                   ImportProgress("记忆.json", window)):
        dialog.show()
        problems += look(dialog, type(dialog).__name__)
        dialog.close()

    seen: list[str] = []

    when_shown(QMessageBox, lambda box: (seen.extend(look(box, "about box")), box.accept()))
    window.about()
    return problems + seen
