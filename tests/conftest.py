"""Shared fixtures: a real SQLite store in tmp_path, a controllable clock, a tool runner."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from typing import Any

import pytest

import app  # noqa: F401  (first: it has PySide make its types at import, see app/__init__)
from core import BackendClient, BackendServer, Packet, PacketResponse, PacketType
from core.protocol.dispatcher import Dispatcher
from core.store import GraphStore
from core.testing.loopback_llm import ScriptedOpenAIServer
from core.tools import ToolExecutor

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# No test may touch the person's real data: HOME, the data folder and Qt's settings folders
# point into one temporary folder for the whole session, set before anything reads them.
REAL_HOME = os.path.expanduser("~")
GUARD_HOME = tempfile.mkdtemp(prefix="trulymem-test-home-")
for _name in ("HOME", "TRULYMEM_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
    os.environ[_name] = os.path.join(GUARD_HOME, _name.lower())
    os.makedirs(os.environ[_name], exist_ok=True)
# Nor the person's desktop: no notification, keychain or portal call reaches their session
# bus (tests that need one start their own bus and name it to the program).
if os.environ.get("TRULYMEM_TEST_BUS") != "1":
    os.environ["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=" + os.path.join(GUARD_HOME, "no-bus")
# No keychain at all, on every system (macOS and Windows have theirs without a bus): the
# key stays in the config file; tests/test_keychain.py brings a Secret Service of its own.
os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"


DAY = 86400.0


class Clock:
    """A clock tests can move forward: archive and cleanup depend on age."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now

    def advance(self, days: float) -> None:
        self.now += days * DAY


@pytest.fixture(scope="session", autouse=True)
def guarded_home():
    """The session's stand-in for HOME; removed when the session ends."""
    yield GUARD_HOME
    shutil.rmtree(GUARD_HOME, ignore_errors=True)


@pytest.fixture(autouse=True)
def words_only_recall(request, monkeypatch):
    """Recall by meaning is on by default in the app, but its indexer runs in the
    background: a test about something else would see recall's results depend on how far
    it got. Tests marked `meaning` turn it on and wait for the indexer by its status."""
    if request.node.get_closest_marker("meaning") is None:
        from core.backend import Backend

        monkeypatch.setattr(Backend, "meaning_wanted", lambda _self: False)


@pytest.fixture
def llm():
    """The scripted OpenAI-compatible server on 127.0.0.1 that stands in for the model."""
    with closing(ScriptedOpenAIServer()) as server:
        yield server


@pytest.fixture
def hosted(tmp_path):
    """Opens a backend and its dispatcher on a home (`tmp_path/home` unless one is named)
    as a host would, with what `Backend.open` takes; each is closed when the test ends."""
    def open_(home=None, **start: Any) -> Dispatcher:
        home = home or tmp_path / "home"
        dispatcher = make_dispatcher(home / "graph_memory.db", home / "config.json", home=home)
        dispatcher.backend.open(**start)
        return dispatcher

    yield from closed_after(open_, lambda dispatcher: dispatcher.backend.close())


def closed_after(make: Callable[..., Any], close: Callable[[Any], None]
                 ) -> Iterator[Callable[..., Any]]:
    """A fixture's factory: what `make` makes is `close`d when the test ends."""
    made: list[Any] = []

    def factory(*args: Any, **kwargs: Any) -> Any:
        made.append(make(*args, **kwargs))
        return made[-1]

    yield factory
    for thing in made:
        close(thing)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(tmp_path, clock) -> GraphStore:
    graph = GraphStore(tmp_path / "graph_memory.db", clock=clock)
    yield graph
    graph.close()


@pytest.fixture
def meaning(store):
    """Starts an indexer over `store`, told of each change as the backend tells it;
    `attached`: the store's recall searches through it too."""
    from core.meaning.indexer import Meaning

    running = []

    def start(attached: bool = False) -> Meaning:
        made = Meaning(store.path)
        store.on_commit[:] = [lambda change: made.changed(change.touched())]
        made.start()
        if attached:
            store.meaning = made
        running.append(made)
        return made

    yield start
    for made in running:
        made.stop()
    store.meaning = None


