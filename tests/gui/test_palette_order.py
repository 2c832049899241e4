"""The palette and the shortcut list read like the menu bar, in every language: they
listed actions in the order the window bound them, which read as random (in Chinese
most of all, where the English menu names no longer hinted at the grouping)."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QWidget

from app.actions import MENUS, SPECS, ActionRegistry
from app.dialogs.palette import ActionRole, CommandPalette
from core import i18n


@pytest.mark.parametrize("language", [i18n.ENGLISH, i18n.CHINESE])
def test_actions_are_listed_menu_by_menu_whatever_order_they_were_bound_in(qtbot, language):
    try:
        i18n.set_language(language)
        window = QWidget()
        qtbot.addWidget(window)
        registry = ActionRegistry(window)
        for spec in reversed(SPECS):  # bound in any order
            registry.bind(spec.name, lambda: None)
        names = [spec.name for spec, _action in registry.ordered()]
        english_menu = {spec.name: spec.menu for spec in SPECS}
        ranks = [MENUS.index(english_menu[name]) for name in names]
        assert ranks == sorted(ranks)  # File, Chat, View, Memory, Help
        assert names[0] == "app.settings" and english_menu[names[-1]] == "Help"
        within = [n for n in names if english_menu[n] == "File"]
        assert within == [s.name for s in SPECS if s.menu == "File"]  # the menu's order
        palette = CommandPalette(registry, window)
        shown = [palette.proxy.index(row, 0).data(ActionRole).objectName()
                 for row in range(palette.proxy.rowCount())]
        assert shown == names
        if language == i18n.CHINESE:
            assert palette.proxy.index(0, 0).data().startswith("文件")
    finally:
        i18n.set_language(i18n.ENGLISH)
