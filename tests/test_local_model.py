"""A model of the app's own, end to end with the real runtime and a real model: fetched
from a loopback mirror (cut once, resumed, checked), started as a `llama-server` child,
a streamed turn that writes the memory, nothing but loopback contacted, stopped with the
memory, and never left behind when the app is killed.

Needs the runtime built (`python packaging/build_runtime.py`, or $TRULYMEM_RUNTIME_DIR)
and a real GGUF file: $TRULYMEM_TEST_GGUF (`.ci/run` assembles the catalogue's default model,
Qwen2.5-Coder 1.5B, from PyPI packages with `tests/real_model.py`). Skipped
where either is missing (the download itself is tested without them in
test_models_download.py)."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.models import download, local
from core.models.catalogue import Model
from core.models.runtime import server_program
from core.protocol.packets import Packet, PacketType
from core.testing.model_mirror import Mirror
from tests.conftest import make_dispatcher

GGUF = Path(os.environ.get("TRULYMEM_TEST_GGUF", "")) \
    if os.path.isfile(os.environ.get("TRULYMEM_TEST_GGUF", "")) else None

pytestmark = [
    pytest.mark.skipif(server_program() is None, reason="the local runtime is not built"),
    pytest.mark.skipif(GGUF is None, reason="no real GGUF model here ($TRULYMEM_TEST_GGUF)"),
]


@pytest.fixture(scope="module")
def small_model():  # the default model under a test id, so its file is the test's
    digest = hashlib.sha256()
    with GGUF.open("rb") as model_file:
        while block := model_file.read(1 << 22):
            digest.update(block)
    return Model(id="qwen2.5-coder-1.5b-test", name="the default model, as a test's own",
                 repo="Test/Model-GGUF",
                 file=GGUF.name, size=GGUF.stat().st_size, sha256=digest.hexdigest(),
                 ram_gb=1.5, licence="Apache-2.0", languages="English", tools="",
                 measured="")


@pytest.fixture
def fetched(small_model, tmp_path, monkeypatch):
    """The model fetched through a mirror that cuts the connection once, into a models
    folder of the test's own, and named in the catalogue the app reads."""
    monkeypatch.setenv("TRULYMEM_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setattr("core.models.local.find",
                        lambda name: small_model if name == small_model.id else None)
    mirror = Mirror.of(GGUF, small_model.repo, small_model.file)
    try:
        mirror.cut_after = 50 << 20
        done = download.download(small_model, tmp_path / "models", base_url=mirror.base)
        assert done["success"], done
        assert len(mirror.asked) == 2 and mirror.asked[1].startswith("bytes=")
    finally:
        mirror.close()
    yield small_model
    local.stop_all()


def test_a_turn_on_the_own_runtime_writes_the_memory_and_contacts_only_loopback(
        fetched, tmp_path, monkeypatch):
    contacted: list[str] = []
    original = socket.socket.connect

    def connect(sock, address):
        contacted.append(str(address[0]) if isinstance(address, tuple) else str(address))
        return original(sock, address)

    home = tmp_path / "home"
    dispatcher = make_dispatcher(home / "graph_memory.db", home / "config.json", home=home)
    dispatcher.backend.open(None, "local", fetched.id)  # no key: nothing to pay for
    try:
        status = dispatcher.backend.status()
        assert status["client_initialized"], status.get("local_problem")
        monkeypatch.setattr(socket.socket, "connect", connect)
        streamed = []
        answer = dispatcher.handle(
            Packet.make(PacketType.PROCESS_MESSAGE,
                        {"user_input": "Hi! My name is Sofia and I live in Madrid."}),
            lambda event, data: streamed.append(event))
        assert answer.success, answer.error
        assert answer.data["content"].strip()
        assert "text" in streamed  # the reply came as a stream
        dispatcher.backend.between_packets(PacketType.PROCESS_MESSAGE.value)  # the writer
        facts = dispatcher.backend.store.query(
            "SELECT t.name FROM edges e JOIN nodes t ON t.id = e.target_id WHERE"
            " e.status = 'active'")
        assert facts, "the turn wrote nothing to the memory"
        assert contacted and all(host in ("127.0.0.1", "::1", "localhost")
                                 for host in contacted), contacted
    finally:
        dispatcher.backend.close()
    # the server outlives a memory closed (a restore opens it again at once) and goes with
    # the program: stop_all runs at exit
    assert all(s.alive() for s in local._servers.values())
    local.stop_all()
    assert local._servers == {}


def test_the_server_dies_with_the_app(fetched, tmp_path):
    """SIGKILL leaves the app no time to stop anything: the kernel ends the child."""
    script = (
        "import json, os, sys\n"
        "from pathlib import Path\n"
        "from core.models import local\n"
        f"local.find = lambda name: __import__('core.models.catalogue', fromlist=['x'])"
        f".Model(**json.loads({json.dumps(json.dumps(fetched.__dict__))}))\n"
        f"served = local.serve({fetched.id!r}, Path({str(tmp_path)!r}))\n"
        "print(json.dumps(served), flush=True)\n"
        "print(local._servers[" + repr(fetched.id) + "].process.pid, flush=True)\n"
        "import time; time.sleep(600)\n")
    app = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                           cwd=Path(__file__).resolve().parents[1],
                           env={**os.environ, "TRULYMEM_MODELS_DIR":
                                os.environ["TRULYMEM_MODELS_DIR"]})
    try:
        served = json.loads(app.stdout.readline())
        assert served["success"], served
        child = int(app.stdout.readline())
        os.kill(app.pid, signal.SIGKILL)
        app.wait(10)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and Path(f"/proc/{child}").exists():
            state = Path(f"/proc/{child}/stat").read_text().split()[2] \
                if Path(f"/proc/{child}/stat").exists() else "X"
            if state == "Z":
                break  # dead, waiting for a reaper
            time.sleep(0.1)
        alive = Path(f"/proc/{child}/stat").exists() and \
            Path(f"/proc/{child}/stat").read_text().split()[2] != "Z"
        assert not alive, "llama-server outlived the app"
    finally:
        if app.poll() is None:
            app.kill()


def test_a_server_that_dies_is_started_again_once(fetched, tmp_path):
    served = local.serve(fetched.id, tmp_path)
    assert served["success"], served
    server = local._servers[fetched.id]
    server.process.kill()
    server.process.wait(10)
    again = local.serve(fetched.id, tmp_path)
    assert again["success"] and server.restarts == 1
    server.process.kill()
    server.process.wait(10)
    third = local.serve(fetched.id, tmp_path)
    assert not third["success"] and "stopped again" in third["error"]
