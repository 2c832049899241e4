"""`trulymem --cli`: the terminal front end, run as a real process against the loopback
OpenAI-compatible server."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.store import GraphStore

pytestmark = pytest.mark.slow  # `-m "not slow"` leaves these out of a quick loop


ROOT = Path(__file__).resolve().parent.parent


def cli(home, llm, **options):
    env = {**os.environ, "TRULYMEM_API_KEY": "sk-cli-test-123456"}
    return subprocess.Popen(
        [sys.executable, "-m", "app.main", "--cli", "--home", str(home),
         "--base-url", llm.base_url, "--model", "test-model"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=ROOT, env=env, **options)


def test_a_piped_conversation_streams_replies_and_writes_memory(tmp_path, llm):
    llm.play({"tool_calls": [{"name": "memory_commit", "arguments": {"triplets": [
        {"subject": "user", "relation": "likes", "object": "green tea"}]}}]},
        {"text": "Noted: you like green tea."})
    process = cli(tmp_path, llm)
    out, err = process.communicate(
        "I like green tea\n"
        '/tool memory_recall {"query_intent": "tea"}\n'
        "/limits persona_update_max=3\n/bogus\n/quit\n", timeout=60)
    assert process.returncode == 0, err
    assert out.startswith("Noted: you like green tea.\n")
    assert "User -likes-> green tea" in out  # "user", "I" and "me" are one node
    assert "persona_update_max=3" in out
    assert "[memory_commit" in err and "Committed: 1 new" in err
    assert "unknown command /bogus" in err
    assert "sk-cli-test" not in out + err
    store = GraphStore(tmp_path / "graph_memory.db")
    try:
        assert store.conn.execute("SELECT count(*) FROM edges").fetchone()[0] == 1
    finally:
        store.close()


def test_a_failed_turn_is_reported_and_the_exit_status_says_so(tmp_path, llm):
    llm.play({"status": 401}, {"text": "fine"})
    process = cli(tmp_path, llm)
    _out, err = process.communicate("hello\n", timeout=60)
    assert process.returncode == 1
    assert "error:" in err and "401" in err


def test_ctrl_c_stops_the_running_turn_and_the_next_message_works(tmp_path, llm):
    llm.play({"text": "z" * 600, "chunk_delay": 0.05}, {"text": "second reply"})
    process = cli(tmp_path, llm)
    process.stdin.write("a long one\n")
    process.stdin.flush()
    deadline = time.monotonic() + 30
    while not llm.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate("again\n", timeout=60)
    assert process.returncode == 0  # a stop the person asked for is not a failure
    assert "(stopped)" in err and "error" not in err
    assert out.rstrip().endswith("second reply")
