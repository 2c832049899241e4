"""How fast `trulymem --toggle` and `--ask` hand over to the running window.

A key bound to `trulymem --toggle` starts a new Python process each time: what it imports
is what the person waits for. This starts a stand-in for the window's summoning socket
(the same path and line protocol, `app.desktop.summon`), runs `trulymem --toggle` and
`trulymem --ask TEXT` as processes, and prints the median wall time of each, the time
`python -X importtime` gives `app.main`, and what the stand-in received.

    python bench/handover_bench.py [--runs N]

Target: under 100 ms of imports; the whole process, Python's own start included, is
printed beside it.
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.desktop import summon  # noqa: E402

ENTRY = ["-c", "import sys; from app.main import main; sys.exit(main())"]


class StandIn:
    """Answers "ok" on the window's socket for `home` and keeps each line it got."""

    def __init__(self, home: Path) -> None:
        self.path = summon.socket_path(home)
        self.lines: list[str] = []
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(self.path)
        self.server.listen(8)
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            with connection:
                self.lines.append(connection.makefile("rb").readline().decode("utf-8"))
                connection.sendall(b"ok\n")

    def close(self) -> None:
        self.server.close()
        os.unlink(self.path)


def timed(arguments: list[str], home: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, *ENTRY, "--home", str(home), *arguments],
                          cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    if done.returncode != 0:
        raise SystemExit(f"trulymem {' '.join(arguments)} failed: {done.stderr}")
    return time.perf_counter() - started


def import_ms() -> float:
    """The cumulative import time of app.main, from Python's own -X importtime."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", "import app.main"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)
    found = re.search(r"\|\s*(\d+) \| app\.main$", done.stderr, re.MULTILINE)
    return int(found.group(1)) / 1000 if found else float("nan")


def python_alone() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="handover-") as folder:
        home = Path(folder) / "home"
        home.mkdir()
        stand_in = StandIn(home)
        try:
            toggles = [timed(["--toggle"], home) for _ in range(args.runs)]
            asks = [timed(["--ask", "where did I park?"], home) for _ in range(args.runs)]
        finally:
            stand_in.close()
        imports = statistics.median(import_ms() for _ in range(args.runs))
        bare = statistics.median(python_alone() for _ in range(args.runs))
        got = len(stand_in.lines)
    print(f"imports of app.main: {imports:.0f} ms (median of {args.runs})")
    print(f"trulymem --toggle: {statistics.median(toggles) * 1000:.0f} ms, --ask: "
          f"{statistics.median(asks) * 1000:.0f} ms, a bare python -c pass: {bare * 1000:.0f} ms")
    print(f"the window's socket got {got} of {2 * args.runs} wishes")
    if got != 2 * args.runs:
        return 1
    print(f"handover: imports {imports:.0f} ms (target < 100), toggle "
          f"{statistics.median(toggles) * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
