"""How fast reads are answered while the backend imports 1,000,000 nodes and edges.

    python bench/import_reads_bench.py [--nodes N] [--every SECONDS]

A headless BackendServer imports the export on its worker; meanwhile this script asks,
every `--every` seconds, for the status, the counts, the Memory tab's node list, the
chat history and a recall (memory_recall through EXECUTE_TOOL); the read lane answers
them on its own connection. It prints each read's p50, p99 and slowest answer, how many
were asked, and the import's own time. The target is every read answered within 100 ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core import BackendClient, BackendServer  # noqa: E402
from core.protocol.packets import PacketType  # noqa: E402
from core.testing.sample_export import write_export  # noqa: E402

READS = {
    "status": (PacketType.GET_STATUS, {}),
    "counts": (PacketType.MEMORY_STATE, {}),
    "node list": (PacketType.LIST_NODES, {"query": "Thing 5"}),
    "history": (PacketType.GET_HISTORY, {}),
    "recall": (PacketType.EXECUTE_TOOL, {"tool_name": "memory_recall",
                                         "arguments": {"query_intent": "Thing 5"}}),
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--every", type=float, default=0.25)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        export = write_export(Path(folder) / "export.json", args.nodes, args.nodes)
        print(f"export of {args.nodes:,} nodes and edges written in "
              f"{time.perf_counter() - started:.1f} s")
        phase = {"now": "waiting"}
        server = BackendServer(home=Path(folder) / "home",
                               progress=lambda event, data: phase.update(
                                   now=data.get("phase", phase["now"])))
        server.start(api_key=None)
        client = BackendClient(server)
        client.get_history()  # the first conversation is made before the import
        done: dict = {}

        def run_import() -> None:
            begun = time.perf_counter()
            done["answer"] = client.request(PacketType.IMPORT_MEMORY, {"path": str(export)})
            done["seconds"] = time.perf_counter() - begun

        importer = threading.Thread(target=run_import)
        importer.start()
        timings: dict[str, list[float]] = {name: [] for name in READS}
        by_phase: dict[str, list[float]] = {}
        failures: list[str] = []
        pause = threading.Event()
        while importer.is_alive():
            for name, (kind, body) in READS.items():
                asked = time.perf_counter()
                answer = client.request(kind, body)
                took = (time.perf_counter() - asked) * 1000
                timings[name].append(took)
                by_phase.setdefault(phase["now"], []).append(took)
                if not answer["success"]:
                    failures.append(f"{name}: {answer['error']}")
            pause.wait(args.every)
        importer.join()
        server.shutdown()
    answer = done["answer"]
    print(f"import: {'ok' if answer['success'] else answer['error']} in "
          f"{done['seconds']:.1f} s")
    print(f"{'read':<10} {'asked':>6} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for name, values in timings.items():
        ordered = sorted(values)
        p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
        print(f"{name:<10} {len(values):>6} {statistics.median(values):>8.1f} {p99:>8.1f}"
              f" {max(values):>8.1f}")
    print("slowest read in each phase of the import: " + ", ".join(
        f"{name} {max(values):.1f} ms ({len(values)})" for name, values in by_phase.items()))
    slowest = max(max(values) for values in timings.values())
    print(f"slowest read: {slowest:.1f} ms (target 100 ms): "
          f"{'met' if slowest <= 100 else 'missed'}; failed reads: {len(failures)}")
    for failure in failures[:5]:
        print("  ", failure)


if __name__ == "__main__":
    main()
