"""History import on bad days: a long import lets others write while it runs and still
keeps nothing when it fails late; two conversations under one id stay two; one too large
to hold is said to be too large."""

from __future__ import annotations

import json
import sqlite3
import threading

import pytest

from core.history_import import saving
from core.history_import.readers import PastFormatError
from core.store import GraphStore
from core.testing import past_exports


@pytest.fixture
def store(tmp_path):
    graph = GraphStore(tmp_path / "graph_memory.db")
    yield graph
    graph.close()


def _export(path, items) -> str:
    path.write_text(json.dumps(items), "utf-8")
    return str(path)


def test_another_writer_gets_the_lock_while_a_long_import_runs(tmp_path, store,
                                                                monkeypatch):
    monkeypatch.setattr(saving, "BATCH_SECONDS", 0.0)  # a batch per conversation
    items = [past_exports.claude_conversation(i) for i in range(40)]
    path = _export(tmp_path / "conversations.json", items)
    wrote = threading.Event()
    other = sqlite3.connect(store.path, timeout=0.05, check_same_thread=False)

    def report(read: int, _messages: int) -> None:
        if read == 20:  # half-way: another app writes, and does not wait for the end
            other.execute("CREATE TABLE IF NOT EXISTS other_app (x)")
            other.commit()
            wrote.set()

    kept = saving.keep(store, path, report=report)
    other.close()
    assert wrote.is_set() and kept["conversations"] == 40


def test_a_file_that_breaks_after_batches_were_committed_keeps_nothing(tmp_path, store,
                                                                       monkeypatch):
    monkeypatch.setattr(saving, "BATCH_SECONDS", 0.0)
    good = [past_exports.claude_conversation(i) for i in range(10)]
    text = json.dumps(good)[:-1] + ', {"broken": '  # cut after ten whole conversations
    (tmp_path / "conversations.json").write_text(text, "utf-8")
    before = store.query_one("SELECT count(*) AS n FROM messages")["n"]
    with pytest.raises(PastFormatError):
        saving.keep(store, tmp_path / "conversations.json")
    assert store.query_one("SELECT count(*) AS n FROM conversations")["n"] == 0
    assert store.query_one("SELECT count(*) AS n FROM messages")["n"] == before
    assert store.query_one("SELECT count(*) AS n FROM past_imports")["n"] == 0


def test_two_conversations_under_one_id_stay_two_and_a_second_import_adds_nothing(
        tmp_path, store):
    one, two = past_exports.claude_conversation(0), past_exports.claude_conversation(1)
    two["uuid"] = one["uuid"]
    path = _export(tmp_path / "conversations.json", [one, two])
    kept = saving.keep(store, path)
    assert kept["conversations"] == 2 and kept["grown"] == 0
    titles = [r["title"] for r in store.query("SELECT title FROM conversations ORDER BY id")]
    assert len(titles) == 2
    again = saving.keep(store, path)
    assert again["conversations"] == 0 and again["unchanged"] == 2


def test_a_conversation_too_large_to_hold_is_said_to_be_too_large(tmp_path, store,
                                                                  monkeypatch):
    from core.history_import import readers

    monkeypatch.setattr(readers, "MAX_VALUE_CHARS", 1 << 20)  # 1 MB stands for 64 MB
    conversation = past_exports.claude_conversation(0)
    conversation["chat_messages"][0]["text"] = "word " * 1_000_000  # 5 MB
    path = _export(tmp_path / "conversations.json", [conversation])
    with pytest.raises(PastFormatError, match="larger than 1 MB: too large to import"):
        saving.keep(store, path)
