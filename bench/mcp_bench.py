"""MCP server benchmark: a tool call's round trip over stdio and HTTP, and how soon the
window shows a change another program made.

    QT_QPA_PLATFORM=offscreen python bench/mcp_bench.py [--facts N] [--calls N]

The memory holds N facts (default 10,000, written by plain SQL), recall by words only so
that the figures are the server's own. Prints p50 and p99 of `memory_recall` and of
`memory_commit` through the SDK's client, over `trulymem mcp` on stdio and on
`trulymem mcp --http`, the server's start (process launch to an initialised session), and
the time from an app's commit returning to the window's backend announcing it
(`memory_changed`, through the QTimer that reads `PRAGMA data_version`).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from PySide6.QtWidgets import QApplication

from app.backend_host import BackendHost
from core.store import GraphStore
from core.store.text import normalize_name

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "bench-token-0123456789abcdef"
WORDS = "tea chess Paris jazz cello Globex Tokyo bicycle nurse garden piano river".split()


def make_home(folder: Path, facts: int) -> Path:
    home = folder / "home"
    home.mkdir()
    (home / "config.json").write_text(json.dumps({
        "share_memory": True, "recall_by_meaning": False, "share_token": TOKEN}), "utf-8")
    store = GraphStore(home / "graph_memory.db")
    rng = random.Random(5)
    now = time.time()
    with store.conn:
        names = [f"person {n}" for n in range(facts // 3)] + WORDS
        store.conn.executemany(
            "INSERT INTO nodes(name, norm_name, kind, mention_count, created_at, updated_at)"
            " VALUES (?, ?, 'entity', 1, ?, ?)",
            [(n, normalize_name(n), now, now) for n in names])
        count = len(names)
        store.conn.executemany(
            "INSERT OR IGNORE INTO edges(source_id, relation, norm_relation, target_id,"
            " category, status, confidence, mention_count, created_at, updated_at)"
            " VALUES (?, 'likes', 'likes', ?, 'general', 'active', 1.0, 1, ?, ?)",
            [(rng.randrange(1, count + 1), rng.randrange(1, count + 1), now, now)
             for _ in range(facts)])
    store.close()
    return home


def percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered):6.2f} ms   p99 {p99:6.2f} ms   (n={len(samples)})"


async def measure(client: Client, calls: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"memory_recall": [], "memory_commit": []}
    for n in range(calls):
        for tool, args in (
                ("memory_recall", {"query_intent": WORDS[n % len(WORDS)]}),
                ("memory_commit", {"triplets": [{"subject": "User", "relation": "noted",
                                                 "object": f"bench item {n}"}]})):
            started = time.perf_counter()
            result = await client.call_tool(tool, args)
            times[tool].append((time.perf_counter() - started) * 1000)
            assert not result.is_error, result.content[0].text
    return times


def client_info() -> types.Implementation:
    return types.Implementation(name="bench", version="1")


def over_stdio(home: Path, calls: int) -> tuple[float, dict[str, list[float]]]:
    server = StdioServerParameters(command=sys.executable, cwd=str(ROOT),
                                   args=["-m", "app.main", "mcp", "--home", str(home)])

    async def run() -> tuple[float, dict[str, list[float]]]:
        started = time.perf_counter()
        async with Client(server, client_info=client_info()) as client:
            ready = (time.perf_counter() - started) * 1000
            return ready, await measure(client, calls)

    return anyio.run(run)


def over_http(home: Path, calls: int) -> tuple[float, dict[str, list[float]]]:
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "app.main", "mcp", "--http", "--port", "0", "--home",
         str(home)], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        url = re.search(r"http://\S+/mcp", process.stderr.readline()).group(0)
        ready = (time.perf_counter() - started) * 1000

        async def run() -> dict[str, list[float]]:
            async with httpx2.AsyncClient(
                    headers={"Authorization": f"Bearer {TOKEN}"}) as http, \
                    Client(streamable_http_client(url, http_client=http),
                           client_info=client_info()) as client:
                return await measure(client, calls)

        return ready, anyio.run(run)
    finally:
        process.terminate()
        process.wait(30)


def app_commits(home: Path, changes: int, go: threading.Event,
                committed: dict[int, float], done: threading.Event) -> None:
    """The other app: one commit each time `go` is set; notes when each call returned."""
    server = StdioServerParameters(command=sys.executable, cwd=str(ROOT),
                                   args=["-m", "app.main", "mcp", "--home", str(home)])

    async def run() -> None:
        async with Client(server, client_info=client_info()) as client:
            for n in range(changes):
                go.wait()
                go.clear()
                result = await client.call_tool("memory_commit", {"triplets": [{
                    "subject": "User", "relation": "saw", "object": f"notice {n}"}]})
                returned = time.perf_counter()
                assert not result.is_error
                store = GraphStore(home / "graph_memory.db")
                try:
                    newest = store.query_one("SELECT max(id) AS id FROM change_log")
                finally:
                    store.close()
                committed[newest["id"]] = returned

    try:
        anyio.run(run)
    finally:
        done.set()


def window_notice(home: Path, changes: int) -> list[float]:
    """An app commits; the window's backend announces it. Milliseconds between the two."""
    qt = QApplication.instance() or QApplication([])
    host = BackendHost(home)
    seen: dict[int, float] = {}
    host.progress.connect(lambda event, data: seen.setdefault(
        data["change_id"], time.perf_counter())
        if event == "memory_changed" and data["actor"] == "mcp:bench" else None)
    ready: list[bool] = []
    host.ready.connect(lambda _status: ready.append(True))
    host.start()
    deadline = time.monotonic() + 60
    while not ready and time.monotonic() < deadline:
        qt.processEvents()
        time.sleep(0.002)
    committed: dict[int, float] = {}
    done = threading.Event()
    go = threading.Event()
    threading.Thread(target=app_commits, args=(home, changes, go, committed, done),
                     daemon=True).start()
    rng = random.Random(3)
    for _ in range(changes):
        go.set()
        before = len(seen)
        deadline = time.monotonic() + 30
        while len(seen) == before and time.monotonic() < deadline:
            qt.processEvents()
            time.sleep(0.001)
        pause = time.monotonic() + rng.uniform(0.05, 0.3)  # changes come at any moment
        while time.monotonic() < pause:
            qt.processEvents()
            time.sleep(0.001)
    done.wait(30)
    host.shutdown()
    return [(seen[i] - committed[i]) * 1000 for i in committed if i in seen]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--changes", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        home = make_home(Path(folder), args.facts)
        print(f"memory of {args.facts:,} facts, {args.calls} calls of each tool\n")
        for name, run in (("stdio", over_stdio), ("HTTP", over_http)):
            ready, times = run(home, args.calls)
            print(f"{name}: server ready in {ready:.0f} ms")
            for tool, samples in times.items():
                print(f"  {tool:15s} {percentiles(samples)}")
        delays = window_notice(home, args.changes)
        print(f"\nan app's change to the window's announcement: {percentiles(delays)}"
              f"   max {max(delays):.0f} ms")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
