"""The base URL `local`: the app's own runtime serving a model of the catalogue.

`serve(model_id)` gives the loopback address of a `llama-server` running that model,
starting it when needed (one per model, shared by everything in this process), after
checking what the computer must have: the runtime, the model's checked file, enough free
memory and a CPU it runs on. Said plainly when not: "this computer has 3.1 GB of memory
free; this model needs 2.5 GB". Every server is stopped when the process ends."""

from __future__ import annotations

import atexit
import threading
from pathlib import Path
from typing import Any

from core.i18n import tr
from core.models import catalogue, download
from core.models.catalogue import Model, find, models_folder
from core.models.runtime import LocalServer, server_program

LOCAL = "local"  # the base URL that means the app's own runtime
_servers: dict[str, LocalServer] = {}
_lock = threading.Lock()


def is_own(base_url: str) -> bool:
    return base_url.strip().casefold() == LOCAL


def installed() -> list[str]:
    """The catalogue's models whose checked file is here."""
    folder = models_folder()
    return [m.id for m in catalogue.CATALOGUE if download.state(m, folder)["state"] == "installed"]


def free_memory_gb() -> float | None:
    """Memory the system can give a new program now (MemAvailable), or None unknown."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / (1 << 20)
    except (OSError, ValueError, IndexError):
        return None
    return None


def cpu_problem() -> str | None:
    """Why the runtime cannot run on this CPU, or None (every x86-64 CPU with SSE4.2
    has a backend in the build; other machines are not built for)."""
    try:
        flags = next((line for line in Path("/proc/cpuinfo").read_text().splitlines()
                      if line.startswith("flags")), "")
    except OSError:
        return None
    if flags and "sse4_2" not in flags.split():
        return tr("this computer's processor lacks SSE4.2, which the local runtime needs")
    return None


def problems(model: Model) -> list[str]:
    """What stops `model` from running here, in plain words (empty: it can)."""
    found = machine_problems(model)
    if download.state(model, models_folder())["state"] != "installed":
        found.insert(0, tr(
            "{model} is not fetched: `trulymem models get {model}`", model=model.id))
    return found


def machine_problems(model: Model, runtime: bool = True) -> list[str]:
    """What this computer lacks for `model`, its file aside: the runtime (unless
    `runtime` is False: the window says that once, with a button that builds it), free
    memory (not asked of a model already running: it holds its memory now), the CPU."""
    found = []
    if runtime and server_program() is None:
        found.append(tr("the local runtime (llama-server) is not built here: run "
                        "`python packaging/build_runtime.py` once"))
    free = free_memory_gb()
    if free is not None and free < model.ram_gb and not is_running(model.id):
        found.append(tr("this computer has {free} GB of memory free; {model} needs "
                        "{need} GB", free=f"{free:.1f}", model=model.id, need=model.ram_gb))
    cpu = cpu_problem()
    if cpu:
        found.append(cpu)
    return found


def is_running(model_id: str) -> bool:
    """Without the lock: a server starting holds it for as long as its model loads, and
    the window asks this meanwhile (a dict's get is atomic)."""
    server = _servers.get(model_id)
    return server is not None and server.alive()


def stop(model_id: str) -> None:
    """Stop the server of one model (its file is about to go)."""
    with _lock:
        server = _servers.pop(model_id, None)
    if server is not None:
        server.stop()


def serve(model_id: str, log_folder: Path) -> dict[str, Any]:
    """The loopback base URL of a server running `model_id` (see above)."""
    model = find(model_id)
    if model is None:
        return {"success": False, "error": tr(
            "no local model named {name}; the ids are: {ids}", name=model_id,
            ids=", ".join(m.id for m in catalogue.CATALOGUE))}
    with _lock:
        server = _servers.get(model.id)
        if server is None:
            found = problems(model)
            if found:
                return {"success": False, "error": "; ".join(found)}
            server = LocalServer(server_program(), models_folder() / model.file,
                                 log_folder / f"llama-server-{model.id}.log")
            _servers[model.id] = server
        return server.ensure()


def stop_all() -> None:
    with _lock:
        for server in _servers.values():
            server.stop()
        _servers.clear()


atexit.register(stop_all)
