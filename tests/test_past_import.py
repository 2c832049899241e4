"""Importing past conversations: kept all or none, the same file twice adds nothing, the
memory is built in time order with each conversation's date, from the exchange each fact
came from, resumable, stoppable, and one import is taken back as one change."""

from __future__ import annotations

import json
import re
import threading
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from core import BackendClient, BackendServer
from core.commands import import_history as command
from core.events import Event
from core.history_import import saving
from core.protocol.dispatcher import Dispatcher
from core.protocol.packets import Packet, PacketType
from core.store import conversations
from core.store.history import History
from core.testing import past_exports
from core.testing.remembering_model import RememberingModel

KEY = "sk-test-key-000000"


def _day(text: str) -> float:
    return time.mktime(time.strptime(text, "%I:%M %p on %d %B, %Y"))


def invented_locomo(path: Path, *, broken_after_first: bool = False) -> Path:
    """Two sessions between two invented people, in LoCoMo's shape."""
    sample = {
        "sample_id": "inv-1", "qa": [
            {"question": "Where does Ada live?", "answer": "Rome", "evidence": ["D2:1"],
             "category": 4}],
        "conversation": {
            "speaker_a": "Ada", "speaker_b": "Ben",
            "session_1_date_time": "10:00 am on 8 May, 2023",
            "session_1": [
                {"speaker": "Ada", "dia_id": "D1:1", "text": "Hi Ben! I live in Paris now."},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "Nice. I work as a baker."},
                {"speaker": "Ada", "dia_id": "D1:3",
                 "text": "Yesterday I went to the pottery class."}],
            "session_2_date_time": "4:30 pm on 20 June, 2023",
            "session_2": [
                {"speaker": "Ada", "dia_id": "D2:1", "text": "Big news: I moved to Rome."},
                {"speaker": "Ben", "dia_id": "D2:2", "text": "Wow! I love Rome."}]}}
    both = json.dumps([sample, {**sample, "sample_id": "inv-2"}])
    # broken: the second sample is cut short
    text = both[: len(both) * 3 // 4] if broken_after_first else json.dumps([sample])
    path.write_text(text, "utf-8")
    return path


@pytest.fixture
def model():
    with closing(RememberingModel()) as server:
        yield server


@pytest.fixture
def backend(model, hosted):
    """A dispatcher on a fresh home whose model is small and local: the extraction path."""
    def start(model_name: str = "local-model") -> Dispatcher:
        return hosted(api_key=KEY, base_url=model.base_url, model=model_name)

    return start


def ask(dispatcher: Dispatcher, kind: PacketType, **body: Any) -> Any:
    answer = dispatcher.handle(Packet.make(kind, body))
    assert answer.success, answer.error
    return answer.data


def build_all(dispatcher: Dispatcher) -> int:
    steps = 0
    while dispatcher.backend.background_step():
        steps += 1
    return steps


def active(dispatcher: Dispatcher) -> list[dict[str, Any]]:
    return dispatcher.backend.store.query(
        "SELECT s.name AS subject, e.relation, t.name AS object, e.status, e.valid_from,"
        " e.valid_to, e.temporal_tag, e.source_message FROM edges e JOIN nodes s ON"
        " s.id = e.source_id JOIN nodes t ON t.id = e.target_id ORDER BY e.id")


def test_sessions_become_imported_conversations_and_a_second_import_adds_nothing(
        tmp_path, backend):
    dispatcher = backend()
    path = invented_locomo(tmp_path / "locomo.json")
    kept = ask(dispatcher, PacketType.IMPORT_HISTORY, path=str(path))
    assert (kept["conversations"], kept["messages"]) == (2, 5)
    assert kept["estimate"]["conversations"] == 2 and kept["estimate"]["tokens"] > 0
    assert kept["estimate"]["endpoint"].startswith("http://127.0.0.1")
    listed = {c["title"]: c for c in ask(dispatcher, PacketType.LIST_CONVERSATIONS)
              ["conversations"]}
    first = listed["Ada and Ben, session 1"]
    assert first["imported"] and first["created_at"] == pytest.approx(
        _day("10:00 am on 8 May, 2023"), abs=60)
    found = conversations.search(dispatcher.backend.store, "pottery")
    assert [hit["title"] for hit in found] == ["Ada and Ben, session 1"]
    again = ask(dispatcher, PacketType.IMPORT_HISTORY, path=str(path))
    assert (again["import_id"], again["conversations"], again["messages"],
            again["unchanged"]) == (None, 0, 0, 2)


def test_a_file_broken_half_way_keeps_nothing(tmp_path, backend):
    dispatcher = backend()
    path = invented_locomo(tmp_path / "broken.json", broken_after_first=True)
    answer = dispatcher.handle(Packet.make(PacketType.IMPORT_HISTORY, {"path": str(path)}))
    assert not answer.success and answer.error
    store = dispatcher.backend.store
    assert store.query_one("SELECT count(*) AS n FROM conversations WHERE import_id IS NOT"
                           " NULL")["n"] == 0
    assert store.query_one("SELECT count(*) AS n FROM past_imports")["n"] == 0
    not_an_export = tmp_path / "notes.json"
    not_an_export.write_text('{"hello": "world"}', "utf-8")
    answer = dispatcher.handle(Packet.make(PacketType.IMPORT_HISTORY,
                                           {"path": str(not_an_export)}))
    assert not answer.success and "export" in answer.error


def test_the_memory_is_built_in_time_order_with_each_conversations_date(
        tmp_path, backend, model):
    dispatcher = backend()
    kept = ask(dispatcher, PacketType.IMPORT_HISTORY,
               path=str(invented_locomo(tmp_path / "locomo.json")))
    ask(dispatcher, PacketType.BUILD_MEMORY, import_id=kept["import_id"])
    build_all(dispatcher)
    facts = active(dispatcher)
    by = {(f["subject"], f["relation"], f["object"]): f for f in facts}
    may_8, june_20 = _day("10:00 am on 8 May, 2023"), _day("4:30 pm on 20 June, 2023")
    paris, rome = by[("User", "lives in", "Paris")], by[("User", "lives in", "Rome")]
    # said on 8 May, replaced on 20 June: the old value is no longer active
    assert paris["status"] == "superseded"
    assert paris["valid_from"] == pytest.approx(may_8, abs=60)
    assert paris["valid_to"] == pytest.approx(june_20, abs=60)
    assert rome["status"] == "active" and rome["valid_from"] == pytest.approx(june_20, abs=60)
    # "yesterday" in a conversation of 8 May 2023 is 7 May 2023
    assert by[("User", "went to", "pottery class")]["temporal_tag"] == "7 May 2023"
    assert by[("Ben", "works as", "baker")]["status"] == "active"
    assert by[("User", "name", "Ada")]["status"] == "active"  # the person is Ada
    # each fact comes from the exchange that holds its words
    store = dispatcher.backend.store
    source = conversations.holding_turn(store, rome["source_message"])
    assert conversations.get(store, source)["title"] == "Ada and Ben, session 2"
    sent = [json.dumps(r["messages"]) for r in model.requests if r.get("response_format")]
    assert "Monday, 8 May 2023" in sent[0] and "Ada: Hi Ben!" in sent[0]
    assert "20 June 2023" in sent[-1]
    # the change log keeps when the change was made, not when it was said
    newest = store.query_one("SELECT created_at FROM change_log ORDER BY id DESC LIMIT 1")
    assert newest["created_at"] > time.time() - 3600


def test_undo_import_takes_back_its_facts_and_nothing_else(tmp_path, backend):
    dispatcher = backend()
    ask(dispatcher, PacketType.EXECUTE_TOOL, tool_name="memory_commit", arguments={
        "triplets": [{"subject": "User", "relation": "likes", "object": "tea"}]})
    kept = ask(dispatcher, PacketType.IMPORT_HISTORY,
               path=str(invented_locomo(tmp_path / "locomo.json")))
    ask(dispatcher, PacketType.BUILD_MEMORY)
    build_all(dispatcher)
    undone = ask(dispatcher, PacketType.UNDO_IMPORT, import_id=kept["import_id"])
    assert len(undone["undone"]) > 3
    left = [(f["subject"], f["relation"], f["object"]) for f in active(dispatcher)
            if f["status"] == "active"]
    assert left == [("User", "likes", "tea")]
    assert len(ask(dispatcher, PacketType.LIST_CONVERSATIONS)["conversations"]) >= 2
    entry = dispatcher.backend.store.query_one(
        "SELECT tool FROM change_log ORDER BY id DESC LIMIT 1")
    assert entry["tool"] == "undo_import"
    again = dispatcher.handle(Packet.make(PacketType.UNDO_IMPORT,
                                          {"import_id": kept["import_id"]}))
    assert not again.success and again.code == "nothing_to_do"


def test_a_stopped_build_keeps_what_is_done_and_goes_on_later(tmp_path, backend, model):
    dispatcher = backend()
    ask(dispatcher, PacketType.IMPORT_HISTORY,
        path=str(invented_locomo(tmp_path / "locomo.json")))
    ask(dispatcher, PacketType.BUILD_MEMORY)
    assert dispatcher.backend.background_step()  # the first session's piece
    ask(dispatcher, PacketType.STOP_BUILDING)
    build_all(dispatcher)  # stops at the end of the session being remembered
    assert dispatcher.backend.work.builder is None
    asked = len(model.requests)
    assert ask(dispatcher, PacketType.LIST_IMPORTS)["estimate"]["conversations"] == 1
    ask(dispatcher, PacketType.BUILD_MEMORY)
    build_all(dispatcher)
    assert len(model.requests) == asked + 1  # only the second session was sent
    assert ask(dispatcher, PacketType.LIST_IMPORTS)["estimate"]["pieces"] == 0


def test_quitting_mid_build_resumes_at_the_next_piece(tmp_path, backend, model):
    dispatcher = backend()
    ask(dispatcher, PacketType.IMPORT_HISTORY,
        path=str(invented_locomo(tmp_path / "locomo.json")))
    ask(dispatcher, PacketType.BUILD_MEMORY)
    assert dispatcher.backend.background_step()
    dispatcher.backend.close()  # quit, or a crash after the piece was kept
    asked = len(model.requests)
    restarted = backend()
    assert restarted.backend.work.builder is not None  # the build the person started goes on
    build_all(restarted)
    assert len(model.requests) == asked + 1
    assert ("User", "lives in", "Rome") in [
        (f["subject"], f["relation"], f["object"]) for f in active(restarted)]


def test_a_model_that_calls_tools_writes_the_memory_with_its_calls(tmp_path, backend,
                                                                  model):
    dispatcher = backend("test-model")  # a name with no size: it calls tools
    ask(dispatcher, PacketType.IMPORT_HISTORY,
        path=str(invented_locomo(tmp_path / "locomo.json")))
    model.play({"tool_calls": [{"name": "memory_commit", "arguments": {
        "triplets": [{"subject": "Ada", "relation": "lives in", "object": "Paris"},
                     {"subject": "Ada", "relation": "lives in", "object": "Tokyo"}]}}]},
               {"text": "done"})
    ask(dispatcher, PacketType.BUILD_MEMORY)
    assert dispatcher.backend.background_step()
    first = model.requests[0]
    assert {t["function"]["name"] for t in first["tools"]} >= {"memory_commit"}
    facts = [(f["subject"], f["object"]) for f in active(dispatcher)]
    assert ("Ada", "Paris") in facts or ("User", "Paris") in facts
    assert not any(obj == "Tokyo" for _, obj in facts)  # nobody said Tokyo


def test_chat_is_answered_while_the_memory_is_built(tmp_path, model):
    events: list[tuple[str, dict[str, Any]]] = []
    built = threading.Event()

    def progress(event: str, data: dict[str, Any]) -> None:
        events.append((event, data))
        if event == Event.HISTORY_IMPORT and data.get("phase") == "built":
            built.set()

    server = BackendServer(home=tmp_path / "home", progress=progress)
    server.start(api_key=KEY, base_url=model.base_url, model="local-model")
    client = BackendClient(server)
    try:
        path = invented_locomo(tmp_path / "locomo.json")
        kept = client.request(PacketType.IMPORT_HISTORY, {"path": str(path)})
        assert kept["success"], kept["error"]
        started = client.request(PacketType.BUILD_MEMORY)
        assert started["success"], started["error"]
        reply = client.request(PacketType.PROCESS_MESSAGE, {"user_input": "Hello there"})
        assert reply["success"], reply["error"]
        assert built.wait(60)
        steps = [d for e, d in events if e == Event.HISTORY_IMPORT]
        assert steps[-1]["facts"] >= 4 and steps[-1]["pieces"] == steps[-1]["total"]
    finally:
        server.shutdown()


def test_the_command_line_imports_builds_and_sums_up(tmp_path, model, capsys, monkeypatch):
    monkeypatch.setenv("TRULYMEM_API_KEY", KEY)
    path = invented_locomo(tmp_path / "locomo.json")
    home = tmp_path / "home"
    assert command.run([str(path), "--home", str(home), "--conversations-only"]) == 0
    out = capsys.readouterr()
    assert out.out.strip().splitlines()[-1].startswith("imported 2 conversations")
    assert len(model.requests) == 0  # nothing was sent
    code = command.run([str(path), "--home", str(home), "--yes", "--base-url",
                        model.base_url, "--model", "local-model"],
                       )
    out = capsys.readouterr()
    assert code == 0
    assert "sends 2 conversations" in out.err
    last = out.out.strip().splitlines()[-1]
    assert "imported 0 conversations" in last and "facts written from 2 of 2 pieces" in last


def test_a_chatgpt_zip_and_a_claude_export_keep_their_titles_dates_and_turns(tmp_path,
                                                                            backend):
    dispatcher = backend()
    chatgpt = past_exports.chatgpt_export(tmp_path / "chatgpt.zip", 3, zip=True)
    kept = ask(dispatcher, PacketType.IMPORT_HISTORY, path=str(chatgpt))
    assert (kept["format"], kept["conversations"], kept["messages"]) == ("chatgpt", 3, 18)
    claude = past_exports.claude_export(tmp_path / "conversations.json", 2)
    assert ask(dispatcher, PacketType.IMPORT_HISTORY, path=str(claude))["format"] == "claude"
    store = dispatcher.backend.store
    rows = store.query("SELECT c.title, c.created_at, m.role, m.content, m.turn_id FROM"
                       " conversations c JOIN messages m ON m.conversation_id = c.id WHERE"
                       " c.source LIKE 'chatgpt:%' ORDER BY m.id")
    assert all(r["created_at"] < time.time() - 86_400 for r in rows)  # their own dates
    texts = [r["content"] for r in rows]
    assert "I moved to Bergen last spring." in texts
    assert not any("Oslo" in t for t in texts)  # the abandoned branch stays out
    # a person's message and the reply after it are one exchange
    assert rows[0]["turn_id"] == rows[1]["turn_id"] != rows[2]["turn_id"]


def test_a_conversation_that_grew_since_adds_only_its_new_messages(tmp_path, backend):
    dispatcher = backend()
    path = invented_locomo(tmp_path / "locomo.json")
    ask(dispatcher, PacketType.IMPORT_HISTORY, path=str(path))
    data = json.loads(path.read_text("utf-8"))
    data[0]["conversation"]["session_2"].append(
        {"speaker": "Ada", "dia_id": "D2:3", "text": "I work as a pilot now."})
    path.write_text(json.dumps(data), "utf-8")
    kept = ask(dispatcher, PacketType.IMPORT_HISTORY, path=str(path))
    assert (kept["conversations"], kept["grown"], kept["messages"], kept["unchanged"]) == \
        (0, 1, 1, 1)
    assert ask(dispatcher, PacketType.LIST_IMPORTS)["estimate"]["messages"] == 6


def test_a_markdown_export_comes_back_as_it_went(tmp_path, backend):
    dispatcher = backend()
    store = dispatcher.backend.store
    conversation = conversations.create(store, "Trip to Kyoto")
    history = History(store, conversation)
    history.append("user", "Help me plan a trip to Kyoto.\n\nTwo weeks in April.")
    history.append("assistant", "Gladly. **Day 1**: Fushimi Inari.")
    exported = tmp_path / "Trip to Kyoto.md"
    exported.write_text(conversations.markdown(store, conversation), "utf-8")
    kept = ask(dispatcher, PacketType.IMPORT_HISTORY, path=str(exported))
    assert (kept["format"], kept["conversations"], kept["messages"]) == ("markdown", 1, 2)
    back = store.query("SELECT c.title, m.role, m.content FROM conversations c JOIN messages"
                       " m ON m.conversation_id = c.id WHERE c.import_id = ? ORDER BY m.id",
                       (kept["import_id"],))
    assert [(r["title"], r["role"], r["content"]) for r in back] == [
        ("Trip to Kyoto", "user", "Help me plan a trip to Kyoto.\n\nTwo weeks in April."),
        ("Trip to Kyoto", "assistant", "Gladly. **Day 1**: Fushimi Inari.")]
    again = ask(dispatcher, PacketType.IMPORT_HISTORY, path=str(exported))
    assert again["import_id"] is None


def test_a_damaged_zip_and_a_huge_message(tmp_path, backend):
    dispatcher = backend()
    damaged = tmp_path / "export.zip"
    good = past_exports.chatgpt_export(tmp_path / "good.zip", 2, zip=True)
    damaged.write_bytes(good.read_bytes()[:-200])
    answer = dispatcher.handle(Packet.make(PacketType.IMPORT_HISTORY, {"path": str(damaged)}))
    assert not answer.success and "zip" in answer.error
    big = tmp_path / "conversations.json"
    conversation = past_exports.claude_conversation(0)
    conversation["chat_messages"][0]["text"] = "word " * 1_000_000  # 5 MB
    big.write_text(json.dumps([conversation]), "utf-8")
    kept = ask(dispatcher, PacketType.IMPORT_HISTORY, path=str(big))
    assert kept["conversations"] == 1
    estimate = kept["estimate"]
    assert estimate["tokens"] < 20_000  # a huge message is cut before it is sent


def test_undated_conversations_carry_the_import_and_a_stop_keeps_nothing(tmp_path, backend):
    dispatcher = backend()
    export = tmp_path / "conversations.json"
    conversation = past_exports.chatgpt_conversation(0, branches=False)
    conversation["create_time"] = conversation["update_time"] = None
    for node in conversation["mapping"].values():
        if node["message"]:
            node["message"]["create_time"] = None
    export.write_text(json.dumps([conversation]), "utf-8")
    kept = ask(dispatcher, PacketType.IMPORT_HISTORY, path=str(export))
    assert (kept["conversations"], kept["undated"]) == (1, 1)
    row = dispatcher.backend.store.query_one("SELECT created_at FROM conversations WHERE source"
                                     " LIKE 'chatgpt:%'")
    assert row["created_at"] == pytest.approx(time.time(), abs=600)
    other = past_exports.claude_export(tmp_path / "claude.json", 3)
    with pytest.raises(saving.ImportStopped):
        saving.keep(dispatcher.backend.store, other, cancelled=lambda: True)
    assert dispatcher.backend.store.query_one("SELECT count(*) AS n FROM conversations WHERE source"
                                      " LIKE 'claude:%'")["n"] == 0


def one_session(path: Path, when: str, *said: tuple[str, str]) -> Path:
    """A LoCoMo file of one session between the two who speak in `said`, held `when`."""
    speakers = list(dict.fromkeys(name for name, _ in said))
    path.write_text(json.dumps([{"sample_id": path.stem, "qa": [], "conversation": {
        "speaker_a": speakers[0], "speaker_b": speakers[-1], "session_1_date_time": when,
        "session_1": [{"speaker": name, "dia_id": f"D1:{n}", "text": text}
                      for n, (name, text) in enumerate(said, 1)]}}], ensure_ascii=False),
        "utf-8")
    return path


def test_a_conversation_in_chinese_is_remembered_in_chinese(tmp_path, backend, model):
    dispatcher = backend()
    path = one_session(tmp_path / "zh.json", "9:00 am on 3 March, 2024",
                       ("李娜", "我最近在学日语，昨天去了书店。"), ("王芳", "真好！我在杭州工作。"))
    ask(dispatcher, PacketType.IMPORT_HISTORY, path=str(path))
    ask(dispatcher, PacketType.BUILD_MEMORY)
    build_all(dispatcher)
    sent = [r for r in model.requests if r.get("response_format")]
    assert "in Chinese" in sent[0]["messages"][0]["content"]
    assert "李娜: 我最近在学日语" in sent[0]["messages"][1]["content"]


def test_a_failing_endpoint_stops_the_build_and_loses_no_piece(tmp_path, backend, model):
    dispatcher = backend()
    events: list[dict[str, Any]] = []
    dispatcher.backend.events = lambda event, data: events.append(data) \
        if event == Event.HISTORY_IMPORT else None
    ask(dispatcher, PacketType.IMPORT_HISTORY,
        path=str(invented_locomo(tmp_path / "locomo.json")))
    ask(dispatcher, PacketType.BUILD_MEMORY)
    model.play({"status": 401, "message": "Incorrect API key provided"})
    assert not dispatcher.backend.background_step()
    assert events[-1]["phase"] == "failed" and "API key" in events[-1]["error"]
    assert dispatcher.backend.work.builder is None
    left = ask(dispatcher, PacketType.LIST_IMPORTS)["estimate"]
    assert (left["conversations"], left["pieces"]) == (2, 2)  # nothing was skipped
    restarted = backend()  # the build the person asked for goes on at the next start
    build_all(restarted)
    assert ask(restarted, PacketType.LIST_IMPORTS)["estimate"]["pieces"] == 0


def test_a_fact_goes_to_the_speaker_who_said_it_of_themself(tmp_path, backend, model):
    dispatcher = backend()
    path = one_session(tmp_path / "one.json", "10:00 am on 8 May, 2023",
                       ("Ada", "How is home?"),
                       ("Ben", "Great, I have a husband and a garden now. Bye!"))
    ask(dispatcher, PacketType.IMPORT_HISTORY, path=str(path))
    model.play({"text": json.dumps({"facts": [
        ["Ada", "has", "a husband", ""], ["Ben", "has", "a husband", ""],
        ["Ada", "has", "a garden", "now"], ["Ben", "bye", "Ada", ""]]})})
    ask(dispatcher, PacketType.BUILD_MEMORY)
    build_all(dispatcher)
    facts = [(f["subject"], f["relation"], f["object"]) for f in active(dispatcher)]
    assert ("Ben", "has", "a husband") in facts and ("Ben", "has", "a garden") in facts
    assert not [f for f in facts if f[0] == "User" and f[1] != "name"]  # none on Ada
    assert not [f for f in facts if f[1] == "bye"]  # small talk is no fact


def test_the_words_of_imported_conversations_reach_a_question_about_them(
        tmp_path, backend, model):
    """A fact the memory writer missed is still found: the snapshot quotes the imported
    messages that match the question, with their day and who said them."""
    dispatcher = backend()
    ask(dispatcher, PacketType.IMPORT_HISTORY,
        path=str(invented_locomo(tmp_path / "locomo.json")))
    ask(dispatcher, PacketType.NEW_CONVERSATION)
    ask(dispatcher, PacketType.PROCESS_MESSAGE, user_input="What does Ben do for a living "
        "as a baker?")
    shown = model.requests[-1]["messages"][-1]["content"]
    assert "From earlier conversations" in shown
    # under its day, written once for the day's turns
    assert re.search(r"\n8 May 2023:\n(- .*\n)*- Ben: Nice\. I work as a baker\.\n", shown)
