"""The window and every dialog open at a usable size with the fonts desktops have.

With the colour-emoji font among the interface's families Qt settled on it, every glyph
was 2,550 px wide and the window asked for 32,767 px; with a Chinese desktop font the
sizes followed its average glyph width (13 px) and the window could not be narrower than
1,092 px. Each font set here is one a person has: the system's default with the emoji font
installed, Noto Sans, DejaVu Sans, Noto Sans CJK SC (a Chinese desktop) and the emoji font
itself named as the interface font (the alias trap)."""

from __future__ import annotations

import os

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtGui import QFont, QFontDatabase, QFontInfo
from PySide6.QtWidgets import QApplication, QWidget

from app.dialogs.backups import BackupsDialog
from app.dialogs.import_progress import ImportProgress
from app.dialogs.limits import LimitsDialog
from app.dialogs.palette import CommandPalette
from app.dialogs.settings import SettingsDialog
from app.dialogs.shortcuts import ShortcutList
from app.graph.fact_form import FactDialog
from app.graph.node_picker import NodePicker
from app.looks.sizes import char_width, interface_font
from app.startup import gui
from core.protocol.packets import PacketType
from core.tools.limits import DEFAULT_LIMITS
from tests.gui.conftest import wait_turn

SMALL_SCREEN = (800, 500)
FONT_SETS = [None, "DejaVu Sans", "Noto Sans", "Noto Sans CJK SC", "Noto Color Emoji"]
# CI installs the fonts desktops have (.ci/run); elsewhere a missing one is skipped.
REQUIRED = bool(os.environ.get("CI"))


@pytest.fixture
def font_set(request, qapp):
    family = request.param
    original = qapp.font()
    if family is not None:
        if family not in QFontDatabase.families():
            if REQUIRED:
                pytest.fail(f"{family} is not installed: .ci/run installs it")
            pytest.skip(f"{family} is not installed")
        qapp.setFont(QFont(family, 10))
    yield family
    qapp.setFont(original)


def answer_of(qtbot, host, kind, body=None):
    got = []
    host.send(kind, body, got.append)
    qtbot.waitUntil(lambda: bool(got), timeout=10000)
    assert got[0]["success"], got[0]
    return got[0]["data"]


def every_dialog(qtbot, window) -> list[QWidget]:
    host = window.host
    config = answer_of(qtbot, host, PacketType.GET_CONFIG)
    backups = answer_of(qtbot, host, PacketType.LIST_BACKUPS)
    line = {"subject": "User", "relation": "lives in", "object": "上海"}
    dialogs = [SettingsDialog(host, config, window), LimitsDialog(host, DEFAULT_LIMITS, window),
               BackupsDialog(host, backups, window), ShortcutList(window.registry, window),
               CommandPalette(window.registry, window), FactDialog.to_add("User", window),
               FactDialog.to_edit(line["subject"], line["relation"], line["object"], window),
               NodePicker(host, "Merge User into which node?", parent=window),
               ImportProgress("memory.json", window)]
    for dialog in dialogs:
        qtbot.addWidget(dialog)
    return dialogs


@pytest.mark.parametrize("font_set", FONT_SETS, indirect=True)
def test_no_window_or_dialog_asks_for_more_than_a_small_screen(qtbot, open_window, home,
                                                                font_set):
    window = open_window(home)
    assert "emoji" not in QFontInfo(QApplication.font()).family().lower()
    too_big = []
    for widget in [window, *every_dialog(qtbot, window)]:
        widget.ensurePolished()
        hint = widget.minimumSizeHint().expandedTo(widget.minimumSize())
        if hint.width() > SMALL_SCREEN[0] or hint.height() > SMALL_SCREEN[1]:
            too_big.append(f"{type(widget).__name__}: {hint.width()}x{hint.height()}")
        opened = widget.sizeHint()
        if opened.width() > 4 * SMALL_SCREEN[0]:
            too_big.append(f"{type(widget).__name__} opens {opened.width()} px wide")
    assert too_big == [], f"with {font_set or 'the system font'}: {too_big}"
    window.resize(*SMALL_SCREEN)
    qtbot.waitUntil(lambda: (window.width(), window.height()) == SMALL_SCREEN)


