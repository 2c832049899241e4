"""Recall by meaning: the real embedding model, the background indexer, a real SQLite file.

Each test waits for the indexer by its own handshake (`wait_idle`, or its status), never
for a guessed time.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from core.meaning import engine as engines
from core.meaning.indexer import Meaning
from core.protocol.packets import PacketType
from core.store import GraphStore, search
from core.store.search import search_edges
from core.tools import ToolExecutor, corrections

pytestmark = [pytest.mark.meaning,
              pytest.mark.skipif(engines.problem() is not None,
                                 reason="no embedding engine on this platform")]

WAIT = 120.0  # seconds: a ceiling for a cold, loaded machine, not an expected time

# Other people's facts, so the person's own must be picked out of a crowd.
OTHERS = [("Anna", "likes", "jazz"), ("Ben", "lives in", "Paris"),
          ("Carla", "works at", "Globex"), ("David", "plays", "chess"),
          ("王伟", "喜欢", "京剧"), ("李娜", "住在", "上海"), ("张敏", "在…工作", "腾讯"),
          ("Eve", "visited", "Tokyo"), ("Frank", "owns", "a bicycle"),
          ("刘洋", "去过", "西安"), ("Grace", "is learning", "Italian"),
          ("陈静", "养了", "一只鹦鹉"), ("Henry", "dislikes", "coffee")]


def commit(executor: ToolExecutor, *facts: tuple[str, str, str]) -> None:
    result = executor.execute("memory_commit", {"triplets": [
        {"subject": s, "relation": r, "object": o} for s, r, o in facts]})
    assert result["success"], result


def fact_ids(store: GraphStore, text: str, meaning: Meaning | None) -> list[str]:
    """The facts a search finds, as "subject relation object"."""
    store.meaning = meaning
    return [f"{e['source_name']} {e['relation']} {e['target_name']}"
            for e in search_edges(store, text, limit=5)]


def until(predicate, timeout: float = WAIT) -> None:
    """Wait for a condition the code under test reports (its status), polling it."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting for the indexer"
        time.sleep(0.02)


def indexed(executor, meaning, *facts):
    """`facts` committed, then an indexer started over them and waited for."""
    commit(executor, *facts)
    indexer = meaning()
    assert indexer.wait_idle(WAIT)
    return indexer


def test_a_chinese_question_finds_an_english_fact_and_back(store, executor, meaning):
    indexer = indexed(executor, meaning, *OTHERS, ("User", "works as", "a nurse"),
                      ("User", "老家在", "重庆"))

    for question, fact in (("我的职业是什么", "User works as a nurse"),
                           ("what is my hometown", "User 老家在 重庆")):
        assert fact not in fact_ids(store, question, None)  # no word in common
        assert fact_ids(store, question, indexer)[0] == fact


def test_a_bare_topic_finds_the_persons_own_fact_among_look_alikes(store, executor,
                                                                   meaning):
    jobs = ["a nurse", "a teacher", "an engineer", "a lawyer", "a pilot", "a chef"]
    towns = ["重庆", "成都", "西安", "长沙", "武汉"]
    for start in range(0, 400, 40):  # others' jobs and home towns, the person's among them
        commit(executor, *[(f"Kira {n}", "works as", jobs[n % len(jobs)])
                           for n in range(start, start + 20)],
               *[(f"小明{n}", "老家在", towns[n % len(towns)])
                 for n in range(start, start + 20)])
    indexer = indexed(executor, meaning, ("User", "works as", "a nurse"),
                      ("User", "老家在", "重庆"))
    # No word in common, nobody named: in a companion's memory, the person's own
    for question, fact in (("occupation", "User works as a nurse"),
                           ("home town", "User 老家在 重庆")):
        assert fact not in fact_ids(store, question, None)
        assert fact in fact_ids(store, question, indexer)
    # Naming someone the memory knows asks about them, not the person
    assert search.names_someone(store, "Kira 7's occupation")
    assert not search.names_someone(store, "occupation")
    assert "User works as a nurse" not in fact_ids(store, "Kira 7's occupation", indexer)


def test_hostile_questions_get_an_answer(store, executor, meaning):
    indexer = indexed(executor, meaning, *OTHERS)
    store.meaning = indexer
    for question in ("a\ud800b", "nul\x00inside", "🙂" * 300, "x" * 5000, " "):
        result = ToolExecutor(store).execute("memory_recall", {"query_intent": question})
        assert result["success"] or "query_intent" in result["error"], result


def test_recall_answers_by_words_while_the_indexer_is_busy(store, executor, meaning):
    commit(executor, *OTHERS, ("User", "plays", "the cello"))
    busy = engines.engine("index")
    with busy._lock:  # the indexer's model is taken: it cannot finish a batch
        indexer = meaning()
        until(lambda: indexer.status()["state"] == "indexing"
              and indexer.status()["waiting"] > 0)
        store.meaning = indexer
        recalled = ToolExecutor(store).execute("memory_recall", {"query_intent": "cello"})
        assert "User -plays-> the cello" in recalled["data"]["result"]
        assert indexer.status()["state"] == "indexing"
    assert indexer.wait_idle(WAIT)
    assert indexer.status() == {"state": "ready", "indexed": len(OTHERS) + 1, "waiting": 0,
                                "problem": None, "keeper": True, "turns_indexed": 0,
                                "turns_waiting": 0}
    assert fact_ids(store, "musical instrument", indexer)[0] == "User plays the cello"


