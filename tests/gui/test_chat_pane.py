"""The chat pane as people live in it: text shown as typed, a view that follows what is
sent, rows that never overlap at any width, stopped replies that stay "stopped"."""

from __future__ import annotations

import itertools

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QStyleOptionViewItem

from app.chat.code_blocks import code_rects
from app.chat.model import ChatMessage
from core.config import Config, save_config
from core.protocol.packets import Packet, PacketType
from tests.conftest import make_dispatcher
from tests.gui.conftest import a_reply_regenerated, wait_turn

LONG = ("A long reply that wraps over many lines when the window is narrow. " * 30).strip()


def fill(window, count: int, text: str = "message") -> None:
    for i in range(count):
        window.chat.append(ChatMessage("user" if i % 2 == 0 else "assistant", f"{text} {i}"))


def test_the_persons_line_breaks_are_shown_as_typed(qtbot, open_window, home):
    window = open_window(home)
    window.chat.append(ChatMessage("user", "first line\nsecond line\n    indented third"))
    view = window.pane.view
    option = QStyleOptionViewItem()
    view.initViewItemOption(option)
    body = view.delegate.layout(option, window.chat.messages[0]).body
    assert body.blockCount() == 3
    assert body.toPlainText() == "first line\nsecond line\n    indented third"


def test_sending_scrolls_to_the_end_and_streaming_does_not_yank_a_reader(qtbot, open_window,
                                                                         home, llm):
    window = open_window(home)
    fill(window, 60)
    view = window.pane.view
    bar = view.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0)
    view.scrollTo(window.chat.index(3))  # as "Go to message" does
    qtbot.waitUntil(lambda: bar.value() < bar.maximum() - 100)
    assert view.jump.isVisible() and view.jump.text() == "↓ Jump to latest"
    llm.play({"text": "Here is the answer. " * 40, "chunk_delay": 0.002})
    window.turns.send("a question")
    wait_turn(qtbot, window)
    qtbot.waitUntil(lambda: bar.value() == bar.maximum())
    assert not view.jump.isVisible()
    # Scrolled up while a reply streams: the view stays put, the button counts the news.
    llm.play({"text": "Another long answer. " * 60, "chunk_delay": 0.01})
    window.turns.send("another")
    qtbot.waitUntil(lambda: window.chat.messages[-1].content != "")
    view.scrollTo(window.chat.index(5))
    qtbot.waitUntil(lambda: not view._follow)
    held = bar.value()
    wait_turn(qtbot, window)
    assert bar.value() == held
    assert view.jump.isVisible() and "(1 new message)" in view.jump.text()
    view.jump.click()
    qtbot.waitUntil(lambda: bar.value() == bar.maximum())
    assert not view.jump.isVisible()


def test_rows_never_overlap_after_the_width_changes(qtbot, open_window, home):
    window = open_window(home)
    window.resize(1600, 1000)
    for _ in range(3):
        window.chat.append(ChatMessage("assistant", LONG))
        window.chat.append(ChatMessage("user", "short"))
    view = window.pane.view
    view.scrollToBottom()
    def laid_out_right() -> bool:
        option = QStyleOptionViewItem()
        view.initViewItemOption(option)
        for row in range(window.chat.rowCount() - 1):
            this = view.visualRect(window.chat.index(row))
            below = view.visualRect(window.chat.index(row + 1))
            option.rect = this
            needed = view.delegate.layout(option, window.chat.messages[row]).height
            if this.height() < needed or this.bottom() >= below.top():
                return False
        return True

    for width in (1600, 1100, 800, 1300):
        window.resize(width, 1000)
        qtbot.waitUntil(laid_out_right, timeout=3000)
    window.resize(1600, 1000)
    window.trace_dock.show()  # the dock takes width from the conversation
    qtbot.waitUntil(laid_out_right, timeout=3000)


def test_a_stopped_reply_still_reads_stopped_after_a_restart(qtbot, open_window, home):
    dispatcher = make_dispatcher(home / "graph_memory.db", home / "config.json")
    dispatcher.backend.open()
    dispatcher.handle(Packet.make(PacketType.SAVE_HISTORY, {"messages": [
        {"role": "user", "content": "tell me a story"},
        {"role": "assistant", "content": "Once upon", "partial": True}]}))
    dispatcher.backend.close()
    window = open_window(home)
    reply = window.chat.messages[-1]
    assert reply.error is None and reply.partial


