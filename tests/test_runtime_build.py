"""Building the runtime from the window in a source checkout: the build script runs in a
process of its own, its progress lines become `runtime_build` events, Stop ends it and
its children, and what is missing to build is said before anything starts. A stand-in
script plays the build (the real one takes minutes; CI runs it once in `.ci/run`); the
progress lines it prints are the real script's (`packaging/build_runtime.py`)."""

from __future__ import annotations

import queue
import sys
import textwrap
from pathlib import Path

import pytest

from core.events import Event
from core.models import runtime_build
from core.protocol.packets import Packet, PacketType
from tests.conftest import make_dispatcher, told_until

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "packaging"))
import build_runtime


def stand_in(tmp_path: Path, seconds_per_step: float = 0.0) -> Path:
    """A build script that says the real one's progress lines and makes a `llama-server`
    where the runtime is looked for."""
    script = tmp_path / "build_runtime.py"
    script.write_text(textwrap.dedent(f"""\
        import os, sys, time
        from pathlib import Path
        assert sys.argv[1] == "--jobs" and int(sys.argv[2]) >= 1
        for phase, percent in [("fetching", 0), ("configuring", 0), ("building", 5),
                               ("building", 50), ("building", 100), ("installing", 100)]:
            print({build_runtime.PROGRESS!r}.format(phase=phase, percent=percent),
                  flush=True)
            time.sleep({seconds_per_step})
        folder = Path(os.environ["TRULYMEM_RUNTIME_DIR"])
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "llama-server").write_text("#!/bin/sh\\n")
        (folder / "llama-server").chmod(0o755)
        """))
    return script


@pytest.fixture
def backend(tmp_path, monkeypatch):
    monkeypatch.setenv("TRULYMEM_RUNTIME_DIR", str(tmp_path / "runtime"))
    home = tmp_path / "home"
    dispatcher = make_dispatcher(home / "graph_memory.db", home / "config.json", home=home)
    told: queue.Queue = queue.Queue()
    dispatcher.backend.events = lambda event, data: told.put((event, data))
    dispatcher.backend.open()
    yield dispatcher, told
    dispatcher.backend.close()


def ask(dispatcher, type_: PacketType) -> dict:
    return dispatcher.handle(Packet.make(type_, {})).body


def build_events(told: queue.Queue, last: str) -> list[dict]:
    return told_until(told, Event.RUNTIME_BUILD, last)


def test_the_runtime_is_built_with_its_progress_told(backend, tmp_path, monkeypatch):
    dispatcher, told = backend
    made = stand_in(tmp_path)  # once: rewritten mid-build, it ran empty
    monkeypatch.setattr(runtime_build, "script", lambda: made)
    monkeypatch.setattr(runtime_build, "which", lambda name: f"/usr/bin/{name}")
    before = ask(dispatcher, PacketType.LOCAL_MODELS)["data"]["runtime"]
    assert before["here"] is False and before["buildable"] and before["missing"] == []
    assert before["estimate_s"] > 0 and before["command"] == runtime_build.COMMAND
    assert ask(dispatcher, PacketType.BUILD_RUNTIME)["success"]
    events = build_events(told, "done")
    assert [e["phase"] for e in events][:2] == ["fetching", "configuring"]
    halfway = next(e for e in events if e["phase"] == "building" and e["done"] == 0.5)
    assert halfway["seconds_left"] >= 0
    assert ask(dispatcher, PacketType.LOCAL_MODELS)["data"]["runtime"]["here"] is True


def test_a_build_is_stopped_with_its_children(backend, tmp_path, monkeypatch):
    dispatcher, told = backend
    made = stand_in(tmp_path, 30)  # once: rewritten mid-build, it ran empty
    monkeypatch.setattr(runtime_build, "script", lambda: made)
    monkeypatch.setattr(runtime_build, "which", lambda name: f"/usr/bin/{name}")
    ask(dispatcher, PacketType.BUILD_RUNTIME)
    build_events(told, "fetching")
    running = ask(dispatcher, PacketType.LOCAL_MODELS)["data"]["runtime"]["building"]
    assert running["phase"] == "fetching"
    assert ask(dispatcher, PacketType.STOP_RUNTIME_BUILD)["success"]
    build_events(told, "cancelled")
    assert ask(dispatcher, PacketType.LOCAL_MODELS)["data"]["runtime"]["building"] is None
    refused = ask(dispatcher, PacketType.STOP_RUNTIME_BUILD)
    assert not refused["success"] and refused["code"] == "nothing_to_do"


def test_what_the_build_needs_is_said_before_it_starts(backend, tmp_path, monkeypatch):
    dispatcher, _told = backend
    made = stand_in(tmp_path)  # once: rewritten mid-build, it ran empty
    monkeypatch.setattr(runtime_build, "script", lambda: made)
    monkeypatch.setattr(runtime_build, "which",
                        lambda name: None if name in ("cmake", "make", "ninja") else name)
    state = ask(dispatcher, PacketType.LOCAL_MODELS)["data"]["runtime"]
    assert state["missing"] == ["cmake", "make"]
    refused = ask(dispatcher, PacketType.BUILD_RUNTIME)
    assert not refused["success"] and "sudo apt-get install cmake make" in refused["error"]
    monkeypatch.setattr(runtime_build, "script", lambda: None)  # a copy with no script
    refused = ask(dispatcher, PacketType.BUILD_RUNTIME)
    assert not refused["success"] and "the .deb ship" in refused["error"]


def test_a_failed_build_says_its_last_words(backend, tmp_path, monkeypatch):
    dispatcher, told = backend
    broken = tmp_path / "broken.py"
    broken.write_text("print('CMake Error: no C++ compiler found'); raise SystemExit(1)\n")
    monkeypatch.setattr(runtime_build, "script", lambda: broken)
    monkeypatch.setattr(runtime_build, "which", lambda name: f"/usr/bin/{name}")
    ask(dispatcher, PacketType.BUILD_RUNTIME)
    failed = build_events(told, "failed")[-1]
    assert "no C++ compiler found" in failed["error"]


def test_the_real_script_reads_make_and_ninja_progress(capsys):
    """Its compile step turns the build tool's counters into progress lines, each once."""
    for lines, said in (
            (["[ 45%] Building CXX object a.o", "[ 45%] Building CXX object b.o",
              "[100%] Linking CXX executable"], ["45", "100"]),  # make
            (["[12/48] Building CXX object a.o", "warning: unused", "[48/48] Linking"],
             ["25", "100"])):  # ninja
        build_runtime.compile_all([sys.executable, "-c", f"print({chr(10).join(lines)!r})"])
        out = capsys.readouterr().out.split()
        assert out == [word for p in said for word in ("progress:", "building", p + "%")]
    with pytest.raises(build_runtime.subprocess.CalledProcessError):
        build_runtime.compile_all([sys.executable, "-c", "raise SystemExit(2)"])


def test_the_estimate_shares_the_measured_build_over_the_cores():
    assert runtime_build.estimate_seconds(2) == runtime_build.MEASURED_S
    assert runtime_build.estimate_seconds(4) == round(runtime_build.MEASURED_S / 2)
    assert runtime_build.estimate_seconds(64) == runtime_build.estimate_seconds(8)
