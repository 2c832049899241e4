"""Reading exports of past conversations: ChatGPT's current branch only, Claude's text,
the app's own Markdown back as it was written, LoCoMo one conversation per session in
order; a file that is broken in any way is refused with words that say how; a huge
message is read whole; the file is streamed, never loaded."""

from __future__ import annotations

import io
import json
import time
import zipfile

import pytest

from core.errors import ErrorCode
from core.history_import import readers
from core.history_import.locomo import questions, samples, session_time
from core.history_import.markdown import parse
from core.history_import.readers import PastFormatError, detect, read
from core.store import conversations
from core.store.history import History
from core.store.json_members import NotAnArray, NotJSON, elements
from core.testing.past_exports import (
    LOCOMO_SAMPLE,
    T0,
    big_chatgpt_export,
    chatgpt_conversation,
    chatgpt_export,
    claude_conversation,
    claude_export,
    locomo_export,
    locomo_sample,
)

CHATGPT_SHOWN = [
    ("user", "Hi, I am Mira Kovač. Conversation 0."),
    ("assistant", "Nice to meet you, Mira."),
    ("user", "Here is my cat Pixel."),
    ("assistant", "Pixel looks very happy."),
    ("user", "I moved to Bergen last spring."),
    ("assistant", "Bergen is rainy but lovely."),
]


def said(conversation):
    return [(m.role, m.text) for m in conversation.messages]


def write_json(path, value):
    path.write_text(json.dumps(value, ensure_ascii=False), "utf-8")
    return path


def refusal(path) -> PastFormatError:
    with pytest.raises(PastFormatError) as caught:
        list(read(path))
    return caught.value


# -- elements() --------------------------------------------------------------------------

class Chunks(io.StringIO):
    """A stream handing its text over in the given pieces, counting the reads."""

    def __init__(self, *pieces: str) -> None:
        super().__init__()
        self.pieces, self.reads = list(pieces), 0

    def read(self, _size: int = -1) -> str:
        self.reads += 1
        return self.pieces.pop(0) if self.pieces else ""


def test_elements_hands_over_each_element_before_reading_the_rest():
    stream = Chunks('[{"a": 1},', ' [2, 3], "x", 4.5', "]")
    found = elements(stream)
    assert next(found) == {"a": 1}
    assert stream.reads == 1  # the rest of the array is not read yet
    assert list(found) == [[2, 3], "x", 4.5]
    assert list(elements(io.StringIO(" \n[ ] "))) == []


def test_elements_refuses_a_file_that_is_not_an_array_or_is_broken():
    for text in ('{"a": 1}', "", "hello", "42"):
        with pytest.raises(NotAnArray):
            list(elements(io.StringIO(text)))
    for text in ("[1, 2", "[1 2]", "[1,]", "[1] [2]"):
        with pytest.raises(NotJSON):
            list(elements(io.StringIO(text)))
    with pytest.raises(NotJSON) as said:  # json's "starting at", then ours: "at" once
        list(elements(io.StringIO('[{"a": "no end')))
    assert " at at " not in str(said.value) and "at character" in str(said.value)


def test_elements_takes_its_limit_on_one_value():
    text = '["' + "a" * (3 << 20) + '"]'
    assert len(next(elements(io.StringIO(text)))) == 3 << 20
    with pytest.raises(NotJSON):
        list(elements(io.StringIO(text), max_value_chars=1 << 20))


# -- ChatGPT -----------------------------------------------------------------------------

