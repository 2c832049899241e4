"""The packets the window fetches models with: the catalogue with what is here, a download
beside the chat told as events (a slow line, cancelled, resumed), and removing a model.
A small file stands in for a model: what is checked is the fetching, not the running
(tests/test_local_model.py runs the real one)."""

from __future__ import annotations

import hashlib
import os
import queue

import pytest

from core.events import Event
from core.models.catalogue import Model
from core.protocol.packets import Packet, PacketType
from core.testing.model_mirror import Mirror
from tests.conftest import make_dispatcher, told_until

BODY = os.urandom(2 << 20)
MODEL = Model(id="test-model", name="A test model", repo="Test/Test-GGUF",
              file="test-model.gguf", size=len(BODY), sha256=hashlib.sha256(BODY).hexdigest(),
              ram_gb=0.1, licence="MIT", languages="English", tools="", measured="")


@pytest.fixture
def backend(tmp_path, monkeypatch):
    """A backend whose catalogue is the test model, fetched from a loopback mirror into
    the test's own folder; yields (dispatcher, mirror, events queue)."""
    mirror = Mirror.of(BODY, MODEL.repo, MODEL.file)
    monkeypatch.setenv("TRULYMEM_MODELS_URL", mirror.base)
    monkeypatch.setenv("TRULYMEM_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setattr("core.models.catalogue.CATALOGUE", (MODEL,))
    monkeypatch.setattr("core.models.catalogue.DEFAULT", MODEL.id)
    home = tmp_path / "home"
    dispatcher = make_dispatcher(home / "graph_memory.db", home / "config.json", home=home)
    told: queue.Queue = queue.Queue()
    dispatcher.backend.events = lambda event, data: told.put((event, data))
    dispatcher.backend.open()
    yield dispatcher, mirror, told
    dispatcher.backend.close()
    mirror.close()


def ask(dispatcher, type_: PacketType, body: dict | None = None) -> dict:
    return dispatcher.handle(Packet.make(type_, body or {})).body


def until(told: queue.Queue, phase: str) -> list[dict]:
    """The download events up to the one in `phase`, all on the way "fetching"."""
    seen = told_until(told, Event.MODEL_DOWNLOAD, phase)
    assert all(data["phase"] == "fetching" for data in seen[:-1]), seen
    return seen


def test_a_model_is_listed_fetched_beside_the_chat_and_removed(backend):
    dispatcher, mirror, told = backend
    listed = ask(dispatcher, PacketType.LOCAL_MODELS)
    assert listed["success"]
    row = listed["data"]["models"][0]
    assert (row["id"], row["state"], row["bytes"], row["size"]) == \
        (MODEL.id, "absent", 0, len(BODY))
    assert row["default"] and not row["fetching"] and listed["data"]["source"] == mirror.base
    mirror.rate = 4 << 20  # half a second for the file: progress is told on the way
    started = ask(dispatcher, PacketType.MODEL_GET, {"model": MODEL.id})
    assert started["success"] and not started["data"]["installed"]
    # the worker is free meanwhile: another packet is answered before the file is here
    assert ask(dispatcher, PacketType.GET_STATUS)["success"]
    events = until(told, "done")
    assert events[-1]["have"] == events[-1]["total"] == len(BODY)
    assert any(e["phase"] == "fetching" and 0 < e["have"] < len(BODY) for e in events)
    row = ask(dispatcher, PacketType.LOCAL_MODELS)["data"]["models"][0]
    assert row["state"] == "installed" and not row["fetching"]
    again = ask(dispatcher, PacketType.MODEL_GET, {"model": MODEL.id})
    assert again["data"]["installed"]
    removed = ask(dispatcher, PacketType.MODEL_REMOVE, {"model": MODEL.id})
    assert removed["success"] and removed["data"]["freed"] == len(BODY)
    assert ask(dispatcher, PacketType.LOCAL_MODELS)["data"]["models"][0]["state"] == "absent"


def test_a_cancelled_download_keeps_its_part_and_goes_on_from_it(backend):
    dispatcher, mirror, told = backend
    mirror.rate = 1 << 20  # two seconds for the file
    ask(dispatcher, PacketType.MODEL_GET, {"model": MODEL.id})
    while told.get(timeout=30)[1].get("have", 0) < 256 << 10:
        pass
    assert ask(dispatcher, PacketType.MODEL_CANCEL, {"model": MODEL.id})["success"]
    cancelled = until(told, "cancelled")[-1]
    assert 0 < cancelled["have"] < len(BODY) and "kept" in cancelled["error"]
    row = ask(dispatcher, PacketType.LOCAL_MODELS)["data"]["models"][0]
    assert row["state"] == "partial" and row["bytes"] == cancelled["have"]
    refused = ask(dispatcher, PacketType.MODEL_CANCEL, {"model": MODEL.id})
    assert not refused["success"] and refused["code"] == "nothing_to_do"
    mirror.rate = None
    ask(dispatcher, PacketType.MODEL_GET, {"model": MODEL.id})
    until(told, "done")
    assert mirror.asked[-1] == f"bytes={cancelled['have']}-"  # went on where it stopped


def test_the_model_the_chat_runs_on_is_not_removed(backend):
    dispatcher, _mirror, told = backend
    ask(dispatcher, PacketType.MODEL_GET, {"model": MODEL.id})
    until(told, "done")
    assert ask(dispatcher, PacketType.SET_CONFIG, {"base_url": "local", "model": MODEL.id})
    refused = ask(dispatcher, PacketType.MODEL_REMOVE, {"model": MODEL.id})
    assert not refused["success"] and "choose another" in refused["error"]
    assert ask(dispatcher, PacketType.LOCAL_MODELS)["data"]["models"][0]["chosen"]


def test_unknown_models_and_bad_bodies_are_refused_with_the_ids(backend):
    dispatcher, _mirror, _told = backend
    for type_ in (PacketType.MODEL_GET, PacketType.MODEL_REMOVE, PacketType.MODEL_CANCEL):
        refused = ask(dispatcher, type_, {"model": "gpt-9"})
        assert not refused["success"] and refused["code"] == "not_found"
        assert MODEL.id in refused["error"]
        assert not ask(dispatcher, type_, {"model": 7})["success"]


def test_a_download_that_fails_says_why_and_the_window_hears_it(backend):
    dispatcher, mirror, told = backend
    mirror.wrong_byte = 1000
    ask(dispatcher, PacketType.MODEL_GET, {"model": MODEL.id})
    failed = until(told, "failed")[-1]
    assert "checksum" in failed["error"] and failed["have"] == 0
    assert ask(dispatcher, PacketType.LOCAL_MODELS)["data"]["models"][0]["state"] == "absent"
