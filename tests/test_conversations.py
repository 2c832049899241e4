"""Conversations: each keeps its own messages while the memory is shared; they are found
by full-text search in English and Chinese, deleted softly and restored, and exported as
Markdown. An older history becomes one conversation."""

from __future__ import annotations

import sqlite3

import pytest

from core.protocol.packets import Packet, PacketType
from core.store import GraphStore, conversations
from core.store.schema import migrate
from core.store.text import search_text
from tests.conftest import ask as asked
from tests.conftest import make_dispatcher


@pytest.fixture
def dispatcher(tmp_path, llm):
    home = tmp_path / "home"
    hosted = make_dispatcher(home / "graph_memory.db", home / "config.json", home=home)
    hosted.backend.open(api_key="sk-test-key-000000", base_url=llm.base_url, model="test-model")
    yield hosted
    hosted.backend.close()


def ask(dispatcher, kind, body=None):
    answer = asked(dispatcher, kind, body)
    assert answer.success, answer.error
    return answer.data


def say(dispatcher, llm, text, reply, *steps):
    llm.play(*steps, {"text": reply})
    return ask(dispatcher, PacketType.PROCESS_MESSAGE, {"user_input": text})


def test_a_new_chat_has_its_own_messages_and_still_knows_the_person(dispatcher, llm):
    say(dispatcher, llm, "My name is Lin and I love jazz", "Hello Lin!",
        {"tool_calls": [{"name": "memory_commit", "arguments": {"triplets": [
            {"subject": "User", "relation": "name is", "object": "Lin"},
            {"subject": "User", "relation": "loves", "object": "jazz"}]}}]})
    first = ask(dispatcher, PacketType.GET_HISTORY)["conversation_id"]
    fresh = ask(dispatcher, PacketType.NEW_CONVERSATION)
    assert fresh["conversation"]["title"] == "New chat"
    assert "loves jazz" in fresh["remembered"]["facts"]
    assert ask(dispatcher, PacketType.GET_HISTORY)["history"] == []
    say(dispatcher, llm, "什么音乐适合下雨天？", "爵士乐。")
    # The model sees only this conversation's messages, and the shared memory.
    sent = llm.requests[-1]["messages"]
    assert not any("Hello Lin" in (m.get("content") or "") for m in sent)
    assert "User -loves-> jazz" in sent[-1]["content"]
    listing = ask(dispatcher, PacketType.LIST_CONVERSATIONS)
    titles = [c["title"] for c in listing["conversations"]]
    assert titles == ["什么音乐适合下雨天？", "My name is Lin and I love jazz"]
    opened = ask(dispatcher, PacketType.OPEN_CONVERSATION, {"conversation_id": first})
    assert [m["content"] for m in opened["history"]] == ["My name is Lin and I love jazz",
                                                         "Hello Lin!"]


def test_search_finds_messages_across_conversations_in_english_and_chinese(dispatcher, llm):
    say(dispatcher, llm, "Plan a trip to Kyoto in spring", "Cherry blossoms!")
    ask(dispatcher, PacketType.NEW_CONVERSATION)
    say(dispatcher, llm, "我想学做红烧肉", "好的，先准备五花肉。")
    english = ask(dispatcher, PacketType.SEARCH_CONVERSATIONS, {"query": "kyoto"})["results"]
    assert [r["title"] for r in english] == ["Plan a trip to Kyoto in spring"]
    chinese = ask(dispatcher, PacketType.SEARCH_CONVERSATIONS, {"query": "五花肉"})["results"]
    assert chinese and chinese[0]["role"] == "assistant" and "五花肉" in chinese[0]["snippet"]


def test_a_deleted_conversation_leaves_the_list_and_search_and_comes_back(dispatcher, llm):
    say(dispatcher, llm, "Kyoto trip", "Nice.")
    doomed = ask(dispatcher, PacketType.GET_HISTORY)["conversation_id"]
    ask(dispatcher, PacketType.NEW_CONVERSATION)
    say(dispatcher, llm, "something else", "ok")
    ask(dispatcher, PacketType.DELETE_CONVERSATION, {"conversation_id": doomed})
    assert doomed not in [c["id"] for c in ask(dispatcher, PacketType.LIST_CONVERSATIONS)[
        "conversations"]]
    assert ask(dispatcher, PacketType.SEARCH_CONVERSATIONS, {"query": "kyoto"})["results"] == []
    assert [c["id"] for c in ask(dispatcher, PacketType.LIST_CONVERSATIONS, {"deleted": True})[
        "conversations"]] == [doomed]
    refused = dispatcher.handle(Packet.make(PacketType.OPEN_CONVERSATION,
                                            {"conversation_id": doomed}))
    assert not refused.success and "restore it first" in refused.error
    ask(dispatcher, PacketType.RESTORE_CONVERSATION, {"conversation_id": doomed})
    assert ask(dispatcher, PacketType.SEARCH_CONVERSATIONS, {"query": "kyoto"})["results"]