def test_chatgpt_reads_the_current_branch_and_only_what_was_shown(tmp_path):
    path = chatgpt_export(tmp_path / "conversations.json", conversations=3)
    assert detect(path) == "chatgpt"
    found = list(read(path))
    assert [c.source for c in found] == ["chatgpt:conv-0000", "chatgpt:conv-0001",
                                         "chatgpt:conv-0002"]
    first = found[0]
    assert said(first) == CHATGPT_SHOWN  # no system, tool, hidden, image or old branch
    assert (first.title, first.format, first.speakers) == ("Moving house 0", "chatgpt", None)
    assert (first.created_at, first.updated_at) == (T0, T0 + 480)
    assert [m.created_at for m in first.messages] == [T0 + 60, T0 + 120, T0 + 180, T0 + 300,
                                                      T0 + 420, T0 + 480]
    assert [m.source_id for m in first.messages] == ["c0-m0", "c0-m1", "c0-m2", "c0-m3",
                                                     "c0-m4", "c0-m5"]
    assert found[2].messages[0].text == "Hi, I am Mira Kovač. Conversation 2."


def test_chatgpt_from_a_zip_reads_the_same(tmp_path):
    plain = list(read(chatgpt_export(tmp_path / "conversations.json")))
    zipped = chatgpt_export(tmp_path / "export.zip", zip=True)
    assert detect(zipped) == "chatgpt"
    assert list(read(zipped)) == plain


def test_conversations_json_is_found_in_a_folder_of_the_zip(tmp_path):
    path = tmp_path / "chatgpt-2024-05-01.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("__MACOSX/Export/sub/._conversations.json", b"\x00\x05\x16\x07")
        archive.writestr("Export/sub/conversations.json",
                         json.dumps([chatgpt_conversation(0)]))
    assert said(next(read(path))) == CHATGPT_SHOWN


def test_chatgpt_follows_the_branch_that_was_current(tmp_path):
    conversation = chatgpt_conversation(0)
    conversation["current_node"] = "c0-old-a"  # the person went back to the first version
    old = next(read(write_json(tmp_path / "a.json", [conversation])))
    assert said(old)[-2:] == [("user", "I moved to Oslo last spring."),
                              ("assistant", "Oslo is lovely.")]
    del conversation["current_node"]  # an older export: the last child, the newest edit
    newest = next(read(write_json(tmp_path / "b.json", [conversation])))
    assert said(newest) == CHATGPT_SHOWN


def test_chatgpt_without_branches_and_with_missing_fields(tmp_path):
    plain = chatgpt_conversation(1, branches=False)
    assert said(next(read(write_json(tmp_path / "a.json", [plain]))))[-2][1] == \
        "I moved to Bergen last spring."
    bare = chatgpt_conversation(0)
    for key in ("title", "create_time", "update_time", "id", "conversation_id"):
        del bare[key]
    bare["mapping"]["c0-m0"]["message"]["create_time"] = None
    voice = bare["mapping"]["c0-m2"]["message"]["content"]
    voice["parts"].append({"content_type": "audio_transcription", "text": "It purrs."})
    [found] = read(write_json(tmp_path / "b.json", [bare]))
    assert (found.title, found.created_at, found.updated_at) == ("", None, None)
    assert found.source == "chatgpt:c0-m0"  # the first message's node: stable
    assert found.messages[0].created_at is None
    assert found.messages[2].text == "Here is my cat Pixel.\n\nIt purrs."


def test_a_conversation_with_nothing_shown_is_left_out(tmp_path):
    empty = {"id": "empty", "title": "Nothing", "mapping": {}, "current_node": None}
    path = write_json(tmp_path / "c.json", [empty, chatgpt_conversation(0)])
    assert [c.source for c in read(path)] == ["chatgpt:conv-0000"]


# -- Claude ------------------------------------------------------------------------------

def test_claude_reads_text_or_its_text_blocks(tmp_path):
    path = claude_export(tmp_path / "conversations.json", conversations=2)
    assert detect(path) == "claude"
    first, second = read(path)
    assert first.source == "claude:00000000-0000-4000-8000-000000000000"
    assert second.source == "claude:00000000-0000-4000-8000-000000000001"
    assert (first.title, first.format) == ("Bees 0", "claude")
    assert said(first) == [("user", "Hello, I'm Tomas Lindqvist (0)."),
                           ("assistant", "Hello Tomas!\n\nHow can I help?"),
                           ("user", "I keep bees on my roof."),
                           ("assistant", "Rooftop bees are wonderful.")]
    assert (first.created_at, first.updated_at) == (T0, T0 + 300)
    assert [m.created_at for m in first.messages] == [T0 + 60, T0 + 120, T0 + 240, T0 + 300]
    assert len({m.source_id for m in first.messages}) == 4