def test_renamed_deleted_and_restored_facts_follow_the_memory(store, executor, meaning):
    indexer = indexed(executor, meaning, *OTHERS, ("User", "drives", "a Volvo"))
    embedded = indexer.embedded
    assert fact_ids(store, "which car do I have", indexer)[0] == "User drives a Volvo"

    corrections.correct(store, "rename_node", {"node_id": store.find_node("a Volvo")["id"],
                                               "name": "a Tesla"})
    assert indexer.wait_idle(WAIT)
    assert indexer.embedded == embedded + 1  # the fact's text changed: embedded again
    assert fact_ids(store, "electric car", indexer)[0] == "User drives a Tesla"

    edge = store.query_one("SELECT id FROM edges WHERE relation = 'drives'")
    corrections.correct(store, "delete_edge", {"edge_id": edge["id"]})
    assert indexer.wait_idle(WAIT)
    assert "User drives a Tesla" not in fact_ids(store, "electric car", indexer)

    store.undo(store.query_one("SELECT max(id) AS id FROM change_log")["id"])
    assert indexer.wait_idle(WAIT)
    assert fact_ids(store, "electric car", indexer)[0] == "User drives a Tesla"
    assert indexer.embedded == embedded + 1  # put back from its stored vector


def test_only_the_facts_added_while_it_was_away_are_embedded_on_restart(store, executor,
                                                                       meaning):
    first = indexed(executor, meaning, *OTHERS[:6])
    first.stop()
    commit(executor, *OTHERS[6:])  # written while no indexer ran

    second = meaning()
    assert second.wait_idle(WAIT)
    assert second.embedded == len(OTHERS) - 6
    assert second.status()["indexed"] == len(OTHERS)


