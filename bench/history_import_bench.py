"""Importing a large ChatGPT export without building the memory: time and memory.

    python bench/history_import_bench.py [--conversations 10000] [--messages 20] [--zip]

An invented export (core/testing/past_exports.py) is written, then kept as
`trulymem import-history --conversations-only` keeps it: read once, a conversation at a
time, in one transaction. Prints the seconds, the peak of Python's own allocations
during the import (tracemalloc: bounded memory means it does not grow with the file),
and the rate. Target: 10,000 conversations under a minute.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.history_import.saving import keep
from core.store import GraphStore
from core.testing.past_exports import big_chatgpt_export


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=10_000)
    parser.add_argument("--messages", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="history-bench-") as folder:
        export = Path(folder) / "conversations.json"
        big_chatgpt_export(export, conversations=args.conversations, messages=args.messages)
        size = export.stat().st_size
        store = GraphStore(Path(folder) / "memory.db")
        try:
            tracemalloc.start()
            started = time.perf_counter()
            kept = keep(store, export)
            seconds = time.perf_counter() - started
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
        finally:
            store.close()
    print(f"export: {args.conversations:,} conversations, {kept['messages']:,} messages, "
          f"{size / 1e6:.1f} MB")
    print(f"import without memory building: {seconds:.1f} s "
          f"({kept['conversations'] / seconds:,.0f} conversations/s), "
          f"peak Python allocations {peak / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
