"""Import and export benchmark on an export of 1,000,000 nodes and 1,000,000 edges.

    python bench/import_bench.py [--nodes N] [--edges N]

Each step runs in its own process, so its peak resident memory (ru_maxrss) is its own:
import into an empty memory, export of that memory, undo of the whole import, and an
import that merges the file into a memory that already holds a few hundred facts. The
target is memory that does not grow with the file (it was 6.1 GB for this file when the
import read the whole file at once) and a window that stays usable (the import runs on
the backend thread and reports progress; see tests/gui).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.store import GraphStore  # noqa: E402
from core.store.exchange import export_json, import_json  # noqa: E402
from core.testing.sample_export import write_export  # noqa: E402
from core.tools import ToolExecutor  # noqa: E402


def step(name: str, folder: Path) -> dict:
    """One measured step, run in this (child) process."""
    started = time.perf_counter()
    store = GraphStore(folder / f"{name}.db" if name != "export" else folder / "empty.db")
    if name == "empty":
        result = import_json(store, folder / "export.json")
        (folder / "change_id").write_text(str(result["change_id"]))
    elif name == "export":
        result = export_json(store, folder / "again.json")
    elif name == "undo":
        store.close()
        shutil.copyfile(folder / "empty.db", folder / "undo.db")
        store = GraphStore(folder / "undo.db")
        started = time.perf_counter()
        result = {"undo": store.undo(int((folder / "change_id").read_text()))}
    else:  # merge into a memory that already has a few hundred facts
        tools = ToolExecutor(store)
        nodes = int((folder / "nodes").read_text())
        for i in range(1, 301):  # half of these facts are in the file too
            tools.execute("memory_commit", {"triplets": [
                {"subject": f"Thing {i} 東西", "relation": "relates to",
                 "object": f"Thing {i * 7919 % nodes + 1 if i % 2 else i + 1} 東西"},
                {"subject": f"Person {i}", "relation": "likes", "object": "tea"}]})
        started = time.perf_counter()
        result = import_json(store, folder / "export.json")
    seconds = time.perf_counter() - started
    store.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": seconds, "peak_mb": peak,
            "result": {k: v for k, v in result.items() if k != "summary"}}


def run_child(name: str, folder: Path) -> dict:
    output = subprocess.run([sys.executable, __file__, "--step", name, str(folder)],
                            check=True, capture_output=True, text=True).stdout
    return json.loads(output.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--edges", type=int, default=1_000_000)
    parser.add_argument("--step", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.step:
        print(json.dumps(step(args.step[0], Path(args.step[1]))))
        return
    with tempfile.TemporaryDirectory(prefix="trulymem-import-bench-") as name:
        folder = Path(name)
        started = time.perf_counter()
        export = write_export(folder / "export.json", args.nodes, args.edges)
        (folder / "nodes").write_text(str(args.nodes))
        print(f"export file: {args.nodes:,} nodes, {args.edges:,} edges, "
              f"{export.stat().st_size / 1e6:,.0f} MB (written in "
              f"{time.perf_counter() - started:.1f} s)")
        labels = {"empty": "import into an empty memory",
                  "export": "export of that memory",
                  "undo": "undo of the whole import",
                  "merge": "import merged into a memory of 600 facts"}
        for name_ in ("empty", "export", "undo", "merge"):
            figures = run_child(name_, folder)
            print(f"{labels[name_]}: {figures['seconds']:.1f} s, peak RSS "
                  f"{figures['peak_mb']:,.0f} MB  {figures['result']}")
        database = (folder / "empty.db").stat().st_size / 1e6
        print(f"memory file after the import: {database:,.0f} MB")


if __name__ == "__main__":
    main()