@pytest.fixture
def executor(store) -> ToolExecutor:
    return ToolExecutor(store)


@pytest.fixture
def run(executor):
    """Run a tool and return its data; fails the test if the call failed."""

    def _run(tool: str, **arguments: Any) -> dict[str, Any]:
        result = executor.execute(tool, arguments)
        assert result["success"], result.get("error")
        return result["data"]

    return _run


@pytest.fixture
def fail(executor):
    """Run a tool that must fail and return its error text."""

    def _fail(tool: str, arguments: Any = None, **kwargs: Any) -> str:
        result = executor.execute(tool, arguments if arguments is not None else kwargs)
        assert not result["success"], result
        assert isinstance(result["error"], str) and result["error"]
        return result["error"]

    return _fail


def commit(run, *triplets: tuple[str, str, str], **extra: Any) -> dict[str, Any]:
    return run("memory_commit", triplets=[
        {"subject": s, "relation": r, "object": o} for s, r, o in triplets], **extra)


TEST_KEY = "sk-test-key-000000"


@pytest.fixture
def headless(tmp_path, llm):
    """Start a BackendServer (the seed's headless API) on a data folder in tmp_path,
    talking to the scripted model; answers (server, client). Every server started is
    shut down after the test."""
    started = []

    def start(folder: str = "home", *, api_key: str | None = TEST_KEY,
              model: str | None = "test-model", progress: Any = None, **options: Any):
        server = BackendServer(home=tmp_path / folder, progress=progress)
        server.start(api_key=api_key, base_url=llm.base_url, model=model, **options)
        started.append(server)
        return server, BackendClient(server)

    yield start
    for server in started:
        server.shutdown()


def ask(dispatcher: Dispatcher, kind: PacketType, body: Any = None,
        events: list | None = None) -> PacketResponse:
    """One packet as a host runs it: the answer, then the work between packets (a backup
    when due). `events` collects the packet's events and the backend's own."""
    def heard(event: str, data: Any) -> None:
        if events is not None:
            events.append((event, data))

    if events is not None:
        dispatcher.backend.events = heard
    packet = Packet.make(kind, body if body is not None else {})
    answer = dispatcher.handle(packet, heard)
    dispatcher.backend.between_packets(packet.type.value)
    return answer


def make_dispatcher(*args: Any, **kwargs: Any) -> Dispatcher:
    """A backend (`core.backend.Backend(*args, **kwargs)`) and its dispatcher, hosted by
    the test itself: it calls `dispatcher.backend.open()` and `close()`."""
    from core.backend import Backend

    return Dispatcher(Backend(*args, **kwargs))


def told_until(told: Any, event: str, phase: str) -> list[dict[str, Any]]:
    """The `event`s a backend told into the queue `told`, up to the first in `phase`
    (each waited for at most 30 s)."""
    seen = []
    while True:
        name, data = told.get(timeout=30)
        if name == event:
            seen.append(data)
            if data["phase"] == phase:
                return seen


@pytest.fixture
def http_server(tmp_path):
    """`trulymem mcp --http` on a free port over a shared folder; yields its address and
    the folder once it says it serves."""
    import re
    import subprocess
    import sys
    from pathlib import Path

    from tests.test_share_mcp import share

    home = share(tmp_path / "home")
    process = subprocess.Popen(
        [sys.executable, "-m", "app.main", "mcp", "--http", "--port", "0", "--home",
         str(home)], cwd=Path(__file__).resolve().parents[1], stderr=subprocess.PIPE,
        text=True)
    try:
        line = process.stderr.readline()  # the handshake: printed once it accepts
        found = re.search(r"http://127\.0\.0\.1:\d+/mcp", line)
        assert found, line
        yield found.group(0), home
    finally:
        process.terminate()
        process.wait(30)
        process.stderr.close()
