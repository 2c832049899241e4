"""Building the runtime once where it was not shipped (a source checkout), when a person
first picks a model of this computer: `packaging/build_runtime.py` in a process of its own,
its progress told as `runtime_build` events on the backend's own channel, with an estimate
from what the build took here. The packaged program and the `.deb` ship the runtime and
never build."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from shutil import which
from typing import Any

from core.events import Event
from core.i18n import tr
from core.models.runtime import server_program

Sink = Callable[[str, dict[str, Any]], None]
COMMAND = "python packaging/build_runtime.py"  # the documented way, from a terminal
MEASURED_S, MEASURED_CORES = 553, 2  # the build here, with make (ninja: 485 s in CI)
PROGRESS = re.compile(r"^progress: (\w+) (\d+)%")
# what the build needs, each as the programs that would do (the first is the one named)
TOOLS = (("cmake",), ("g++", "c++", "clang++"), ("make", "ninja"))


def script() -> Path | None:
    """The build script of a source checkout, or None (a packaged program has none)."""
    if getattr(sys, "frozen", False):
        return None
    path = Path(__file__).resolve().parents[2] / "packaging" / "build_runtime.py"
    return path if path.is_file() else None


def missing_tools() -> list[str]:
    return [names[0] for names in TOOLS if not any(which(name) for name in names)]


def estimate_seconds(cores: int | None = None) -> int:
    """What the build takes here: it compiles in parallel, so about the time measured on
    two cores shared out over this computer's (up to 8: linking and the slowest files
    do not share)."""
    cores = max(1, min(cores or os.cpu_count() or 1, 8))
    return round(MEASURED_S * MEASURED_CORES / cores)


def state(builder: RuntimeBuilder) -> dict[str, Any]:
    """Whether the runtime is here, and if not whether and how it can be built."""
    found = script()
    return {"here": server_program() is not None, "buildable": found is not None,
            "missing": missing_tools() if found else [], "command": COMMAND,
            "estimate_s": estimate_seconds(), "building": builder.running()}


class RuntimeBuilder:
    """At most one build at a time; `sink()` answers where its events go."""

    def __init__(self, sink: Callable[[], Sink]) -> None:
        self._sink = sink
        self._lock = threading.Lock()
        self._process: subprocess.Popen | None = None
        self._now: dict[str, Any] | None = None
        self._cancelled = False

    def start(self) -> dict[str, Any]:
        """Begin the build (nothing when one runs); `{"success": False, "error"}` when it
        cannot be done here, saying what to install."""
        found = script()
        if found is None:
            return {"success": False, "error": tr(
                "this copy of TrulyMEM has no runtime and cannot build one; the packaged "
                "program and the .deb ship it")}
        missing = missing_tools()
        if missing:
            return {"success": False, "error": tr(
                "building the runtime needs {tools}: `sudo apt-get install {tools}`",
                tools=" ".join(missing))}
        with self._lock:
            if self._process is None:
                self._cancelled = False
                self._now = {"phase": "fetching", "done": 0.0,
                             "seconds_left": estimate_seconds()}
                self._process = subprocess.Popen(
                    [sys.executable, str(found), "--jobs", str(os.cpu_count() or 1)],
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                    errors="replace", start_new_session=True)  # cmake's children go with it
                threading.Thread(target=self._follow, args=(self._process,),
                                 name="runtime build", daemon=True).start()
            return {"success": True, "data": dict(self._now or {})}

    def cancel(self) -> bool:
        with self._lock:
            process, self._cancelled = self._process, self._process is not None
        if process is None:
            return False
        with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
            os.killpg(process.pid, signal.SIGTERM)
        return True

    def running(self) -> dict[str, Any] | None:
        with self._lock:
            return dict(self._now) if self._now else None

    def _follow(self, process: subprocess.Popen) -> None:
        started, building_since = time.monotonic(), None
        last: deque[str] = deque(maxlen=4)  # the words a failure is told with
        for line in process.stdout:
            seen = PROGRESS.match(line)
            if not seen:
                if line.strip():
                    last.append(line.strip())
                continue
            phase, done = seen[1], int(seen[2]) / 100
            if phase == "building" and building_since is None:
                building_since = time.monotonic()
            self._tell(phase, done, self._left(started, building_since, done))
        code = process.wait()
        with self._lock:
            self._process, self._now, cancelled = None, None, self._cancelled
        if cancelled:
            self._sink()(Event.RUNTIME_BUILD, {"phase": "cancelled"})
        elif code == 0 and server_program() is not None:
            self._sink()(Event.RUNTIME_BUILD, {"phase": "done", "done": 1.0,
                                               "seconds": round(time.monotonic() - started)})
        else:
            self._sink()(Event.RUNTIME_BUILD, {"phase": "failed", "error": tr(
                "the runtime's build stopped ({code}): {words}", code=code,
                words=" ".join(last) or "?")})

    @staticmethod
    def _left(started: float, building_since: float | None, done: float) -> int:
        """Seconds left: the estimate until the compile has gone a tenth of its way, then
        what that took, carried forward."""
        if building_since is None or done < 0.1:
            return max(0, round(estimate_seconds() - (time.monotonic() - started)))
        return round((time.monotonic() - building_since) * (1 - done) / done)

    def _tell(self, phase: str, done: float, left: int) -> None:
        with self._lock:
            self._now = {"phase": phase, "done": done, "seconds_left": left}
        self._sink()(Event.RUNTIME_BUILD, {"phase": phase, "done": done, "seconds_left": left})
