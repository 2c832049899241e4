"""The window in Chinese: every surface is opened and every word a person can read on it
(labels, buttons, menus, tabs, headers, placeholders, tooltips, accessible names, combo
items) is checked for English left over. The memory and the chat hold Chinese only, so
what is English is the program's own. The same walk in English finds no Chinese."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QComboBox,
    QDockWidget,
    QGroupBox,
    QLabel,
    QLineEdit,
    QMenu,
    QMessageBox,
    QPlainTextEdit,
    QTabBar,
    QTextEdit,
    QWidget,
)

from app.dialogs.settings import SettingsDialog
from core import i18n
from core.config import Config, load_config, save_config
from tests.gui.conftest import wait_turn, when_shown
from tests.gui.surfaces import fill, open_surfaces

# Names, products, formats and keys that stay as they are in a Chinese app.
KEEP = {w.lower() for w in """
    TrulyMEM DeepSeek OpenAI llama cpp Ollama Studio API URL MCP JSON GraphML Gephi yEd
    Claude Desktop Cursor Cherry HTTP HTTPS SQLite Markdown Ctrl Shift Alt Meta Esc Enter
    Return Tab Del Backspace PgUp PgDown Home End Space Ins Up Down Left Right Bearer
    Authorization pip sk deepseek chat test model User Noto Emoji Linux macOS Windows
    token English Syncthing Nextcloud Dropbox Qwen Coder Instruct
    """.split()}
# Quoted config keys ("shortcuts"), commands as typed (`sudo apt-get install cmake`) and
# another app's own menu path (Settings › Developer), which the person must find as that
# app writes it.
QUOTED = re.compile(r'"[^"]*"|`[^`]*`|[A-Za-z][A-Za-z ]*(?:\s*›\s*[A-Za-z][A-Za-z ]*)+')
LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z'’]{2,}")
TAG = re.compile(r"<[^>]+>")
NOT_WORDS = re.compile(r"\S*(?:://|/|\\|_|\.\w)\S*")  # paths, addresses, identifiers


def english_in(text: str) -> list[str]:
    text = NOT_WORDS.sub(" ", QUOTED.sub(" ", TAG.sub(" ", text or "").replace("&amp;", "&")))
    return [w for w in LATIN_WORD.findall(text) if w.lower() not in KEEP]


def texts_of(widget: QWidget) -> list[tuple[str, str]]:
    """What a person can read on `widget` itself, as (what, text)."""
    found = [("tooltip", widget.toolTip()), ("accessible name", widget.accessibleName())]
    if widget.isWindow():
        found.append(("title", widget.windowTitle()))
    if isinstance(widget, QLabel):
        found.append(("label", widget.text()))
    if isinstance(widget, QAbstractButton):
        found.append(("button", widget.text()))
    if isinstance(widget, QLineEdit):
        found.append(("placeholder", widget.placeholderText()))
    if isinstance(widget, (QPlainTextEdit, QTextEdit)):
        found.append(("placeholder", widget.placeholderText()))
    if isinstance(widget, QComboBox) and not widget.isEditable():
        found += [("choice", widget.itemText(i)) for i in range(widget.count())]
    if isinstance(widget, QTabBar):
        found += [("tab", widget.tabText(i)) for i in range(widget.count())]
    if isinstance(widget, QGroupBox):
        found.append(("group", widget.title()))
    if isinstance(widget, QDockWidget):
        found.append(("dock", widget.windowTitle()))
    if isinstance(widget, QAbstractSpinBox):
        found += [("spin box", widget.specialValueText())]
        found += [("suffix", getattr(widget, "suffix", lambda: "")())]
    header = getattr(widget, "horizontalHeader", getattr(widget, "header", None))
    if isinstance(widget, QAbstractItemView) and header is not None and \
            widget.model() is not None and not header().isHidden():
        model = widget.model()
        found += [("header", str(model.headerData(c, Qt.Orientation.Horizontal) or ""))
                  for c in range(model.columnCount(QModelIndex()))]
    if isinstance(widget, QMenu):
        found += menu_texts(widget)
    return found


def menu_texts(menu: QMenu) -> list[tuple[str, str]]:
    found = [("menu", menu.title())]
    for action in menu.actions():
        tip = action.toolTip()
        found += [("menu item", action.text()),
                  ("tip", tip if tip != action.text().replace("&", "") else "")]
        if action.menu() is not None:
            found += menu_texts(action.menu())
    return found


def leftovers(root: QWidget, surface: str, check=english_in) -> list[str]:
    """Every visible widget under `root` (and `root`), with the words `check` finds."""
    problems = []
    for widget in [root, *root.findChildren(QWidget)]:
        if widget is not root and not widget.isVisibleTo(root):
            continue
        for what, text in texts_of(widget):
            bad = check(text)
            if bad:
                problems.append(f"{surface} · {type(widget).__name__} "
                                f"{widget.objectName() or ''} {what}: {text!r} ({bad})")
    return problems


def english_menu(menu: QMenu) -> list[str]:
    return [f"menu · {w}: {t!r}" for w, t in menu_texts(menu) if english_in(t)]


@pytest.fixture
def chinese_home(tmp_path, llm):
    home = tmp_path / "home"
    home.mkdir()
    save_config(home / "config.json", Config(
        api_key="sk-gui-test-000000", base_url=llm.base_url, model="test-model",
        language="zh_CN", recall_by_meaning=False))
    return home


def test_every_word_of_the_window_is_chinese(qtbot, open_window, chinese_home, in_language,
                                            llm):
    in_language("zh_CN")
    window = open_window(chinese_home)
    fill(qtbot, window)
    llm.play({"tool_calls": [{"name": "memory_commit", "arguments": {"triplets": [
        {"subject": "我", "relation": "在学", "object": "大提琴"}]}}]}, {"text": "好的。"})
    window.turns.send("我在学大提琴")
    wait_turn(qtbot, window)
    problems = open_surfaces(qtbot, window, leftovers, english_menu)
    trace = window.trace
    problems += [f"trace heading: {t.heading()!r}" for t in trace.turns
                 if english_in(t.heading().split("—")[0])]  # after the dash: the message
    assert problems == [], f"{len(problems)} English texts:\n" + "\n".join(problems)


def test_the_english_window_has_no_chinese_left(qtbot, open_window, home, in_language):
    in_language("en")
    window = open_window(home)

    def chinese_in(text: str) -> list[str]:
        return re.findall(r"[\u4e00-\u9fff]+", TAG.sub(" ", text or ""))

    problems = open_surfaces(qtbot, window,
                             lambda root, where: leftovers(root, where, chinese_in),
                             lambda menu: [f"menu · {w}: {t!r}" for w, t in menu_texts(menu)
                                           if chinese_in(t)])
    # the language's own name in the picker, "search in English or 中文", the examples
    # that say facts may be Chinese ("e.g. likes, lives in, 喜欢", the empty Memory tab's
    # "我喜欢绿茶", seen now that its list loads at start), and this test's own
    # Chinese samples (a node, a fact, a file name)
    allowed = {"简体中文", "中文", "喜欢", "上海", "杭州", "我", "住在", "记忆", "我喜欢绿茶"}
    problems = [p for p in problems if not all(w in allowed for w in
                                               re.findall(r"[\u4e00-\u9fff]+", p))]
    assert problems == []


def test_choosing_chinese_in_the_settings_changes_the_words(qtbot, open_window, home,
                                                            in_language):
    in_language("en")
    window = open_window(home)
    assert window.tabs.tabText(0) == "Chat"
    dialog = SettingsDialog(window.host, dict(window.config), window)
    dialog.language.setCurrentIndex(dialog.language.findData("zh_CN"))
    told = []

    when_shown(QMessageBox, lambda box: (told.append(box.text()), box.accept()))
    dialog.save()
    qtbot.waitUntil(lambda: bool(told), timeout=10000)
    assert "next time" in told[0]
    assert window.isVisible()  # nothing was closed or lost: it applies at the next start
    window.close()
    assert load_config(home / "config.json")[0].language == "zh_CN"
    in_language(load_config(home / "config.json")[0].language)  # as trulymem does at start
    again = open_window(home)
    assert again.tabs.tabText(0) == i18n.tr("Chat") != "Chat"


def test_what_the_memory_did_is_said_in_chinese(qapp):
    """The approval card's list, a node's Changes and the trace's results are built from
    the structured results, not from the English the model reads."""
    from app.chat.approval import preview_line
    from app.graph.details import said_change
    from app.trace.model import TraceCall, said_in_words

    try:
        i18n.set_language("zh_CN")
        assert preview_line({"verb": "deleted", "text": "用户 -名叫-> 小明"}) == \
            "已删除：用户 -名叫-> 小明"
        change = {"summary": "renamed 'nurse' to 'registered nurse'", "lines": [
            {"verb": "renamed", "table": "nodes", "text": "护士 → 注册护士"},
            {"verb": "added", "table": "edges", "text": "x", "subject": "User",
             "relation": "是", "object": "注册护士"}]}
        said = said_change(change)
        assert english_in(said) == [] and "护士 → 注册护士" in said, said
        call = TraceCall("memory_commit", {}, "Committed: 3 new, 0 reinforced.",
                         counts={"created": 3, "reinforced": 0})
        assert said_in_words(call) == "记住 3 条，强化 0 条"
    finally:
        i18n.set_language("en")


def test_refusals_and_tasks_are_said_in_chinese(qapp):
    from app.graph.details import DetailsPanel
    from app.trace.model import TraceCall, refused_words

    try:
        i18n.set_language("zh_CN")
        call = TraceCall("memory_commit", {}, rejected="Tool call rejected: memory_commit "
                         "would exceed the memory update limit of 10 per turn", why="limit")
        assert english_in(refused_words(call)) == [], refused_words(call)
        panel = DetailsPanel()
        panel.show_details({"node": {"id": 1, "name": "订机票", "kind": "task", "type": "Task",
                                     "mention_count": 1, "created_at": 0, "updated_at": 0,
                                     "state": None,
                                     "deleted_at": None, "description": None},
                            "edges": [], "history": []})
        shown = " ".join(label.text() for label in panel.findChildren(QLabel))
        assert "Task" not in shown and "任务" in shown, shown
        panel.deleteLater()
    finally:
        i18n.set_language("en")