def test_deleting_the_shown_conversation_shows_the_last_used_one(dispatcher, llm):
    say(dispatcher, llm, "one", "1")
    older = ask(dispatcher, PacketType.GET_HISTORY)["conversation_id"]
    shown = ask(dispatcher, PacketType.NEW_CONVERSATION)["conversation"]["id"]
    answer = ask(dispatcher, PacketType.DELETE_CONVERSATION, {"conversation_id": shown})
    assert answer["current"] == older
    assert [m["content"] for m in ask(dispatcher, PacketType.GET_HISTORY)["history"]] == [
        "one", "1"]


def test_rename_and_export_as_markdown(dispatcher, llm, tmp_path):
    say(dispatcher, llm, "Write me a haiku", "Autumn moonlight —\na worm digs silently")
    conversation = ask(dispatcher, PacketType.GET_HISTORY)["conversation_id"]
    renamed = ask(dispatcher, PacketType.RENAME_CONVERSATION,
                  {"conversation_id": conversation, "title": "  Haiku   time "})
    assert renamed["conversation"]["title"] == "Haiku time"
    path = tmp_path / "haiku.md"
    written = ask(dispatcher, PacketType.EXPORT_CONVERSATION,
                  {"conversation_id": conversation, "path": str(path)})
    text = path.read_text()
    assert text.startswith("# Haiku time\n") and "**You** · " in text
    assert "Autumn moonlight —\na worm digs silently" in text
    assert written["bytes"] == len(text.encode()) and (path.stat().st_mode & 0o077) == 0


def test_an_older_history_becomes_one_conversation(tmp_path):
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.create_function("search_text", 1, search_text)
    migrate(conn, target=7)  # a file from before conversations
    conn.execute("INSERT INTO messages(role, content, created_at) VALUES"
                 " ('user', 'hello from before', 1.0)")
    conn.close()
    store = GraphStore(path)
    try:
        rows = store.query("SELECT c.title, m.content FROM messages m JOIN conversations c"
                           " ON c.id = m.conversation_id")
        assert rows == [{"title": "Earlier conversation", "content": "hello from before"}]
        assert conversations.search(store, "before")[0]["snippet"] == "hello from before"
    finally:
        store.close()


def test_an_empty_new_chat_is_reused_and_shows_what_is_remembered(dispatcher, llm):
    say(dispatcher, llm, "hello", "hi")
    first = ask(dispatcher, PacketType.NEW_CONVERSATION)["conversation"]["id"]
    again = ask(dispatcher, PacketType.NEW_CONVERSATION)["conversation"]["id"]
    assert first == again  # pressing New chat twice makes one, not two
    assert len(ask(dispatcher, PacketType.LIST_CONVERSATIONS)["conversations"]) == 2
    assert "remembered" in ask(dispatcher, PacketType.GET_HISTORY)  # the empty one shows it


def test_search_snippets_read_as_text_and_say_where_the_words_matched(store):
    from core.store import conversations as chats
    from core.store.history import History

    chats.create(store, "Weather")
    History(store).append("assistant", "| Day | Temp |\n|---|---|\n| Mon | **18°C** |\n\n"
                                       "Take a `coat` and read [the forecast](http://x.y)")
    [found] = chats.search(store, "coat")
    assert found["snippet"] == "Day Temp Mon 18°C Take a coat and read the forecast"
    start, length = found["matches"][0]
    assert found["snippet"][start:start + length] == "coat"


def test_a_title_becomes_a_file_name_anywhere():
    from core.paths import file_name

    assert file_name("Trip: Kyoto/Osaka?") == "Trip Kyoto Osaka"
    assert file_name("..hidden\x00") == "hidden"
    assert file_name("我的对话") == "我的对话"
