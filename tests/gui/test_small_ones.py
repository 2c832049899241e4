"""Small things a person sees in the chat and the settings: an emoji leaves no gap before
the punctuation after it, an error reply is a whole sentence, wrapped, ‹ 2/2 › follows
the time instead of floating in the header, and a model's name never breaks at a hyphen."""

from __future__ import annotations

from PySide6.QtGui import QFont, QFontMetrics, QTextDocument, QTextLayout
from PySide6.QtWidgets import QStyleOptionViewItem

from app.chat.delegate import error_words, header_width
from app.chat.model import ChatMessage, ChatModel
from app.chat.pane import ChatPane
from app.looks.text_marks import JOINER, join_emoji_to_punctuation, plain, unbroken_at_hyphens


def fonts_of(text: str) -> set[str]:
    """The fonts a line of `text` is drawn in, with the marks the chat adds."""
    document = QTextDocument()
    document.setPlainText(text)
    join_emoji_to_punctuation(document)
    layout = QTextLayout(document.firstBlock().text(), QFont())
    layout.beginLayout()
    layout.createLine().setLineWidth(2000)
    layout.endLayout()
    return {run.rawFont().familyName() for run in layout.glyphRuns()}


def test_the_punctuation_after_an_emoji_is_in_the_text_font(qapp):
    document = QTextDocument()
    document.setMarkdown("Done ✅. Noted 🍵! Code `x ✅.` stays")
    join_emoji_to_punctuation(document)
    document.setTextWidth(2000)
    text = document.toPlainText()
    assert "✅\u2060. Noted 🍵\u2060!" in text
    assert "`" not in text and "x ✅." in text  # inline code as written
    # the text's font and the emoji's: no third (monospaced) fallback for the "."
    assert fonts_of("Done ✅. Noted 🍵! Yes ✅, and") == fonts_of("Done ✅ Noted 🍵 Yes ✅ and")
    assert plain(text) == "Done ✅. Noted 🍵! Code x ✅. stays"

    fenced = QTextDocument()
    fenced.setMarkdown("```\nprint('✅.')\n```\n")
    join_emoji_to_punctuation(fenced)
    assert JOINER not in fenced.toPlainText()


def test_a_model_name_does_not_break_at_its_hyphen(qapp):
    said = unbroken_at_hyphens("Connected: deepseek-v4-flash answers, 2 models listed")
    assert plain(said) == "Connected: deepseek-v4-flash answers, 2 models listed"
    font = QFont()
    metrics = QFontMetrics(font)
    whole = metrics.horizontalAdvance("Connected: deepseek-v4-flash")
    for width in range(whole - metrics.horizontalAdvance("v4-flash"), whole + 4, 3):
        layout = QTextLayout(said, font)
        layout.beginLayout()
        lines = []
        while True:
            line = layout.createLine()
            if not line.isValid():
                break
            line.setLineWidth(width)
            lines.append(said[line.textStart():line.textStart() + line.textLength()])
        layout.endLayout()
        assert not any(plain(line).rstrip().endswith("-") for line in lines), (width, lines)


def make_pane(qtbot, *messages):
    model = ChatModel()
    pane = ChatPane(model)
    qtbot.addWidget(pane)
    pane.resize(520, 600)
    pane.show()
    for message in messages:
        model.append(message)
    view = pane.view
    qtbot.waitUntil(lambda: view.visualRect(model.index(len(messages) - 1)).height() > 0)
    return pane, model, view


def layout_of(view, model, row):
    option = QStyleOptionViewItem()
    view.initViewItemOption(option)
    option.rect = view.visualRect(model.index(row))
    return option, view.delegate.layout(option, model.messages[row])


def test_an_error_reply_is_a_whole_sentence_wrapped(qtbot):
    error = ("the API failed (500: upstream model overloaded, every worker is busy), still "
             "after retries: try again later")
    _pane, model, view = make_pane(qtbot, ChatMessage("user", "hi", turn_id="t1"),
                            ChatMessage("assistant", "", error=error, partial=True,
                                        turn_id="t1"))
    option, parts = layout_of(view, model, 1)
    assert error_words(error).startswith("⚠ The API failed")
    assert error_words(error).endswith("try again later")  # whole: nothing cut with "…"
    line = QFontMetrics(option.font).height()
    assert parts.error_line.height() >= 2 * line  # wrapped to the bubble's width
    assert parts.error_line.right() <= parts.bubble.right()
    assert parts.bubble.bottom() >= parts.error_line.bottom()


def test_the_version_marks_follow_the_time(qtbot):
    reply = ChatMessage("assistant", "second answer", turn_id="t1",
                        versions=[{"content": "first answer", "created_at": 0}])
    _pane, model, view = make_pane(qtbot, ChatMessage("user", "hi", turn_id="t1"), reply)
    option, parts = layout_of(view, model, 1)
    rects = {name: rect for rect, name in parts.actions}
    header_end = round(parts.body_top_left.x()) + header_width(reply, option.font)
    assert header_end < rects["older"].left() < header_end + 2 * QFontMetrics(
        option.font).height()
    assert rects["older"].right() < rects["position"].left() <= rects["newer"].left()
    assert rects["newer"].right() < rects["copy"].left()  # the hover actions stay right
    assert rects["delete"].right() <= parts.bubble.right()


def test_a_short_form_keeps_its_natural_size_and_grows_for_an_error(qtbot):
    """A resizable dialog gets the window manager's resize handle under its buttons
    (openbox draws a double line there); a form of a few fields keeps the size its
    content asks for, as a message box does."""
    from app.dialogs.ask_text import TextDialog
    from app.dialogs.limits import LimitsDialog
    from app.graph.fact_form import FactDialog
    from core.tools.limits import DEFAULT_LIMITS

    limits = LimitsDialog(None, dict(DEFAULT_LIMITS))
    for dialog in (TextDialog(None, "Rename conversation", "Title:", "Tea"), limits,
                   FactDialog.to_add("Anna")):
        qtbot.addWidget(dialog)
        assert dialog.minimumSize() == dialog.maximumSize() == dialog.size()
        assert dialog.size().expandedTo(dialog.sizeHint()) == dialog.size()  # nothing cut
    width, height = limits.width(), limits.height()
    limits._saved({"success": False, "error": "the memory is open for reading only, "
                   "because another copy of TrulyMEM holds it; close that one first"})
    assert limits.width() == width and limits.height() > height
    assert limits.error.height() >= limits.error.heightForWidth(limits.error.width())
