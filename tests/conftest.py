"""Shared fixtures: a real SQLite store in tmp_path, a controllable clock, a tool runner."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from typing import Any

import pytest

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
        from core.protocol.dispatcher import Dispatcher

        monkeypatch.setattr(Dispatcher, "meaning_wanted", lambda _self: False)


@pytest.fixture
def llm():
    """The scripted OpenAI-compatible server on 127.0.0.1 that stands in for the model."""
    server = ScriptedOpenAIServer()
    yield server
    server.close()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(tmp_path, clock) -> GraphStore:
    graph = GraphStore(tmp_path / "graph_memory.db", clock=clock)
    yield graph
    graph.close()


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
