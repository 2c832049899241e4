"""Every benchmark runs in a quick mode, so none of them rots: each is started as a
person would start it, with small sizes, and must finish and print its figures. The
figures themselves are measured by running the benches in full (see the README)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
QUICK = {
    "backend_bench.py": ["--packets", "40", "--turns", "3", "--cancels", "2"],
    "graph_bench.py": ["--nodes", "300", "--edges", "900", "--inbox", "30"],
    "gui_bench.py": ["--starts", "1", "--nodes", "300"],
    "import_bench.py": ["--nodes", "500", "--edges", "500"],
    "import_reads_bench.py": ["--nodes", "1000", "--every", "0.02"],
    "handover_bench.py": ["--runs", "1"],
    "history_import_bench.py": ["--conversations", "200", "--messages", "6"],
    "locomo.py": ["--quick", "--judge-base-url", "loopback"],
    "local_runtime_bench.py": ["--quick"],  # the small real model where CI assembled it
    "local_first_answer_bench.py": ["--quick"],  # the same
    "mcp_bench.py": ["--facts", "50", "--calls", "5", "--changes", "3"],
    "recall_quality.py": ["--distractors", "60"],
    "store_bench.py": ["--sizes", "300", "--queries", "20", "--no-meaning"],
    "sync_bench.py": ["--facts", "200"],
    "conversation_eval.py": [],  # the scripted model
}
# Not run here: qt_probe.py is the window benches' shared helper, and
# repetition_probe.py measures a real local model's server.
NOT_BENCHES = {"qt_probe.py", "repetition_probe.py", "options.py"}  # helpers, a probe


def test_every_bench_has_a_quick_mode():
    benches = {p.name for p in (ROOT / "bench").glob("*.py")} - NOT_BENCHES
    assert benches == set(QUICK)


@pytest.mark.parametrize("bench", sorted(QUICK))
def test_the_bench_runs_and_prints_its_figures(bench, tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "TRULYMEM_HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, str(ROOT / "bench" / bench), *QUICK[bench]],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
                          check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert any(ch.isdigit() for ch in done.stdout), done.stdout[-2000:]


def test_locomo_measures_evidence_without_answers(tmp_path):
    """--evidence-only: every method's evidence recall, no answer asked for."""
    env = {**os.environ, "TRULYMEM_HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "locomo.py"), "--quick",
                           "--evidence-only"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = done.stdout.strip().splitlines()[-1]
    assert summary.startswith("LoCoMo evidence recall memory 1.00"), done.stdout[-2000:]
    shown = re.search(r"answer words shown memory (\S+) full-context (\S+) retrieval (\S+);",
                      summary)
    assert shown and all(0 < float(v) <= 1 for v in shown.groups()), summary


def test_answer_words_shown_counts_the_answers_own_words():
    """What the question says itself is not counted, a stem is a word, and an answer
    cut away counts as missing though its turn is there."""
    from core.eval.locomo import words_shown

    assert words_shown("Melanie: We adopted a puppy, Luna.", "a dog named Luna",
                       "What pets does Melanie have?") == 1 / 3  # "luna"; not "dog", "named"
    assert words_shown("Melanie: I painted a sunset.", "Painting sunsets",
                       "What did Melanie paint?") == 1.0  # "sunset" by stem; "paint" asked
    assert words_shown("Melanie: I went to a class. …", "pottery",
                       "What class did Melanie take?") == 0.0
    assert words_shown("anything", "Melanie", "What is Melanie's name?") is None


def test_locomo_asks_only_the_methods_named(tmp_path):
    """--methods: a method not asked is "-" in the summary, the others are measured."""
    env = {**os.environ, "TRULYMEM_HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "locomo.py"), "--quick",
                           "--methods", "memory,retrieval"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = done.stdout.strip().splitlines()[-1]
    found = re.match(r"LoCoMo F1 memory (\S+) full-context (\S+) retrieval (\S+);", summary)
    assert found, summary
    memory, full, retrieval = found.groups()
    assert full == "-" and float(memory) >= 0 and float(retrieval) >= 0, summary
    assert "full-context" not in "\n".join(done.stdout.splitlines()[2:-2]), done.stdout
