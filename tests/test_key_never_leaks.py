"""The API key the app sends never comes back out: not in a reply, an error, the history,
a backup, an export, the memory or the terminal, whatever shape the key has and however
the server repeats it (a 401's message, an error event inside the stream, reply text)."""

from __future__ import annotations

import io
import sqlite3

import pytest

from core.cli import TerminalChat
from core.protocol.packets import PacketType
from core.redaction import held_back, remember, scrub_known
from core.store.backups import backup_folder, make_backup

# Keys as providers, local servers and proxies give them: short, dotted, with symbols.
KEYS = [
    "sk-proj-7hQ2mZp9LkVt3RbX0yWc8NfDsA1eG4uJ6iOqTn5Kx",  # OpenAI's long shape
    "ol.la-ma.key9",  # dotted, under 32 characters
    "lmst_42",  # short, with an underscore
    "proxy.user:Pa55/word+x=",  # a proxy's user:password, slashes and plus
    "Zk81",  # four characters
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtZSJ9.c2lnbmF0dXJl",  # a JWT
]


@pytest.mark.parametrize("key", KEYS)
def test_a_key_the_endpoint_echoes_reaches_nothing(headless, llm, tmp_path, key):
    server, client = headless(api_key=key)
    llm.play({"status": 401, "message": f"Incorrect API key provided: {key}. See docs."})
    failed = client.process_message("hello")
    assert not failed["success"] and key not in failed["error"]
    assert "Incorrect API key provided: …" in failed["error"]  # the words stay, the key goes
    # an error event in the middle of a stream that repeats it, and reply text with it
    llm.play({"text": "Working on it", "cut": True,
              "error_event": {"message": f"upstream refused key {key}"}})
    broken = client.process_message("again")
    assert not broken["success"] and key not in broken["error"]
    llm.play({"text": f"Your key is {key}, and it works."})
    said = client.process_message("what is my key?")
    assert said["success"] and key not in said["content"]
    assert said["content"] == "Your key is …, and it works."
    store = server.backend.store
    _nowhere_in(key, store.conn)
    exported = client.request(PacketType.EXPORT_CONVERSATION)["data"]["markdown"]
    assert key not in exported and "Incorrect API key provided: …" in exported
    backup = make_backup(store.conn, backup_folder(server.backend.db_path))
    with sqlite3.connect(backup) as copy:
        _nowhere_in(key, copy)
    assert key.encode() not in backup.read_bytes()


def _nowhere_in(key: str, conn: sqlite3.Connection) -> None:
    """No text column of any table holds the key."""
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type ="
                                         " 'table' AND name NOT LIKE '%fts%'")]
    for table in tables:
        for row in conn.execute(f"SELECT * FROM \"{table}\""):
            for value in row:
                assert not (isinstance(value, str) and key in value), (table, value)


@pytest.mark.parametrize("key", KEYS[1:4])
def test_the_terminal_prints_no_key(tmp_path, llm, monkeypatch, key):
    monkeypatch.setenv("TRULYMEM_API_KEY", key)
    out, err = io.StringIO(), io.StringIO()
    chat = TerminalChat(tmp_path / "home", out, err)
    try:
        chat.start(llm.base_url, "test-model")
        llm.play({"status": 401, "message": f"Incorrect API key provided: {key}"})
        assert not chat.send("hello")
        llm.play({"text": f"the key {key} again"})
        assert chat.send("and?")
    finally:
        chat.close()
    assert key not in out.getvalue() and key not in err.getvalue()
    assert "Incorrect API key provided: …" in err.getvalue()


def test_the_model_cannot_store_the_key_as_a_memory(headless, llm):
    key = "lan.proxy.k3y"
    server, client = headless(api_key=key)
    llm.play({"tool_calls": [{"name": "memory_commit", "arguments": {"triplets": [
        {"subject": "User", "relation": "has_key", "object": key}]}}]},
        {"text": "Noted."})
    client.process_message(f"remember that my key is {key}")
    _nowhere_in(key, server.backend.store.conn)


def test_keys_split_over_stream_pieces_are_held_until_masked():
    remember("split.key.42")
    assert held_back("the key is split.k") == len("split.k")
    assert held_back("nothing here!") == 0
    assert scrub_known("a split.key.42 b") == "a … b"


def test_a_short_key_is_masked_only_where_it_stands_alone():
    remember("Qx7p")
    assert scrub_known("key Qx7p, not aQx7pb") == "key …, not aQx7pb"
    assert scrub_known("ollama runs here") == "ollama runs here"  # a placeholder, no secret


@pytest.mark.parametrize("key", KEYS)
def test_a_key_in_a_conversations_title_or_the_models_reasoning_is_masked(headless, llm,
                                                                          tmp_path, key):
    events = []
    server, client = headless(api_key=key,
                              progress=lambda kind, data: events.append((kind, data)))
    # thought aloud, split over stream pieces (the server sends a few characters each)
    llm.play({"reasoning": f"The person's key is {key} so I should not say it.",
              "text": "I won't repeat it."})
    assert client.process_message("hello")["success"]
    from core.events import Event

    thought = "".join(d["delta"] for kind, d in events if kind == Event.REASONING)
    assert key not in thought and thought == "The person's key is … so I should not say it."
    listed = client.request(PacketType.LIST_CONVERSATIONS)["data"]["conversations"]
    renamed = client.request(PacketType.RENAME_CONVERSATION, {
        "conversation_id": listed[0]["id"], "title": f"keys {key} here"})
    assert renamed["success"] and key not in str(renamed["data"])
    _nowhere_in(key, server.backend.store.conn)


@pytest.mark.parametrize("key", ["sk-ключ-1234567890", "sk-abc def123456", "sk-é12345678"])
def test_a_key_a_header_cannot_carry_is_refused_with_the_reason(headless, key):
    client = headless(api_key=key)[1]
    answer = client.process_message("hello")
    assert not answer["success"]
    assert "API Key not configured: " in answer["error"]
    assert "character an HTTP header cannot carry" in answer["error"]
    assert key not in answer["error"]