def test_claude_times_in_other_iso_forms_and_missing(tmp_path):
    conversation = claude_conversation(0)
    conversation["created_at"] = "2024-05-01T10:00:00+00:00"
    conversation["updated_at"] = "not a date"
    conversation["chat_messages"][0]["created_at"] = "2024-05-01T10:01:00.123Z"
    del conversation["chat_messages"][1]["created_at"]
    [found] = read(write_json(tmp_path / "c.json", [conversation]))
    assert (found.created_at, found.updated_at) == (T0, None)
    assert found.messages[0].created_at == pytest.approx(T0 + 60.123)
    assert found.messages[1].created_at is None


# -- Markdown ----------------------------------------------------------------------------

def minute(seconds: float) -> float:
    """A time as the export writes it: local, to the minute."""
    return time.mktime(time.strptime(time.strftime("%Y-%m-%d %H:%M",
                                                   time.localtime(seconds)),
                                     "%Y-%m-%d %H:%M"))


def test_the_apps_markdown_export_reads_back_as_it_was(store, clock, tmp_path):
    chat = conversations.create(store, "Weekend in Lisbon")
    history = History(store, chat)
    texts = [("user", "We land on Friday.\n\nIs the tram open late?"),
             ("assistant", "Yes, until midnight.\n\n- line 28\n- line 12"),
             ("user", "**Bold** words and a # hash")]
    for role, text in texts:
        history.append(role, text)
        clock.now += 95
    history.append("assistant", "", error="the service timed out")  # a failed reply
    clock.now += 60
    history.append("assistant", "Shall I note it?")
    written = store.query("SELECT created_at FROM messages WHERE conversation_id = ?"
                          " AND content != '' ORDER BY id", (chat,))
    path = tmp_path / "Weekend in Lisbon.md"
    path.write_text(conversations.markdown(store, chat), "utf-8")
    assert detect(path) == "markdown"
    [found] = read(path)
    assert found.title == "Weekend in Lisbon"
    assert found.format == "markdown"
    assert said(found) == [*texts, ("assistant", "Shall I note it?")]
    assert [m.created_at for m in found.messages] == [minute(r["created_at"])
                                                      for r in written]
    assert (found.created_at, found.updated_at) == (found.messages[0].created_at,
                                                    found.messages[-1].created_at)
    assert found.source.startswith("markdown:") and len(found.source) == len("markdown:") + 16
    assert next(read(path)).source == found.source  # the same file, the same conversation
    path.write_text(conversations.markdown(store, chat) + "\n", "utf-8")
    assert next(read(path)).source != found.source


def test_markdown_that_is_not_an_export_is_refused(tmp_path):
    path = tmp_path / "notes.md"
    path.write_text("Just some notes\n\n- milk\n- eggs\n", "utf-8")
    assert "not a ChatGPT, Claude, LoCoMo or TrulyMEM export" in str(refusal(path))
    path.write_text("# Only a title\n", "utf-8")
    assert list(read(path)) == []  # the app's export of a chat with no message
    path.write_bytes(b"# Caf\xe9\n\n**You** \xb7 2024-05-01 10:00\n\nhi\n")
    assert "not UTF-8 text" in str(refusal(path))


def test_markdown_without_a_title_and_a_header_inside_a_message():
    text = ("**You** · 2024-05-01 10:00\n\nQuote:\n**You** · 2024-05-01 10:00\n\n"
            "**Assistant** · 2024-05-01 10:01\n\n*(no reply)*\n")
    found = parse(text, source="markdown:x")
    assert found.title == ""
    assert said(found) == [("user", "Quote:\n**You** · 2024-05-01 10:00")]


# -- LoCoMo ------------------------------------------------------------------------------