@pytest.mark.parametrize("font_set", FONT_SETS, indirect=True)
def test_a_character_is_a_few_pixels_wide_in_every_font(qapp, font_set):
    font = interface_font(qapp.font())
    assert 3 <= char_width(font) <= 12, QFontInfo(font).family()


def test_the_emoji_font_is_never_the_interface_font(qapp):
    if "Noto Color Emoji" not in QFontDatabase.families():
        if REQUIRED:
            pytest.fail("Noto Color Emoji is not installed: .ci/run installs it")
        pytest.skip("Noto Color Emoji is not installed")
    trap = QFont(qapp.font())
    trap.setFamilies(["Sans Serif", "Noto Color Emoji"])  # what the old start-up set
    assert QFontInfo(trap).family() == "Noto Color Emoji"  # the trap is real
    chosen = interface_font(trap)
    assert "emoji" not in QFontInfo(chosen).family().lower()
    original = qapp.font()
    qapp.setFont(trap)
    try:
        app = gui.make_application()
        assert "emoji" not in QFontInfo(app.font()).family().lower()
    finally:
        qapp.setFont(original)


@pytest.mark.parametrize("width", [800, 1600])
def test_a_confirmation_is_on_screen_whole_at_any_width(qtbot, open_window, home, llm,
                                                        width):
    window = open_window(home)
    llm.play({"text": "A reply long enough to be read. " * 12})
    window.turns.send("hello")
    wait_turn(qtbot, window)
    window.resize(width, 500 if width == 800 else 1000)
    qtbot.waitUntil(lambda: window.width() == width)
    text = ("Exchange deleted from the conversation; the memory keeps what it learned "
            "(Ctrl+Alt+Z takes that back).")
    window.notify(text, 8000)
    toast = window.toast
    assert toast.current() == text
    view, box = window.pane.view, window.pane.input

    def placed_on_its_own() -> bool:
        """Laid out: whole, and covering neither the newest message nor the input."""
        placed = QRect(toast.mapTo(window, QPoint(0, 0)), toast.size())
        return toast.height() >= toast.heightForWidth(toast.width()) and not any(
            placed.intersects(QRect(w.mapTo(window, QPoint(0, 0)), w.size()))
            for w in (view, box))

    qtbot.waitUntil(placed_on_its_own)
    placed = QRect(toast.mapTo(window, QPoint(0, 0)), toast.size())
    assert toast.isVisible() and window.rect().contains(placed)
    assert not placed.intersects(window.statusBar().geometry())
    assert toast.width() < width  # its own place in the window, not the status bar's


def test_rows_and_boxes_are_sized_for_chinese_and_their_titles(qtbot, qapp):
    from PySide6.QtGui import QFont, QFontDatabase, QFontMetrics
    from PySide6.QtWidgets import QWidget

    from app.dialogs.ask_text import TextDialog, ask_text
    from app.looks.sizes import line_height
    from tests.gui.conftest import when_shown

    font = QFont("DejaVu Sans", 10)
    # Chinese falls back to a taller font: a row holds it
    if {"DejaVu Sans", "Noto Sans CJK SC"} <= set(QFontDatabase.families()):
        assert line_height(font) > QFontMetrics(font).height()
    parent = QWidget()
    qtbot.addWidget(parent)
    seen = []

    def look(box: TextDialog) -> None:
        seen.append((box.width(), box.fontMetrics().horizontalAdvance(box.windowTitle())))
        box.reject()

    when_shown(TextDialog, look)
    assert ask_text(parent, "Rename conversation", "Title:", "A long conversation title")[1] \
        is False
    width, title = seen[0]
    assert width >= title + 4 * QFontMetrics(parent.font()).height()


def test_the_message_box_hint_never_wraps(qtbot):
    from app.chat.input_box import InputBox

    box = InputBox()
    qtbot.addWidget(box)
    for width in (300, 1200):
        box.resize(width, box.sizeHint().height())
        box.show()
        qtbot.waitExposed(box)
        room = box.viewport().width() - 2 * box.document().documentMargin()
        assert box.fontMetrics().horizontalAdvance(box.placeholderText()) <= room or \
            box.placeholderText() == "Message TrulyMEM"
    assert "Enter" in box.placeholderText()  # wide: the keys' hint
