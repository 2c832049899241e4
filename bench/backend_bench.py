"""Backend benchmark: packet round trip, backend time per model round trip, CANCEL latency,
and the size of what every request carries (system prompt + tool schemas).

    python bench/backend_bench.py [--packets N] [--turns N]

Targets: EXECUTE_TOOL memory_introspect round trip p50 < 1 ms through the threaded host;
backend time per model round trip < 10 ms with the loopback server's own time left out;
CANCEL ends a streaming turn within 200 ms; instructions + tool schemas at most 1,500
tokens with the core tool set and 800 with the compact one (local servers).
"""

from __future__ import annotations

import json
import statistics
import tempfile
import threading
import time
from pathlib import Path

from options import counts

from core import BackendClient, BackendServer
from core.eval.tokens import counted_with, token_count
from core.testing.loopback_llm import ScriptedOpenAIServer
from core.tools.schemas import TOOL_SETS, openai_tools
from core.turn.prompts import system_prompt


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


def request_sizes() -> dict[str, tuple[int, int]]:
    """(instructions, tools) tokens for each tool set, as every request carries them."""
    sizes = {}
    for tool_set in TOOL_SETS:
        tools = json.dumps(openai_tools(tool_set), ensure_ascii=False, separators=(",", ":"))
        sizes[tool_set] = (token_count(system_prompt(tool_set == "compact")),
                           token_count(tools))
    return sizes


def main() -> None:
    args = counts(__doc__, packets=5000, turns=200, cancels=20)
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

        targets = {"core": 1500, "compact": 800, "full": None}
        for tool_set, (system, tools) in request_sizes().items():
            target = f"target <= {targets[tool_set]:,}" if targets[tool_set] else \
                "only in a turn that asks for maintenance"
            print(f"instructions + tool schemas, {tool_set} set: {system + tools:,} tokens "
                  f"({system} instructions, {tools} tools; {counted_with()}) ({target})")
        client.shutdown()
    llm.close()


if __name__ == "__main__":
    main()