def local(text: str) -> float:
    return time.mktime(time.strptime(text, "%I:%M %p on %d %B, %Y"))


def test_locomo_is_read_one_conversation_per_session_in_order(tmp_path):
    path = locomo_export(tmp_path / "locomo.json")
    assert detect(path) == "locomo"
    first, second = read(path)  # the third session has a date and no turns
    assert [first.source, second.source] == [f"locomo:{LOCOMO_SAMPLE}:1",
                                             f"locomo:{LOCOMO_SAMPLE}:2"]
    assert first.title == "Iris and Oskar, session 1"
    assert first.speakers == {"user": "Iris", "assistant": "Oskar"}
    assert first.format == "locomo"
    assert first.created_at == local("10:30 am on 2 February, 2023")
    assert second.created_at == local("4:05 pm on 20 March, 2023")
    assert [(m.role, m.speaker, m.source_id) for m in second.messages] == [
        ("user", "Iris", "D2:1"), ("assistant", "Oskar", "D2:2"), ("user", "Iris", "D2:3")]
    assert second.messages[2].text == \
        "A wobbly one. [shares a photo: a photo of a small clay bowl]"
    assert [m.created_at - second.created_at for m in second.messages] == [0, 1, 2]
    assert second.updated_at == second.created_at + 2


def test_locomo_sessions_go_in_number_order_and_dates_may_lack_a_time(tmp_path):
    sample = locomo_sample()
    talk = sample["conversation"]
    talk["session_10"], talk["session_10_date_time"] = talk.pop("session_1"), "5 May, 2023"
    talk["session_2_date_time"] = "whenever"
    path = write_json(tmp_path / "l.json", [sample, {**sample, "sample_id": "inv-8"}])
    assert [c.source for c in read(path)] == [
        "locomo:inv-7:2", "locomo:inv-7:10", "locomo:inv-8:2", "locomo:inv-8:10"]
    [two, ten, *_] = read(path)
    assert two.created_at is None and two.messages[0].created_at is None
    assert ten.created_at == time.mktime((2023, 5, 5, 0, 0, 0, 0, 0, -1))
    assert session_time("12:15 am on 1 Jan, 2024") == local("12:15 AM on 1 January, 2024")
    assert session_time("12:15 pm on 31 February, 2024") is None


def test_locomo_questions_and_samples_for_the_benchmark(tmp_path):
    path = locomo_export(tmp_path / "locomo.json")
    asked = questions(path)
    assert len(asked) == 3
    assert {q["sample_id"] for q in asked} == {LOCOMO_SAMPLE}
    assert asked[1]["evidence"] == ["D2:1", "D2:3"]
    assert [q["category"] for q in asked] == [4, 2, 5]
    assert questions(path, "someone-else") == []
    assert samples(path) == [{"sample_id": LOCOMO_SAMPLE, "speaker_a": "Iris",
                              "speaker_b": "Oskar", "sessions": 2}]
    with pytest.raises(PastFormatError):
        questions(chatgpt_export(tmp_path / "c.json"))


# -- broken files ------------------------------------------------------------------------

