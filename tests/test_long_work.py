"""Long work, honestly answered: reads are answered while the worker is busy, a read never
overtakes a write sent before it, and a timed-out packet is stopped before the answer
says so (it never finishes unseen)."""

from __future__ import annotations

import threading
import time

from core.protocol.packets import Packet, PacketType
from core.testing.sample_export import write_export

COMMIT = {"triplets": [{"subject": "User", "relation": "plays", "object": "cello"}]}


def _until(condition, seconds: float = 30.0) -> None:
    """A handshake: wait until `condition()` holds (it fails the test after `seconds`)."""
    pause, give_up = threading.Event(), time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < give_up, "the handshake never came"
        pause.wait(0.01)


def _in_thread(call) -> tuple[threading.Thread, dict]:
    answer: dict = {}
    thread = threading.Thread(target=lambda: answer.update(call()), daemon=True)
    thread.start()
    return thread, answer


def test_reads_are_answered_while_a_turn_holds_the_worker(headless, llm):
    _, client = headless()
    assert client.execute_tool("memory_commit", COMMIT)["success"]
    expected = client.request(PacketType.LIST_NODES, {"query": "cello"})["data"]
    gate = threading.Event()
    llm.play({"hold": gate, "text": "All done."})
    turn, turn_answer = _in_thread(lambda: client.process_message("take your time"))
    _until(lambda: llm.requests)  # the worker is on the turn, waiting for the model
    try:
        status = client.get_status()
        state = client.request(PacketType.MEMORY_STATE)
        nodes = client.request(PacketType.LIST_NODES, {"query": "cello"})
        history = client.get_history()
        listing = client.request(PacketType.LIST_CONVERSATIONS)
        assert turn.is_alive() and not gate.is_set()  # all answered while the turn ran
    finally:
        gate.set()
    assert status["success"] and status["data"]["graph_initialized"]
    assert state["success"] and state["data"]["counts"]["edges"] == 1, state
    assert nodes["success"] and nodes["data"] == expected, nodes
    assert history["success"] and listing["success"], (history, listing)
    turn.join(30)
    assert turn_answer["success"] and turn_answer["content"] == "All done.", turn_answer


def test_a_reading_tool_is_answered_while_long_work_runs_and_a_writing_one_waits(
        headless, llm):
    """memory_recall through EXECUTE_TOOL gave up after 5 s behind an import: a tool that
    only reads belongs on the read lane; one that writes keeps its place in line."""
    server, client = headless()
    assert client.execute_tool("memory_commit", COMMIT)["success"]
    gate = threading.Event()
    llm.play({"hold": gate, "text": "All done."})
    turn, _ = _in_thread(lambda: client.process_message("take your time"))
    _until(lambda: llm.requests)
    try:
        recalled = client.execute_tool("memory_recall", {"query_intent": "cello"})
        tasks = client.execute_tool("task_query", {})
        assert turn.is_alive() and not gate.is_set()
        write, write_answer = _in_thread(lambda: client.execute_tool("memory_commit", {
            "triplets": [{"subject": "User", "relation": "plays", "object": "piano"}]}))
        _until(lambda: server.unanswered == 2)  # the write waits behind the turn
        assert not write_answer
    finally:
        gate.set()
    assert recalled["success"] and "cello" in recalled["result"], recalled
    assert tasks["success"], tasks
    write.join(30)
    turn.join(30)
    assert write_answer["success"], write_answer


def test_a_read_never_overtakes_a_write_sent_before_it(headless, llm):
    server, client = headless()
    gate = threading.Event()
    llm.play({"hold": gate, "text": "ok"})
    turn, _ = _in_thread(lambda: client.process_message("hold on"))
    _until(lambda: llm.requests)
    write, write_answer = _in_thread(lambda: client.execute_tool("memory_commit", COMMIT))
    _until(lambda: server.unanswered == 2)  # the write waits behind the turn
    read, read_answer = _in_thread(lambda: client.request(PacketType.LIST_NODES,
                                                         {"query": "cello"}))
    _until(lambda: server.unanswered == 3)  # and the read behind the write, not beside
    gate.set()
    for thread in (turn, write, read):
        thread.join(30)
    assert write_answer["success"], write_answer
    after = client.request(PacketType.LIST_NODES, {"query": "cello"})["data"]
    assert after["total"] > 0 and read_answer["data"] == after, read_answer


def test_a_timed_out_import_is_stopped_and_changes_nothing(headless, llm, tmp_path):
    export = write_export(tmp_path / "big.json", 60_000, 60_000)
    server, client = headless()
    answer = server.send(Packet.make(PacketType.IMPORT_MEMORY, {"path": str(export)}),
                         timeout=0.3).body
    assert not answer["success"] and answer["code"] == "timeout", answer
    assert answer["params"] == {"stopped": True}
    # the answer came once the import had stopped: the worker is free and nothing landed
    assert server.unanswered == 0
    state = client.request(PacketType.MEMORY_STATE)
    assert state["data"]["counts"]["nodes"] == 0, state
    assert not (tmp_path / "home" / "graph_memory.db.import-staging").exists()


def test_long_work_waits_for_its_end_by_default_and_short_packets_do_not(headless):
    server, _ = headless()
    for kind in (PacketType.IMPORT_MEMORY, PacketType.EXPORT_MEMORY, PacketType.UNDO,
                 PacketType.UNDO_TURN, PacketType.RESTORE_BACKUP, PacketType.EMPTY_TRASH):
        assert server.default_timeout(kind) is None, kind
    assert server.default_timeout(PacketType.EXECUTE_TOOL) == 30.0
    assert server.default_timeout(PacketType.PROCESS_MESSAGE) > \
        server.backend.config.turn_timeout
