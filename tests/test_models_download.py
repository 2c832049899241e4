"""Fetching a model over a real network, played on loopback: a mirror of the hub's file
URLs (`{base}/{repo}/resolve/main/{file}`) with HTTP Range, that can cut a connection, send
a wrong byte, ignore ranges or lack the file. A file is used only whole and checked."""

from __future__ import annotations

import hashlib
import io
import os
from dataclasses import replace
from pathlib import Path

import pytest

from core.commands import models as command
from core.models import download
from core.models.catalogue import CATALOGUE, Model
from core.testing.model_mirror import Mirror

BODY = os.urandom(3 << 20) + b"the end of a model file"


MODEL = Model(id="test-model", name="A test model", repo="Test/Test-GGUF",
              file="test-model.gguf", size=len(BODY), sha256=hashlib.sha256(BODY).hexdigest(),
              ram_gb=0.1, licence="MIT", languages="English", tools="", measured="")


@pytest.fixture
def mirror():
    server = Mirror.of(BODY, MODEL.repo, MODEL.file)
    yield server
    server.close()


def test_a_model_is_fetched_whole_and_checked(mirror, tmp_path):
    seen = []
    done = download.download(MODEL, tmp_path, lambda have, total: seen.append((have, total)),
                             base_url=mirror.base)
    assert done["success"], done
    assert (tmp_path / MODEL.file).read_bytes() == BODY
    assert not (tmp_path / f"{MODEL.file}.part").exists()
    assert seen[-1] == (len(BODY), len(BODY))
    assert download.state(MODEL, tmp_path)["state"] == "installed"
    again = download.download(MODEL, tmp_path, base_url=mirror.base)  # nothing to fetch
    assert again["success"] and again["data"]["fetched"] == 0 and len(mirror.asked) == 1


def test_a_cut_connection_is_resumed_where_it_stopped(mirror, tmp_path):
    mirror.cut_after = 1 << 20
    done = download.download(MODEL, tmp_path, base_url=mirror.base)
    assert done["success"], done
    assert (tmp_path / MODEL.file).read_bytes() == BODY
    assert mirror.asked[0] is None and mirror.asked[1] is not None
    resumed_from = int(mirror.asked[1].removeprefix("bytes=").rstrip("-"))
    assert 0 < resumed_from <= 1 << 20  # the rest was asked for, not the whole file


def test_a_download_cancelled_keeps_its_part_and_goes_on_later(mirror, tmp_path):
    calls = []
    done = download.download(MODEL, tmp_path, lambda have, _total: calls.append(have),
                             cancelled=lambda: len(calls) >= 1, base_url=mirror.base)
    assert not done["success"] and done["code"] == "cancelled"
    here = download.state(MODEL, tmp_path)
    assert here["state"] == "partial" and 0 < here["bytes"] < len(BODY)
    assert not (tmp_path / MODEL.file).exists()  # never a half file under the model's name
    done = download.download(MODEL, tmp_path, base_url=mirror.base)
    assert done["success"] and (tmp_path / MODEL.file).read_bytes() == BODY
    assert mirror.asked[-1] == f"bytes={here['bytes']}-"


def test_a_wrong_byte_is_refused_and_nothing_is_kept(mirror, tmp_path):
    mirror.wrong_byte = 12345
    done = download.download(MODEL, tmp_path, base_url=mirror.base)
    assert not done["success"] and "checksum" in done["error"]
    assert download.state(MODEL, tmp_path)["state"] == "absent"
    assert list(tmp_path.iterdir()) == [download.lock_of(MODEL, tmp_path)]  # no byte of it


def test_a_server_that_ignores_ranges_is_fetched_again_from_the_start(mirror, tmp_path):
    (tmp_path / f"{MODEL.file}.part").write_bytes(BODY[:1000])
    mirror.ranges = False
    done = download.download(MODEL, tmp_path, base_url=mirror.base)
    assert done["success"], done
    assert (tmp_path / MODEL.file).read_bytes() == BODY


def test_a_file_the_mirror_lacks_is_said_plainly(mirror, tmp_path):
    done = download.download(replace(MODEL, file="other.gguf"), tmp_path,
                             base_url=mirror.base)
    assert not done["success"] and "404" in done["error"]
    assert "TRULYMEM_MODELS_URL" in done["error"]


def test_too_little_disk_space_is_said_before_a_byte_is_fetched(mirror, tmp_path):
    huge = replace(MODEL, size=1 << 60)
    done = download.download(huge, tmp_path, base_url=mirror.base)
    assert not done["success"] and "not enough disk space" in done["error"]
    assert mirror.asked == []


def test_the_hubs_address_or_the_mirrors(monkeypatch):
    model = CATALOGUE[0]
    monkeypatch.delenv("TRULYMEM_MODELS_URL", raising=False)
    assert model.url() == ("https://huggingface.co/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/"
                           "resolve/main/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")
    monkeypatch.setenv("TRULYMEM_MODELS_URL", "http://mirror.lan/hf/")
    assert model.url().startswith("http://mirror.lan/hf/Qwen/")


def test_the_command_lists_gets_and_removes(mirror, tmp_path, monkeypatch):
    monkeypatch.setenv("TRULYMEM_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("TRULYMEM_MODELS_URL", mirror.base)
    monkeypatch.setattr("core.commands.models.CATALOGUE", (MODEL,))
    monkeypatch.setattr("core.commands.models.find",
                        lambda name: MODEL if name == MODEL.id else None)
    out, err = io.StringIO(), io.StringIO()
    assert command.run([], out, err) == 0
    assert "test-model" in out.getvalue() and "not fetched" in out.getvalue()
    assert "Never measured with this app" in out.getvalue()
    assert command.run(["get", "test-model"], out, err) == 0
    assert (Path(tmp_path / "models") / MODEL.file).read_bytes() == BODY
    assert "100%" in err.getvalue()
    listed = io.StringIO()
    command.run([], listed, err)
    assert "installed" in listed.getvalue()
    assert command.run(["remove", "test-model"], out, err) == 0
    assert not (tmp_path / "models" / MODEL.file).exists()
    assert command.run(["get", "no-such-model"], out, err) == 2


def test_two_programs_never_write_one_part(mirror, tmp_path):
    """The models folder is shared by every memory: while one program fetches a model,
    another asking for it is told so, and the first one's part is left alone."""
    import fcntl

    tmp_path.mkdir(exist_ok=True)
    with download.lock_of(MODEL, tmp_path).open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        refused = download.download(MODEL, tmp_path, base_url=mirror.base)
        assert not refused["success"] and "another TrulyMEM is fetching" in refused["error"]
        assert mirror.asked == []
    done = download.download(MODEL, tmp_path, base_url=mirror.base)  # the lock went with it
    assert done["success"], done


def test_a_mirror_that_is_no_address_is_said_not_raised(tmp_path):
    done = download.download(MODEL, tmp_path, base_url="not an address")
    assert not done["success"] and "cannot fetch not an address/" in done["error"]


def test_a_mirror_that_is_down_says_nothing_was_fetched(tmp_path):
    import socket

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    done = download.download(MODEL, tmp_path, base_url=f"http://127.0.0.1:{port}")
    assert not done["success"] and "did not start" in done["error"]
    assert "nothing was fetched" in done["error"]
    assert download.state(MODEL, tmp_path)["state"] == "absent"