def test_a_damaged_zip_is_refused(tmp_path):
    good = chatgpt_export(tmp_path / "good.zip", zip=True).read_bytes()
    cut = tmp_path / "cut.zip"
    cut.write_bytes(good[: len(good) // 2])
    assert "the zip file cut.zip is damaged" in str(refusal(cut))
    not_zip = tmp_path / "fake.zip"
    not_zip.write_text("[]", "utf-8")
    assert "damaged" in str(refusal(not_zip))


def test_a_zip_whose_data_is_corrupted_is_refused_while_reading(tmp_path):
    path = tmp_path / "stored.zip"
    text = json.dumps([chatgpt_conversation(i) for i in range(3)])
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("conversations.json", text)
    data = bytearray(path.read_bytes())
    at = data.index(b"Bergen is rainy")
    data[at:at + 6] = b"Bxrgxn"  # still JSON, but the checksum no longer matches
    path.write_bytes(bytes(data))
    assert "damaged" in str(refusal(path))


def test_a_zip_without_conversations_json_is_refused(tmp_path):
    path = tmp_path / "photos.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("photos/cat.json", "[]")
    assert str(refusal(path)) == "there is no conversations.json in the zip file photos.zip"


def test_json_that_is_not_an_export_is_refused(tmp_path):
    for value in ({"nodes": [], "edges": []}, [{"hello": 1}], [1, 2], "text"):
        path = write_json(tmp_path / "other.json", value)
        error = refusal(path)
        assert str(error) == "other.json is not a ChatGPT, Claude, LoCoMo or TrulyMEM export"
        assert error.code == ErrorCode.INVALID
        with pytest.raises(PastFormatError):
            detect(path)


def test_json_cut_in_the_middle_is_refused_after_what_came_before(tmp_path):
    path = chatgpt_export(tmp_path / "conversations.json", conversations=3)
    text = path.read_text("utf-8")
    path.write_text(text[: len(text) * 3 // 4], "utf-8")
    found = read(path)
    assert next(found).source == "chatgpt:conv-0000"  # read as it comes
    with pytest.raises(PastFormatError) as caught:
        list(found)
    assert "conversations.json is not valid JSON" in str(caught.value)


def test_an_element_that_makes_no_sense_is_refused_with_its_place(tmp_path):
    path = write_json(tmp_path / "c.json", [chatgpt_conversation(0), "oops"])
    assert str(refusal(path)) == \
        "the export is broken at conversation 2: it is not an object"
    broken_mapping = {**chatgpt_conversation(0), "mapping": [1, 2]}
    path = write_json(tmp_path / "d.json", [broken_mapping])
    assert "conversation 1: its mapping is not an object" in str(refusal(path))
    claude = {**claude_conversation(0), "chat_messages": [None]}
    path = write_json(tmp_path / "e.json", [claude])
    assert "conversation 1: its message 1 is not an object" in str(refusal(path))


def test_a_file_that_is_not_utf8_is_refused(tmp_path):
    path = tmp_path / "conversations.json"
    path.write_bytes(b'[{"title": "Caf\xe9", "mapping": {}}]')
    assert str(refusal(path)) == "conversations.json is not UTF-8 text"


def test_an_empty_export_yields_nothing(tmp_path):
    path = write_json(tmp_path / "conversations.json", [])
    assert list(read(path)) == []
    assert detect(path) == ""
    zipped = tmp_path / "empty.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("conversations.json", " [ ]\n")
    assert list(read(zipped)) == []


def test_a_missing_file_or_a_folder_is_refused(tmp_path):
    error = refusal(tmp_path / "gone.json")
    assert error.code == ErrorCode.NOT_FOUND
    assert "not a regular file" in str(refusal(tmp_path))
    assert isinstance(error, ValueError)
    assert error.said()  # the person's words exist in any language


# -- size --------------------------------------------------------------------------------

def test_a_conversation_with_a_huge_message_is_read_whole(tmp_path):
    """9 MB: past json_members' own 8 MB limit for one value, well inside the readers'."""
    conversation = chatgpt_conversation(0)
    huge = "a pasted log line\n" * ((9 << 20) // 18)
    conversation["mapping"]["c0-m0"]["message"]["content"]["parts"] = [huge]
    path = write_json(tmp_path / "conversations.json", [conversation,
                                                        chatgpt_conversation(1)])
    first, second = read(path)
    assert first.messages[0].text == huge.strip()
    assert len(first.messages[0].text) > 9_000_000
    assert second.source == "chatgpt:conv-0001"


def test_a_big_export_is_read_back_whole(tmp_path):
    path = big_chatgpt_export(tmp_path / "big.json", conversations=120, messages=7)
    count = 0
    for count, conversation in enumerate(read(path), 1):  # noqa: B007
        assert len(conversation.messages) == 7
        assert conversation.messages[0].role == "user"
    assert count == 120
    assert readers.detect(path) == "chatgpt"