CODE_REPLY = ("Try this:\n\n```python\ndef double(x):\n    return x * 2  # "
              + "a very long comment " * 20 + "\n```\n\nDone.")


def test_a_code_block_is_tinted_wrapped_coloured_and_copyable(qtbot, open_window, home):
    window = open_window(home)
    window.resize(900, 700)
    window.chat.append(ChatMessage("assistant", CODE_REPLY))
    view = window.pane.view
    qtbot.waitUntil(lambda: view.visualRect(window.chat.index(0)).height() > 0)
    option = QStyleOptionViewItem()
    view.initViewItemOption(option)
    option.rect = view.visualRect(window.chat.index(0))
    parts = view.delegate.layout(option, window.chat.messages[0])
    body = parts.body
    [code] = body.code_blocks
    assert code.language == "python" and code.text.startswith("def double(x):")
    first = body.findBlockByNumber(code.first)
    [tinted] = code_rects(body, body.code_blocks)  # the delegate paints the tint here
    assert tinted.height() > 2 * first.layout().lineCount() and tinted.width() > 0
    colours = {first.begin().fragment().charFormat().foreground().color().name()}
    fragment = first.begin()
    while not fragment.atEnd():
        colours.add(fragment.fragment().charFormat().foreground().color().name())
        fragment += 1
    assert len(colours) > 1  # "def" is coloured unlike the name after it
    # The long line wraps inside the bubble instead of running out of it.
    long_line = body.findBlockByNumber(code.last)
    assert long_line.layout().lineCount() > 1
    assert body.size().width() <= parts.bubble.width()
    rect, copied = parts.copies[0]
    assert copied == code.text
    with qtbot.waitSignal(view.code_copied):
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert QGuiApplication.clipboard().text() == code.text


