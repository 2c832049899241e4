"""Sync between real `trulymem` processes on separate data folders and one shared folder,
and a process killed (SIGKILL) while it writes or applies a file: nothing is half done,
and the next run finishes the work."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from core.store import GraphStore

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent


def trulymem(*arguments: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "app.main", *arguments], check=False,
                          cwd=ROOT,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "TRULYMEM_API_KEY": ""})
    assert done.returncode == 0, done.stderr
    return done


def remember(home: Path, *facts: tuple[str, str, str]) -> None:
    trulymem("--home", str(home), "--tool", "memory_commit", json.dumps({"triplets": [
        {"subject": s, "relation": r, "object": o} for s, r, o in facts]}))


def facts(home: Path) -> list[tuple[str, str, str]]:
    store = GraphStore(home / "graph_memory.db")
    try:
        return sorted((r["s"], r["relation"], r["t"]) for r in store.query(
            "SELECT s.name AS s, e.relation, t.name AS t FROM edges e JOIN nodes s ON"
            " s.id = e.source_id JOIN nodes t ON t.id = e.target_id WHERE e.status ="
            " 'active'"))
    finally:
        store.close()


def test_two_processes_on_two_homes_share_one_memory_through_a_folder(tmp_path):
    laptop, desktop, shared = tmp_path / "laptop", tmp_path / "desktop", tmp_path / "Sync"
    remember(laptop, ("User", "lives in", "Hangzhou"))
    remember(desktop, ("User", "works at", "Acme"))
    started = trulymem("sync", "--home", str(laptop), "--folder", str(shared),
                       "--name", "laptop")
    code = started.stdout.strip().splitlines()[-1]
    assert len(code.replace("-", "")) == 26
    joined = trulymem("sync", "--home", str(desktop), "--folder", str(shared), "--code",
                      code, "--name", "desktop")
    assert "applied 1 files" in joined.stdout
    trulymem("sync", "--home", str(laptop))
    expected = [("User", "lives in", "Hangzhou"), ("User", "works at", "Acme")]
    assert facts(laptop) == facts(desktop) == expected
    remember(desktop, ("User", "likes", "tea"))
    wrote = trulymem("sync", "--home", str(desktop)).stdout
    assert wrote.startswith("sent ")
    trulymem("sync", "--home", str(laptop))
    assert ("User", "likes", "tea") in facts(laptop)
    status = trulymem("sync", "--home", str(laptop), "--status").stdout
    assert "desktop" in status and "0 conflicts, 0 files refused" in status
    assert not list(shared.rglob("*.db*"))  # the live database never travels


# A process that stops half way, for the test to kill: it prints HALF and waits.
HALF_WAY = r"""
import sys
from pathlib import Path
from core.store import GraphStore
from core.sync import folder, incoming
from core.sync.service import DeviceSync

home, what = Path(sys.argv[1]), sys.argv[2]

def stop_here():
    print("HALF", flush=True)
    sys.stdin.readline()  # killed while it waits

if what == "write":
    real = folder.write_whole
    def half_written(path, data):
        partial = path.with_name(f".{path.name}.partial")
        partial.write_bytes(data[: len(data) // 2])
        stop_here()
    folder.write_whole = half_written
else:
    real_apply = incoming._Applier.apply
    seen = []
    def half_applied(self, change):
        real_apply(self, change)
        seen.append(change)
        if len(seen) == 40:
            stop_here()
    incoming._Applier.apply = half_applied

store = GraphStore(home / "graph_memory.db")
sync = DeviceSync(store, home)
sync.write() if what == "write" else sync.apply_all()
"""


def _kill_half_way(home: Path, what: str) -> None:
    process = subprocess.Popen([sys.executable, "-c", HALF_WAY, str(home), what], cwd=ROOT,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().strip() == "HALF"
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL


def _pair(tmp_path: Path) -> tuple[Path, Path, Path]:
    laptop, desktop, shared = tmp_path / "laptop", tmp_path / "desktop", tmp_path / "Sync"
    remember(laptop, ("User", "lives in", "Hangzhou"))
    code = trulymem("sync", "--home", str(laptop), "--folder", str(shared)).stdout \
        .strip().splitlines()[-1]
    trulymem("sync", "--home", str(desktop), "--folder", str(shared), "--code", code)
    return laptop, desktop, shared


def test_killed_while_writing_a_file_the_changes_wait_and_the_next_sync_sends_them(
        tmp_path):
    laptop, desktop, shared = _pair(tmp_path)
    many = [(f"Friend {n}", "knows", "User") for n in range(50)]
    remember(laptop, *many)
    _kill_half_way(laptop, "write")
    device = next(p for p in shared.iterdir() if (p / ".0000000002.tmsync.partial").exists())
    assert not (device / "0000000002.tmsync").exists()  # only the hidden half file
    trulymem("sync", "--home", str(laptop))  # the changes were still waiting
    trulymem("sync", "--home", str(desktop))
    assert len(facts(desktop)) == 51
    status = trulymem("sync", "--home", str(desktop), "--status").stdout
    assert "0 files refused" in status


def test_killed_while_applying_a_file_nothing_is_half_applied(tmp_path):
    laptop, desktop, _shared = _pair(tmp_path)
    remember(laptop, *[(f"Friend {n}", "knows", "User") for n in range(50)])
    trulymem("sync", "--home", str(laptop))
    before = facts(desktop)
    _kill_half_way(desktop, "apply")
    assert facts(desktop) == before  # the file's transaction never committed
    trulymem("sync", "--home", str(desktop))
    assert len(facts(desktop)) == 51
    store = GraphStore(desktop / "graph_memory.db")
    try:
        assert store.integrity_problems() == []
    finally:
        store.close()


def test_processes_lose_no_fact_when_the_folder_is_lost_and_a_pipe_hangs_nothing(tmp_path):
    """Three homes through `trulymem sync`; the shared folder deleted and made again
    between syncs; a pipe put under a device's next file name: every fact written before
    reaches every home, and no sync hangs."""
    import shutil

    laptop, desktop, shared = _pair(tmp_path)
    phone = tmp_path / "phone"
    remember(phone, ("User", "has", "a phone"))
    code = json.loads((laptop / "sync.key").read_text())["code"]
    trulymem("sync", "--home", str(phone), "--folder", str(shared), "--code", code)
    written = [(f"Friend {n}", "knows", "User") for n in range(12)]
    for n, fact in enumerate(written):
        remember(laptop if n % 2 else desktop, fact)
        trulymem("sync", "--home", str(laptop if n % 2 else desktop))
    shutil.rmtree(shared)  # the share re-created, empty
    shared.mkdir()
    said = trulymem("sync", "--home", str(laptop)).stdout
    assert "were gone from the folder" in said and "written again" in said
    for home in (desktop, phone, laptop, desktop, phone, laptop):
        trulymem("sync", "--home", str(home))
    everything = set(written) | {("User", "lives in", "Hangzhou"), ("User", "has", "a phone")}
    for home in (laptop, desktop, phone):
        assert everything <= set(facts(home)), home.name
    folder = next(p for p in shared.iterdir() if p.is_dir())
    numbers = sorted(int(p.stem) for p in folder.glob("0*.tmsync"))
    os.mkfifo(folder / f"{(numbers[-1] if numbers else 0) + 1:010d}.tmsync")
    for home in (laptop, desktop, phone):  # each returns (the run's timeout is 120 s)
        trulymem("sync", "--home", str(home))
