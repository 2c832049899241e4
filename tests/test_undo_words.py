"""Undo and redo say what they took back or brought back, in the person's language: an
undo that only lowered a count said "Nothing visible", in English, in the Chinese window."""

from __future__ import annotations

from core import i18n
from core.protocol.packets import PacketType
from tests.test_review import ask, backend  # noqa: F401  (the fixture)

COMMIT = {"tool_name": "memory_commit", "arguments": {"triplets": [
    {"subject": "Anna", "relation": "likes", "object": "tea"}]}}


def test_an_undo_that_changed_only_a_count_says_what_it_took_back(backend):  # noqa: F811
    dispatcher = backend()
    ask(dispatcher, PacketType.EXECUTE_TOOL, COMMIT)
    ask(dispatcher, PacketType.EXECUTE_TOOL, COMMIT)  # said again: only counted
    undone = ask(dispatcher, PacketType.UNDO)
    assert undone["lines"] == []  # nothing a person would see changed…
    assert undone["message"] == "Undid: reinforced “Anna likes tea”"  # …but it says what
    redone = ask(dispatcher, PacketType.REDO)
    assert redone["message"] == "Redid: reinforced “Anna likes tea”"


def test_undo_and_redo_speak_chinese_in_a_chinese_window(backend):  # noqa: F811
    dispatcher = backend()
    ask(dispatcher, PacketType.EXECUTE_TOOL, COMMIT)
    try:
        i18n.set_language("zh_CN")
        undone = ask(dispatcher, PacketType.UNDO)
        redone = ask(dispatcher, PacketType.REDO)
    finally:
        i18n.set_language("en")
    for said, start in ((undone["message"], "已撤销："), (redone["message"], "已重做：")):
        assert said.startswith(start) and "Anna likes tea" in said, said
        assert not any(word in said for word in ("Undid", "Redid", "added", "visible")), said


def test_a_correction_says_what_it_did_in_chinese_and_logs_it_in_english(backend):  # noqa: F811
    dispatcher = backend()
    ask(dispatcher, PacketType.EXECUTE_TOOL, COMMIT)
    edge = dispatcher.backend.store.query_one("SELECT id FROM edges")["id"]
    try:
        i18n.set_language("zh_CN")
        edited = ask(dispatcher, PacketType.CORRECT_MEMORY, {"action": "edit_fact",
                     "arguments": {"edge_id": edge, "subject": "Anna", "relation": "likes",
                                   "object": "green tea"}})
    finally:
        i18n.set_language("en")
    assert edited["summary"] == "已将“Anna likes tea”改为“Anna likes green tea”"
    logged = dispatcher.backend.store.change(edited["change_id"])["summary"]
    assert logged == "changed 'Anna likes tea' to 'Anna likes green tea'"
