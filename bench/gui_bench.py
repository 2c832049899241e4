"""Window benchmark: the GUI event loop during a slow streamed turn, start to a usable
window, and loading and scrolling a 2,000-message history.

    QT_QPA_PLATFORM=offscreen python bench/gui_bench.py [--starts N]

Targets: longest event-loop gap during a turn < 50 ms (a token every 20 ms, with tool
calls); start to usable window < 1.5 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from PySide6.QtWidgets import QApplication
from qt_probe import GapProbe, open_ready, wait

from app import gui
from core.config import Config, save_config
from core.store import GraphStore
from core.testing.loopback_llm import ScriptedOpenAIServer
from core.turn.history import History

ROOT = Path(__file__).resolve().parent.parent


def streamed_turn_gap(app: QApplication, folder: Path) -> tuple[float, int, float]:
    llm = ScriptedOpenAIServer()
    save_config(folder / "config.json", Config(api_key="sk-bench", base_url=llm.base_url,
                                               model="bench"))
    commits = [{"name": "memory_commit", "arguments": {"triplets": [
        {"subject": "user", "relation": "likes", "object": f"tea {i}"}]}} for i in range(3)]
    llm.play({"text": "Let me note that. ", "chunk_delay": 0.02, "tool_calls": commits},
             {"text": "Here is a long streamed answer, one token at a time. " * 12,
              "chunk_delay": 0.02})
    window = open_ready(app, folder)
    window.trace_action.setChecked(True)
    probe = GapProbe()
    probe.start()
    started = time.perf_counter()
    window.pane.input.setPlainText("Please remember the teas I like and tell me a story")
    window.pane.send_typed()
    wait(app, lambda: not window.turn_running)
    seconds = time.perf_counter() - started
    gap = probe.stop()
    ticks = len(probe.gaps)
    window.close()
    llm.close()
    return gap, ticks, seconds


def start_times(runs: int) -> list[float]:
    times = []
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(runs):
            started = time.perf_counter()
            output = subprocess.run(
                [sys.executable, "-m", "app.main", "--home", folder, "--exit-when-ready"],
                capture_output=True, text=True, cwd=ROOT, check=True).stdout
            assert "ready" in output, output
            times.append(time.perf_counter() - started)
    return times


def long_history(app: QApplication, folder: Path) -> tuple[float, float, float]:
    store = GraphStore(folder / "graph_memory.db")
    history = History(store)
    with store.conn:
        for i in range(1000):
            history.append("user", f"Question {i}: what do you know about **topic {i}**?")
            history.append("assistant", f"About topic {i}:\n\n- a first point\n- a second "
                           f"point with `code {i}`\n\nAnd a closing line of text.")
    store.close()
    started = time.perf_counter()
    window = open_ready(app, folder)
    loaded = time.perf_counter() - started
    view, chat = window.pane.view, window.chat
    bar = view.verticalScrollBar()
    probe = GapProbe()
    probe.start()
    started = time.perf_counter()
    while chat.older or bar.value() > 0:
        bar.setValue(max(0, bar.value() - view.viewport().height()))
        app.processEvents()
    scrolled = time.perf_counter() - started
    gap = probe.stop()
    window.close()
    return loaded, scrolled, gap


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=5)
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    app = gui.make_application()
    with tempfile.TemporaryDirectory() as folder:
        gap, ticks, seconds = streamed_turn_gap(app, Path(folder))
    print(f"longest event-loop gap during a streamed turn ({seconds:.1f} s, {ticks} probe "
          f"ticks): {gap:.1f} ms (target < 50 ms)")
    times = start_times(args.starts)
    print(f"start to usable window ({args.starts} runs, new process each): median "
          f"{statistics.median(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms "
          "(target < 1,500 ms)")
    with tempfile.TemporaryDirectory() as folder:
        loaded, scrolled, gap = long_history(app, Path(folder))
    print(f"2,000-message history: window usable in {loaded * 1000:.0f} ms; scrolled from "
          f"the newest to the oldest, page by page, in {scrolled * 1000:.0f} ms with the "
          f"longest stall {gap:.1f} ms")


if __name__ == "__main__":
    main()