def test_part_of_a_message_can_be_selected_with_the_mouse_and_copied(qtbot, open_window,
                                                                      home):
    window = open_window(home)
    window.resize(1000, 700)
    window.chat.append(ChatMessage("assistant", "alpha beta gamma delta"))
    view = window.pane.view
    index = window.chat.index(0)
    qtbot.waitUntil(lambda: view.visualRect(index).height() > 0)
    option = QStyleOptionViewItem()
    view.initViewItemOption(option)
    option.rect = view.visualRect(index)
    body = view.delegate.body_rect(option, window.chat.messages[0])
    layout = view.delegate.layout(option, window.chat.messages[0]).body.documentLayout()

    def at(position: int):
        cursor_rect = layout.blockBoundingRect(layout.document().begin())
        line = layout.document().begin().layout().lineAt(0)
        x = line.cursorToX(position)[0]
        return body.topLeft() + QPoint(round(x), round(cursor_rect.top() + line.height() / 2))

    start, end = at(6), at(16)  # "beta gamma"
    qtbot.mousePress(view.viewport(), Qt.MouseButton.LeftButton, pos=start)
    qtbot.mouseMove(view.viewport(), end)
    qtbot.mouseRelease(view.viewport(), Qt.MouseButton.LeftButton, pos=end)
    editor = view.indexWidget(index)
    assert editor is not None and editor.textCursor().selectedText() == "beta gamma"
    qtbot.keyClick(editor, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == "beta gamma"


def test_a_message_can_be_selected_with_the_keyboard(qtbot, open_window, home):
    window = open_window(home)
    window.chat.append(ChatMessage("user", "line one\nline two"))
    view = window.pane.view
    view.setFocus()
    view.setCurrentIndex(window.chat.index(0))
    qtbot.keyClick(view, Qt.Key.Key_Return)
    editor = view.indexWidget(window.chat.index(0))
    assert editor is not None and editor.hasFocus()
    qtbot.keyClick(editor, Qt.Key.Key_Down, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClick(editor, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == "line one\n"
    qtbot.keyClick(editor, Qt.Key.Key_Escape)
    assert view.indexWidget(window.chat.index(0)) is None and view.hasFocus()


@pytest.mark.slow
def test_retry_replaces_the_failed_turn_and_takes_back_what_it_wrote(qtbot, open_window,
                                                                      home, llm):
    window = open_window(home)
    llm.play({"tool_calls": [{"name": "memory_commit", "arguments": {"triplets": [
        {"subject": "User", "relation": "likes", "object": "tea"}]}}]},
        *[{"status": 500, "message": "overloaded"}] * 3, {"text": "Hello!"})
    window.turns.send("hi, I like tea")
    wait_turn(qtbot, window)
    assert window.chat.messages[-1].error and window.registry.actions["chat.retry"].isEnabled()
    window.turns.retry()
    wait_turn(qtbot, window)
    assert [(m.role, m.content, m.error) for m in window.chat.messages] == [
        ("user", "hi, I like tea", None), ("assistant", "Hello!", None)]
    dispatcher = make_dispatcher(home / "graph_memory.db", home / "config.json")
    dispatcher.backend.open()
    try:
        history = dispatcher.handle(Packet.make(PacketType.GET_HISTORY)).data["history"]
        assert [m["role"] for m in history] == ["user", "assistant"]
        assert dispatcher.backend.store.query("SELECT * FROM edges WHERE status = 'active'") == []
    finally:
        dispatcher.backend.close()


def test_two_lines_of_chinese_fit_the_message_box_without_a_scroll_bar(qtbot, open_window,
                                                                        home):
    window = open_window(home)
    box = window.pane.input
    box.setPlainText("我最近在学日语，想去京都旅行。\n你能帮我安排一下行程吗？")
    qtbot.waitUntil(lambda: box.height() == box.sizeHint().height())
    assert box.verticalScrollBar().maximum() == 0


def test_links_stay_readable_in_a_dark_palette():
    from PySide6.QtGui import QColor, QPalette

    from app.looks.contrast import ratio, readable

    palette = QPalette()
    palette.setColor(QPalette.ColorRole.Base, QColor("#111111"))
    palette.setColor(QPalette.ColorRole.Link, QColor("#0000aa"))
    fixed = readable(palette)
    assert ratio(fixed.color(QPalette.ColorRole.Link), QColor("#111111")) >= 4.5
    assert fixed.color(QPalette.ColorRole.Link).hue() == QColor("#0000aa").hue()


def test_the_first_window_fits_the_screen_and_the_status_bar_elides(qtbot, open_window,
                                                                     home):
    window = open_window(home)
    screen = window.screen().availableGeometry()
    assert window.width() <= screen.width() and window.height() <= screen.height()
    assert window.width() >= 0.6 * min(screen.width(), 1400)
    window.status.tokens_label.setText("Tokens: last 123,456 · session 9,876,543")
    window.resize(800, 500)
    qtbot.waitUntil(lambda: window.width() <= 820)
    parts = [window.status.state_label, window.status.endpoint_label, window.status.tokens_label,
             window.status.memory_label]
    bar = window.statusBar()

    def span(part):  # in the status bar (the lasting parts sit in a row of their own)
        left = part.mapTo(bar, part.rect().topLeft()).x()
        return left, left + part.width() - 1

    qtbot.waitUntil(lambda: all(span(p)[1] <= bar.width() for p in parts))
    spans = sorted(span(p) for p in parts if p.isVisibleTo(bar))  # the tokens give way
    assert all(a[1] < b[0] for a, b in itertools.pairwise(spans))  # side by side
    assert window.status.tokens_label.toolTip() == "Tokens: last 123,456 · session 9,876,543"


def test_the_memory_line_says_what_a_turn_did_and_opens_it(qtbot, open_window, home, llm):
    window = open_window(home)
    llm.play({"tool_calls": [
        {"name": "memory_commit", "arguments": {"triplets": [
            {"subject": "User", "relation": "likes", "object": "tea"},
            {"subject": "User", "relation": "lives in", "object": "Oslo"}]}},
        {"name": "memory_recall", "arguments": {"query_intent": "tea"}}]},
        {"text": "Noted."})
    window.turns.send("I like tea and live in Oslo")
    wait_turn(qtbot, window)
    reply = window.chat.messages[-1]
    assert reply.memory_note.startswith("Remembered 2") and "Recalled" in reply.memory_note
    view = window.pane.view
    index = window.chat.index(window.chat.rowCount() - 1)
    qtbot.waitUntil(lambda: view.visualRect(index).height() > 0)
    option = QStyleOptionViewItem()
    view.initViewItemOption(option)
    option.rect = view.visualRect(index)
    note = view.delegate.layout(option, reply).memory_note
    assert note is not None
    with qtbot.waitSignal(view.memory_note_clicked):
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=note.center())
    qtbot.waitUntil(lambda: window.trace_dock.isVisible()
                    and window.trace_dock.selected_turn() == reply.turn_id)
    qtbot.waitUntil(lambda: len(window.browser.model.changed) >= 3)  # User, tea, Oslo
    # After a restart the line is rebuilt from the history.
    window.close()
    again = open_window(home)
    assert again.chat.messages[-1].memory_note == reply.memory_note


def active_facts(home) -> list[str]:
    dispatcher = make_dispatcher(home / "graph_memory.db", home / "config.json")
    dispatcher.backend.open()
    try:
        return [r["name"] for r in dispatcher.backend.store.query(
            "SELECT t.name FROM edges e JOIN nodes t ON t.id = e.target_id"
            " WHERE e.status = 'active' ORDER BY t.name")]
    finally:
        dispatcher.backend.close()


def commit_step(thing: str) -> dict:
    return {"tool_calls": [{"name": "memory_commit", "arguments": {"triplets": [
        {"subject": "User", "relation": "likes", "object": thing}]}}]}


def test_regenerate_takes_back_what_the_old_reply_wrote(qtbot, open_window, home, llm):
    window = open_window(home)
    llm.play(commit_step("coffee"), {"text": "You like coffee."},
             commit_step("tea"), {"text": "You like tea."})
    window.turns.send("what do I like, coffee or tea? (I said tea)")
    wait_turn(qtbot, window)
    assert active_facts(home) == ["coffee"]
    window.registry.actions["chat.regenerate"].trigger()
    assert "taken back" in window.toast.current()
    wait_turn(qtbot, window)
    assert [(m.role, m.content) for m in window.chat.messages] == [
        ("user", "what do I like, coffee or tea? (I said tea)"),
        ("assistant", "You like tea.")]
    assert active_facts(home) == ["tea"]  # the discarded reply's coffee is gone


def test_regenerating_a_reply_that_wrote_nothing_says_nothing(qtbot, open_window, home, llm):
    window = open_window(home)
    a_reply_regenerated(qtbot, window, llm)
    assert window.chat.messages[-1].content == "Maybe Leafy?"
    assert window.toast.current() == ""  # nothing was taken back, so nothing is said


def test_edit_last_message_resends_it_in_place_of_the_old_exchange(qtbot, open_window,
                                                                    home, llm):
    window = open_window(home)
    llm.play(commit_step("Rome"), {"text": "Rome, noted."},
             commit_step("Paris"), {"text": "Paris, noted."})
    window.turns.send("I live in Rome")
    wait_turn(qtbot, window)
    window.pane.input.setPlainText("a draft of my next question")
    window.registry.actions["chat.edit_last"].trigger()
    editor = window.pane.view.editor_of_edit()
    assert editor is not None and editor.text.toPlainText() == "I live in Rome"
    assert editor.text.hasFocus() or not window.isActiveWindow()
    editor.text.setPlainText("I live in Paris")
    qtbot.keyClick(editor.text, Qt.Key.Key_Return)
    wait_turn(qtbot, window)
    assert [m.content for m in window.chat.messages] == ["I live in Paris", "Paris, noted."]
    assert active_facts(home) == ["Paris"]
    assert window.pane.input.toPlainText() == "a draft of my next question"  # left alone


def test_the_edit_note_is_whole_beside_the_tool_trace(qtbot, open_window, home, llm):
    window = open_window(home)
    window.resize(1280, 850)
    window.trace_action.trigger()
    llm.play({"text": "Noted."}, {"text": "Noted again."}, {"text": "And again."})
    for said in ("I live in Rome", "I like tea", "I play the cello"):
        window.turns.send(said)
        wait_turn(qtbot, window)
    view = window.pane.view
    view.start_edit(0)
    editor = view.editor_of_edit()
    qtbot.waitUntil(lambda: editor.isVisible() and editor.note.width() > 1)
    note = editor.note
    assert note.width() >= editor.width() - 2 * editor.layout().spacing()  # its own row
    assert note.height() >= note.heightForWidth(note.width())  # no line cut off
    assert editor.send.geometry().top() >= note.geometry().bottom()
    qtbot.keyClick(editor.text, Qt.Key.Key_Escape)


def test_esc_leaves_an_edit_and_nothing_changes(qtbot, open_window, home, llm):
    window = open_window(home)
    llm.play(commit_step("Rome"), {"text": "Rome, noted."}, {"text": "A new answer."})
    window.turns.send("I live in Rome")
    wait_turn(qtbot, window)
    view = window.pane.view
    view.start_edit(0)
    editor = view.editor_of_edit()
    editor.text.setPlainText("something else")
    qtbot.keyClick(editor.text, Qt.Key.Key_Escape)
    assert view.editor_of_edit() is None and view.delegate.edit_message is None
    assert [m.content for m in window.chat.messages] == ["I live in Rome", "Rome, noted."]
    # a new message afterwards is a new exchange, never a silent replacement
    window.turns.send("What is the weather?")
    wait_turn(qtbot, window)
    assert [m.content for m in window.chat.messages] == [
        "I live in Rome", "Rome, noted.", "What is the weather?", "A new answer."]
    assert active_facts(home) == ["Rome"]


def test_editing_an_earlier_message_goes_on_from_there(qtbot, open_window, home, llm):
    window = open_window(home)
    llm.play(commit_step("Rome"), {"text": "Rome, noted."}, commit_step("jazz"),
             {"text": "Jazz, noted."}, commit_step("Oslo"), {"text": "Oslo, noted."})
    window.turns.send("I live in Rome")
    wait_turn(qtbot, window)
    window.turns.send("I like jazz")
    wait_turn(qtbot, window)
    view = window.pane.view
    view.run_action(0, "edit")  # the hover action on the first message
    editor = view.editor_of_edit()
    assert "and the 1 after it" in editor.note.text()
    editor.text.setPlainText("I live in Oslo")
    qtbot.mouseClick(editor.send, Qt.MouseButton.LeftButton)
    wait_turn(qtbot, window)
    assert [m.content for m in window.chat.messages] == ["I live in Oslo", "Oslo, noted."]
    assert active_facts(home) == ["Oslo"]  # Rome and jazz were taken back


def test_deleting_an_exchange_keeps_what_the_memory_learned(qtbot, open_window, home, llm):
    window = open_window(home)
    llm.play(commit_step("jazz"), {"text": "Jazz, noted."}, {"text": "Hello."})
    window.turns.send("I like jazz")
    wait_turn(qtbot, window)
    window.turns.send("hi")
    wait_turn(qtbot, window)
    first = window.chat.messages[0].turn_id
    window.turns.delete_turn(first)
    qtbot.waitUntil(lambda: len(window.chat.messages) == 2)
    assert [m.content for m in window.chat.messages] == ["hi", "Hello."]
    assert active_facts(home) == ["jazz"]
    assert "Ctrl+Z" in window.toast.current()
    view = window.pane.view
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: len(window.chat.messages) == 4)
    assert [m.content for m in window.chat.messages] == [
        "I like jazz", "Jazz, noted.", "hi", "Hello."]
    assert active_facts(home) == ["jazz"]  # Ctrl+Z in the chat took back no memory
    window.turns.delete_turn(first)
    qtbot.waitUntil(lambda: len(window.chat.messages) == 2)
    window.close()
    again = open_window(home)
    assert [m.content for m in again.chat.messages] == ["hi", "Hello."]


def test_a_reply_copies_as_text_or_as_markdown(qtbot, open_window, home):
    window = open_window(home)
    window.chat.append(ChatMessage("assistant", "Some **bold** words"))
    view = window.pane.view
    view.setCurrentIndex(window.chat.index(0))
    view.copy_selected()
    assert QGuiApplication.clipboard().text() == "Some bold words"


def test_a_table_header_reads_on_one_line(qtbot, open_window, home):
    window = open_window(home)
    window.chat.append(ChatMessage("assistant", "| Day | City |\n|---|---|\n| 1 | Kyoto |"))
    option = QStyleOptionViewItem()
    window.pane.view.initViewItemOption(option)
    body = window.pane.view.delegate.layout(option, window.chat.messages[0]).body
    [table] = body.rootFrame().childFrames()
    cell = table.cellAt(0, 0)
    assert cell.firstCursorPosition().block().text() == "Day"


def test_a_table_after_a_code_block_keeps_its_bold_header_and_the_code_its_label(qapp):
    from PySide6.QtGui import QFont, QTextDocument, QTextTable

    from app.chat.code_blocks import code_rects, fix_tables, style_code_blocks

    document = QTextDocument()
    document.setMarkdown("Here:\n\n```python\nx = 1\n```\n\n| City | Temp |\n|---|---|\n"
                         "| Oslo | **18°C** |\n")
    fix_tables(document)
    blocks = style_code_blocks(document, dark=False, highlight=True, wrap_chars=80,
                               label_height=16, pad=8)
    document.setTextWidth(400)
    [table] = [f for f in document.rootFrame().childFrames() if isinstance(f, QTextTable)]
    for column in (0, 1):
        header = table.cellAt(0, column).firstCursorPosition()
        header.movePosition(header.MoveOperation.NextCharacter)
        assert header.charFormat().fontWeight() == QFont.Weight.Bold, column
    assert table.format().topMargin() >= 6  # air above the table
    [code] = blocks
    assert code.language == "python"
    first = document.findBlockByNumber(code.first)
    assert first.blockFormat().leftMargin() == 8  # the code does not touch the tint's edge
    top = document.documentLayout().blockBoundingRect(first).top()
    assert code_rects(document, blocks)[0].top() <= top - 16  # a row for the label above


def test_a_regenerated_reply_shows_the_earlier_ones_on_request(qtbot, open_window, home, llm):
    window = open_window(home)
    llm.play({"text": "First joke."}, {"text": "Second joke."})
    window.turns.send("tell me a joke")
    wait_turn(qtbot, window)
    window.turns.regenerate()
    wait_turn(qtbot, window)
    reply = window.chat.messages[-1]
    assert reply.content == "Second joke." and reply.position() == (2, 2)
    row = len(window.chat.messages) - 1
    window.pane.view.run_action(row, "older")  # the ‹ in its header
    assert reply.content == "First joke." and reply.position() == (1, 2)
    assert "earlier reply" in reply.memory_note
    window.pane.view.run_action(row, "newer")
    assert reply.content == "Second joke." and reply.position() == (2, 2)
    # and after a restart, from the history
    window.close()
    again = open_window(home)
    assert again.chat.messages[-1].position() == (2, 2)
    again.pane.view.run_action(len(again.chat.messages) - 1, "older")
    assert again.chat.messages[-1].content == "First joke."


def test_a_small_models_memory_is_written_after_its_reply_and_its_line_follows(
        qtbot, open_window, home, llm):
    """The person waits for the reply only: with a small local model the memory-writing
    step runs after the answer is shown; the reply's line and the trace take it in."""
    import json
    import threading

    save_config(home / "config.json", Config(api_key="sk-gui-test-000000",
                                             base_url=llm.base_url, model="local-model"))
    window = open_window(home)
    gate = threading.Event()
    update = {"user_facts": [{"relation": "lives in", "object": "Oslo"}],
              "other_facts": [], "changed_user_facts": [], "forget": [{"object": "a boat"}],
              "new_tasks": [], "finished_tasks": []}
    llm.play({"text": "Oslo is lovely."}, {"hold": gate, "text": json.dumps(update)})
    window.turns.send("I live in Oslo now, and please forget the boat.")
    try:
        qtbot.waitUntil(lambda: not window.turns.running, timeout=20000)
        reply = window.chat.messages[-1]
        assert reply.content == "Oslo is lovely." and not reply.calls  # shown, not written
    finally:
        gate.set()
    qtbot.waitUntil(lambda: bool(window.chat.messages[-1].calls), timeout=20000)
    reply = window.chat.messages[-1]
    assert reply.memory_note.startswith("Remembered 1")
    assert reply.content.endswith("[Nothing in the memory matched “a boat”, so nothing was "
                                  "forgotten]")
    turn = window.trace.turns[-1]
    assert turn.turn_id == reply.turn_id and [c.name for c in turn.calls] == ["memory_commit"]
    wait_turn(qtbot, window)
    window.close()
    again = open_window(home)  # kept with the reply
    assert again.chat.messages[-1].memory_note == reply.memory_note
    assert again.chat.messages[-1].content == reply.content


def test_a_reply_shows_the_time_the_history_keeps(qtbot, open_window, home, llm):
    """Stamped when it ended, as stored: a long reply's time no longer moves on restart."""
    window = open_window(home)
    llm.play({"text": "A slow answer.", "delay": 1.5})
    window.turns.send("take your time")
    wait_turn(qtbot, window)
    got = []
    window.host.send(PacketType.GET_HISTORY, None, got.append)
    qtbot.waitUntil(lambda: bool(got))
    stored = got[0]["data"]["history"][-1]
    assert stored["content"] == "A slow answer."
    assert abs(window.chat.messages[-1].created_at - stored["created_at"]) < 0.5