@pytest.mark.slow
def test_the_indexer_resumes_after_being_killed(tmp_path):
    path = tmp_path / "graph_memory.db"
    store = GraphStore(path)
    executor = ToolExecutor(store)
    for start in range(0, 400, 50):
        commit(executor, *[(f"Person {i}", "likes", f"hobby number {i}")
                           for i in range(start, start + 50)])
    store.close()
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import threading
        from core.meaning.indexer import Meaning
        Meaning({str(path)!r}).start()
        threading.Event().wait()
    """)], cwd=Path(__file__).resolve().parent.parent)
    try:
        conn = sqlite3.connect(path)
        until(lambda: conn.execute("SELECT count(*) FROM edge_vectors").fetchone()[0] > 0)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(WAIT)
        stored = conn.execute("SELECT count(*) FROM edge_vectors").fetchone()[0]
        assert 0 < stored < 400, "killed too late to show a resume"
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        conn.close()
    finally:
        if child.poll() is None:
            child.kill()

    resumed = Meaning(path)
    resumed.start()
    try:
        assert resumed.wait_idle(WAIT)
        assert resumed.embedded == 400 - stored
        assert resumed.status()["indexed"] == 400
    finally:
        resumed.stop()


def test_a_new_model_or_text_recipe_indexes_everything_again(store, executor, meaning,
                                                              monkeypatch):
    first = indexed(executor, meaning, *OTHERS)
    first.stop()
    monkeypatch.setattr(engines, "TEXT_RECIPE", "another recipe")
    again = meaning()
    assert again.wait_idle(WAIT)
    assert again.embedded == len(OTHERS)
    models = store.query("SELECT DISTINCT model FROM edge_vectors")
    assert [m["model"] for m in models] == [engines.model_id()]


def test_switching_it_off_recalls_by_words_only(tmp_path):
    from core import BackendClient, BackendServer

    events: list[dict] = []
    ready = threading.Event()

    def progress(event: str, data: dict) -> None:
        if event == "meaning":
            events.append(data)
            if data["state"] == "ready":
                ready.set()

    server = BackendServer(home=tmp_path, progress=progress)
    server.start(api_key="test-key")
    client = BackendClient(server)
    try:
        def recall(text: str) -> str:
            answer = client.request(PacketType.EXECUTE_TOOL, {
                "tool_name": "memory_recall", "arguments": {"query_intent": text}})
            return answer["data"]["result"]

        client.request(PacketType.EXECUTE_TOOL, {"tool_name": "memory_commit", "arguments": {
            "triplets": [{"subject": s, "relation": r, "object": o}
                         for s, r, o in [*OTHERS, ("User", "is afraid of", "heights")]]}})
        until(lambda: client.request(PacketType.GET_STATUS)["data"]["meaning"]
              == {"state": "ready", "indexed": len(OTHERS) + 1, "waiting": 0, "problem": None,
                 "keeper": True, "turns_indexed": 0, "turns_waiting": 0})
        assert "User -is afraid of-> heights" in recall("what scares me")

        assert client.request(PacketType.SET_CONFIG, {"recall_by_meaning": False})["success"]
        assert client.request(PacketType.GET_STATUS)["data"]["meaning"] == {"state": "off"}
        assert "heights" not in recall("what scares me")
        assert "User -is afraid of-> heights" in recall("heights")  # words still work
        assert events[-1] == {"state": "off"}

        ready.clear()
        assert client.request(PacketType.SET_CONFIG, {"recall_by_meaning": True})["success"]
        assert ready.wait(WAIT)
        assert "User -is afraid of-> heights" in recall("what scares me")
    finally:
        client.shutdown()


@pytest.mark.meaning
def test_without_an_engine_recall_uses_words_and_says_why(tmp_path, monkeypatch):
    from core import BackendClient, BackendServer

    monkeypatch.setattr(engines, "model_id", lambda: None)  # as where no wheel exists
    server = BackendServer(home=tmp_path)
    server.start(api_key="test-key")
    client = BackendClient(server)
    try:
        status = client.request(PacketType.GET_STATUS)["data"]["meaning"]
        assert status["state"] == "unavailable"
        assert "recall uses words only" in status["problem"]
        config = client.request(PacketType.GET_CONFIG)["data"]
        assert config["recall_by_meaning"] is True and config["meaning"] == status
        client.request(PacketType.EXECUTE_TOOL, {"tool_name": "memory_commit", "arguments": {
            "triplets": [{"subject": "User", "relation": "plays", "object": "the cello"}]}})
        answer = client.request(PacketType.EXECUTE_TOOL, {
            "tool_name": "memory_recall", "arguments": {"query_intent": "cello"}})
        assert "User -plays-> the cello" in answer["data"]["result"]
        assert server.backend.meaning is None
    finally:
        client.shutdown()


def test_a_saved_index_follows_what_changed_while_no_indexer_ran(store, executor, meaning):
    first = indexed(executor, meaning, *OTHERS, ("User", "is afraid of", "heights"))
    first.stop()  # saves the index with its stamp
    assert Path(f"{store.path}.vectors.json").exists()
    store.on_commit.clear()
    edge = store.query_one("SELECT id FROM edges WHERE relation = 'is afraid of'")
    corrections.correct(store, "delete_edge", {"edge_id": edge["id"]})

    for rebuilt in (False, True):
        if rebuilt:  # a stale stamp: the index is built again from the stored vectors
            Path(f"{store.path}.vectors.json").unlink()
        again = meaning()
        assert again.wait_idle(WAIT)
        assert again.status()["indexed"] == len(OTHERS)
        assert edge["id"] not in [i for i, _ in again.similar("what scares me", 50)]
        assert again.embedded == 0
        again.stop()


@pytest.mark.slow
def test_two_programs_on_one_memory_one_keeps_the_index_the_other_follows(store, executor,
                                                                          meaning):
    """The window and an MCP server: one embeds and saves, the other adds what the keeper
    stored, and takes over when the keeper quits."""
    commit(executor, *OTHERS)
    keeper = meaning()  # told of this program's commits, as the dispatcher tells it
    assert keeper.wait_idle(WAIT)  # it holds the lock by now: it took it before loading
    follower = Meaning(store.path)  # another program: told of nothing, finds it all itself
    follower.start()
    try:
        until(lambda: follower.status()["indexed"] == len(OTHERS))
        assert keeper.status()["keeper"] and not follower.status()["keeper"]

        commit(executor, ("User", "works as", "a nurse"))
        assert keeper.wait_idle(WAIT)
        until(lambda: follower.status()["indexed"] == len(OTHERS) + 1)
        assert fact_ids(store, "我的职业是什么", follower)[0] == "User works as a nurse"
        assert follower.embedded == 0  # it embedded nothing: the keeper did

        keeper.stop()
        commit(executor, ("User", "老家在", "重庆"))
        until(lambda: follower.status()["keeper"]
              and follower.status()["indexed"] == len(OTHERS) + 2)
        assert follower.embedded == 1
        assert fact_ids(store, "what is my hometown", follower)[0] == "User 老家在 重庆"
    finally:
        follower.stop()


def test_similar_among_compares_only_the_facts_asked(store, executor, meaning):
    indexer = indexed(executor, meaning, *OTHERS, ("User", "works as", "a nurse"))
    mine = store.query_one("SELECT e.id FROM edges e JOIN nodes n ON n.id = e.source_id"
                           " WHERE n.name = 'User'")["id"]
    found = indexer.similar_among("what is my occupation", [mine, 10**9])
    assert [i for i, _ in found] == [mine] and 0 < found[0][1] <= 1.0


def test_a_question_asked_again_gets_the_same_vector_and_no_caller_can_change_it():
    """One recall embeds its question once however many parts ask for its vector."""
    query = engines.engine("query")
    first = query.query("Where does my sister live?")
    again = query.query("Where does my sister live?")
    other = query.query("What instrument do I play?")
    assert again is first and not first.flags.writeable
    assert float(first @ other) < 0.99
    assert float(query.query("Where does my sister live?") @ first) > 0.999
