"""Private by default: the data folder and every file holding the memory are the owner's
alone, and one-run overrides never end up in config.json."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

from core import BackendClient, BackendServer
from core.config import Config, save_config
from core.paths import secure_home
from core.store import GraphStore
from core.store.exchange import export_graphml, export_json


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def started(headless):
    def start(**options):
        return headless(**{"api_key": None, "model": None, **options})[1]

    return start


def test_a_new_data_folder_and_its_files_are_private(tmp_path, started, llm):
    llm.play({"tool_calls": [{"name": "memory_commit", "arguments": {"triplets": [
        {"subject": "I", "relation": "have", "object": "diabetes"}]}}]}, {"text": "Noted."})
    client = started(api_key="sk-test-key-000000")
    assert client.process_message("I have diabetes")["success"]
    assert client.update_tool_limits(memory_query_max=5)["success"]
    home = tmp_path / "home"
    assert mode(home) == 0o700
    for name in ("graph_memory.db", "graph_memory.db-wal", "graph_memory.db-shm",
                 "config.json"):
        assert mode(home / name) == 0o600, name


def test_files_left_readable_by_older_versions_are_tightened_at_start(tmp_path):
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    GraphStore(home / "graph_memory.db").close()
    for name in ("graph_memory.db", "window.ini", "config.json"):
        (home / name).touch()
        os.chmod(home / name, 0o644)
    os.chmod(home, 0o755)
    (home / "notes.txt").write_text("not ours")
    os.chmod(home / "notes.txt", 0o644)
    tightened = secure_home(home)
    assert home in tightened and mode(home) == 0o700
    for name in ("graph_memory.db", "window.ini", "config.json"):
        assert mode(home / name) == 0o600, name
    assert mode(home / "notes.txt") == 0o644  # not ours: left alone


def test_exports_are_private(tmp_path, store, run):
    run("memory_commit", triplets=[{"subject": "I", "relation": "have", "object": "diabetes"}])
    export_json(store, tmp_path / "out.json")
    export_graphml(store, tmp_path / "out.graphml")
    assert mode(tmp_path / "out.json") == 0o600 == mode(tmp_path / "out.graphml")


def _nobody() -> pwd.struct_passwd | None:
    try:
        return pwd.getpwnam("nobody")
    except KeyError:
        return None


@pytest.mark.skipif(os.geteuid() != 0 or _nobody() is None,
                    reason="reading as another user needs root and a 'nobody' account")
def test_another_user_cannot_read_the_chat_or_the_memory(llm):
    # Not under tmp_path: pytest keeps its folders private, which would deny the other
    # user whatever the data folder's own modes were.
    outer = Path(tempfile.mkdtemp(prefix="trulymem-private-"))
    outer.chmod(0o755)  # the folder above is open, as a home directory may be
    control = outer / "open.txt"
    control.write_text("readable")
    control.chmod(0o644)
    server = BackendServer(home=outer / "home")
    server.start(api_key="sk-test-key-000000", base_url=llm.base_url, model="test-model")
    try:
        llm.play({"text": "Noted."})
        client = BackendClient(server)
        assert client.process_message("I have diabetes")["success"]
        assert client.update_tool_limits(memory_query_max=5)["success"]  # writes config.json
        home = outer / "home"
        names = ("graph_memory.db", "graph_memory.db-wal", "config.json")
        assert all((home / n).exists() for n in names)  # probed while the WAL is there
        targets = [str(home / n) for n in names]
        # A system shell, since this interpreter may live where `nobody` cannot run it.
        probe = ('for f; do if cat "$f" >/dev/null 2>&1; then echo "READ $f";'
                 ' else echo "DENIED $f"; fi; done')
        nobody = _nobody()
        done = subprocess.run(["/bin/sh", "-c", probe, "sh", str(control), *targets],
                              capture_output=True, text=True, user=nobody.pw_uid,
                              group=nobody.pw_gid, extra_groups=[], cwd="/", check=False)
    finally:
        server.shutdown()
        shutil.rmtree(outer, ignore_errors=True)
    assert f"READ {control}" in done.stdout  # the probe does see what is open to all
    assert done.stdout.count("DENIED") == len(targets), done.stdout + done.stderr


def test_one_run_overrides_are_never_written_to_the_config(tmp_path, started, llm):
    home = tmp_path / "home"
    home.mkdir()
    save_config(home / "config.json", Config(api_key="sk-saved-key-1111", model="saved-model"))
    client = started(api_key="sk-environment-key-2222", model="one-run-model")
    assert client.get_config()["model"] == "one-run-model"
    assert client.update_tool_limits(memory_query_max=7)["success"]
    assert client.update_config(None, turn_timeout=100)["success"]
    saved = json.loads((home / "config.json").read_text())
    assert saved["api_key"] == "sk-saved-key-1111" and saved["model"] == "saved-model"
    assert saved.get("base_url") != llm.base_url  # not written: the default is kept
    assert saved["tool_limits"]["memory_query_max"] == 7 and saved["turn_timeout"] == 100
    assert client.get_config()["api_key"] == "sk-environment-key-2222"  # still in force
    # Setting the overridden value on purpose saves it and ends the override.
    assert client.update_config(None, model="chosen-model")["success"]
    assert json.loads((home / "config.json").read_text())["model"] == "chosen-model"
    assert client.get_config()["model"] == "chosen-model"


def test_limits_that_could_not_be_saved_do_not_take_effect(tmp_path, llm):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    server = BackendServer(db_path=tmp_path / "graph.db", config_file=blocker / "config.json")
    server.start(api_key="sk-test-key-000000", base_url=llm.base_url)
    try:
        client = BackendClient(server)
        refused = client.update_tool_limits(memory_query_max=3)
        assert not refused["success"] and "could not save" in refused["error"]
        assert client.get_tool_limits()["memory_query_max"] == 20
    finally:
        server.shutdown()
