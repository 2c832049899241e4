"""The API key in the system keychain, against a real Secret Service: a D-Bus session bus
and gnome-keyring-daemon of the test's own (HOME, the keyrings and the bus in tmp_path),
never the person's. Every other test runs with no keychain (see conftest) and keeps the
key in the file."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from core import keychain
from core.config import Config, load_config, save_config
from core.protocol.dispatcher import Dispatcher
from core.protocol.packets import PacketType
from tests.conftest import ask, make_dispatcher

KEY = "sk-keychain-test-0123456789"
NEW_KEY = "sk-keychain-new-9876543210"

needs_daemon = pytest.mark.skipif(
    shutil.which("gnome-keyring-daemon") is None or shutil.which("dbus-daemon") is None,
    reason="gnome-keyring-daemon and dbus-daemon are not installed (apt-get install "
           "gnome-keyring dbus)")


class Desktop:
    """A session bus with an unlocked Secret Service on it, as a desktop login gives."""

    def __init__(self, folder: Path) -> None:
        # no display: an unlock prompt cannot wait for a person who is not there
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
        for name, sub in (("HOME", "home"), ("XDG_DATA_HOME", "home/share"),
                          ("XDG_CONFIG_HOME", "home/config"), ("XDG_RUNTIME_DIR", "run")):
            (folder / sub).mkdir(mode=0o700, parents=True, exist_ok=True)
            self.env[name] = str(folder / sub)
        self.bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork",
                                     "--print-address=1"], stdout=subprocess.PIPE,
                                    text=True, env=self.env)
        self.address = self.bus.stdout.readline().strip()  # printed once it listens
        self.env["DBUS_SESSION_BUS_ADDRESS"] = self.address
        # --daemonize returns once the daemon serves; it ends when the bus ends
        subprocess.run(["gnome-keyring-daemon", "--unlock", "--components=secrets",
                        "--daemonize"], input="test-password", text=True, env=self.env,
                       capture_output=True, timeout=30, check=True)

    def entries(self) -> dict[str, str]:
        """What the keychain holds for TrulyMEM, by user name, read with SecretStorage."""
        import secretstorage

        bus = secretstorage.dbus_init()
        try:
            collection = secretstorage.get_default_collection(bus)
            return {item.get_attributes()["username"]: item.get_secret().decode()
                    for item in collection.search_items({"service": keychain.SERVICE})}
        finally:
            bus.close()

    def lock(self) -> None:
        import secretstorage

        bus = secretstorage.dbus_init()
        try:
            secretstorage.get_default_collection(bus).lock()
        finally:
            bus.close()

    def stop(self) -> None:
        if self.bus.poll() is None:
            self.bus.terminate()
            self.bus.wait(timeout=10)


@pytest.fixture
def desktop(tmp_path, monkeypatch):
    """The program sees this desktop's bus and lets keyring find its Secret Service."""
    found = Desktop(tmp_path / "desktop")
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", found.address)
    monkeypatch.delenv("PYTHON_KEYRING_BACKEND", raising=False)
    monkeypatch.setattr(keychain, "_found", None)
    yield found
    found.stop()
    assert keychain._idle.acquire(timeout=30)  # no call left hanging for the next test
    keychain._idle.release()


def started(home: Path) -> Dispatcher:
    backend = make_dispatcher(home / "graph_memory.db", home / "config.json", home=home)
    backend.backend.open()
    return backend


def in_file(home: Path) -> dict:
    return json.loads((home / "config.json").read_text("utf-8"))


def settings(backend: Dispatcher) -> dict:
    answer = ask(backend, PacketType.GET_CONFIG)
    assert answer.success, answer.error
    return answer.data


@needs_daemon
def test_a_saved_key_goes_to_the_keychain_not_the_file_and_is_read_at_start(desktop,
                                                                             tmp_path):
    home = tmp_path / "home"
    backend = started(home)
    answer = ask(backend, PacketType.SET_CONFIG, {"api_key": KEY, "model": "m-1"})
    assert answer.success, answer.error
    assert in_file(home) == {"version": 3, "model": "m-1"}  # the key is not in the file
    assert desktop.entries() == {str(home.resolve()): KEY}
    assert settings(backend)["key_store"] == "keychain"
    backend.backend.close()

    again = started(home)  # the next start reads it from the keychain
    assert again.backend.config.api_key == KEY
    assert again.backend.settings.warning is None
    assert (settings(again)["key_store"], settings(again)["key_store_reason"]) == \
        ("keychain", "")
    answer = ask(again, PacketType.SET_CONFIG, {"trash_days": 9})  # the key not changed
    assert answer.success, answer.error
    assert "api_key" not in in_file(home)

    assert ask(again, PacketType.SET_CONFIG, {"api_key": ""}).success  # cleared: removed
    assert desktop.entries() == {}
    again.backend.close()
    assert started(home).backend.config.api_key == ""


@needs_daemon
def test_the_files_old_key_moves_into_the_keychain_once(desktop, tmp_path):
    home = tmp_path / "home"
    save_config(home / "config.json", Config(api_key=KEY, model="m-2"))
    backend = started(home)
    assert backend.backend.config.api_key == KEY
    assert desktop.entries() == {str(home.resolve()): KEY}
    assert in_file(home) == {"version": 3, "model": "m-2"}
    assert (home / "config.json").stat().st_mode & 0o777 == 0o600
    backend.backend.close()

    written = (home / "config.json").stat().st_mtime_ns
    again = started(home)
    assert again.backend.config.api_key == KEY
    assert (home / "config.json").stat().st_mtime_ns == written  # once: not rewritten
    again.backend.close()


@needs_daemon
def test_two_data_folders_keep_two_keys(desktop, tmp_path):
    first, second = tmp_path / "one", tmp_path / "two"
    for home, key in ((first, KEY), (second, NEW_KEY)):
        backend = started(home)
        assert ask(backend, PacketType.SET_CONFIG, {"api_key": key}).success
        backend.backend.close()
    link = tmp_path / "link-to-one"
    link.symlink_to(first)
    assert started(second).backend.config.api_key == NEW_KEY
    assert started(link).backend.config.api_key == KEY  # the same folder by another path
    assert len(desktop.entries()) == 2


def test_without_a_keychain_the_key_stays_in_the_private_file(tmp_path):
    """conftest's bus leads nowhere: keyring finds no keychain, as on a server."""
    home = tmp_path / "home"
    backend = started(home)
    assert ask(backend, PacketType.SET_CONFIG, {"api_key": KEY}).success
    assert in_file(home)["api_key"] == KEY
    assert (home / "config.json").stat().st_mode & 0o777 == 0o600
    shown = settings(backend)
    assert shown["key_store"] == "file"
    assert shown["key_store_reason"].startswith("no system keychain answered")
    assert backend.backend.settings.warning is None  # no keychain is no news at start
    backend.backend.close()
    assert started(home).backend.config.api_key == KEY


@needs_daemon
def test_a_locked_keychain_keeps_the_file_key_and_says_why(desktop, tmp_path):
    home = tmp_path / "home"
    save_config(home / "config.json", Config(api_key=KEY))
    desktop.lock()  # nobody is there to answer the unlock prompt
    begun = time.monotonic()
    backend = started(home)
    assert time.monotonic() - begun < keychain.WAIT + 5
    assert backend.backend.config.api_key == KEY  # nothing lost: the file's key is used
    assert in_file(home)["api_key"] == KEY
    assert "API key: the system keychain" in backend.backend.settings.warning
    shown = settings(backend)
    assert shown["key_store"] == "file"
    assert "keychain" in shown["key_store_reason"]

    answer = ask(backend, PacketType.SET_CONFIG, {"api_key": NEW_KEY})
    assert answer.success, answer.error  # saved where it can be: the file
    assert in_file(home)["api_key"] == NEW_KEY
    answer = ask(backend, PacketType.SET_CONFIG, {"api_key": ""})
    assert not answer.success  # a key it cannot take out of the keychain is not "cleared"
    assert "could not remove the key from the system keychain" in answer.error
    assert in_file(home)["api_key"] == NEW_KEY
    backend.backend.close()


@needs_daemon
def test_a_keychain_gone_mid_way_loses_nothing(desktop, tmp_path):
    home = tmp_path / "home"
    backend = started(home)
    assert ask(backend, PacketType.SET_CONFIG, {"api_key": KEY}).success
    desktop.stop()  # the session's bus and its Secret Service end
    answer = ask(backend, PacketType.SET_CONFIG, {"api_key": NEW_KEY})
    assert answer.success, answer.error
    assert in_file(home)["api_key"] == NEW_KEY  # kept in the file instead
    assert settings(backend)["key_store"] == "file"
    backend.backend.close()
    again = started(home)
    assert again.backend.config.api_key == NEW_KEY
    again.backend.close()


class SilentBus:
    """A session bus that lets a program in and then never answers a call, as a hung one
    does (one that does not even let it in is given up on by jeepney after a second)."""

    def __init__(self, path: Path) -> None:
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen()
        self.taken: list[socket.socket] = []
        self.address = f"unix:path={path}"
        threading.Thread(target=self._take, daemon=True).start()

    def _take(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            self.taken.append(connection)
            got = b""
            while b"\r\n" not in got:  # "\0AUTH EXTERNAL <uid>\r\n"
                more = connection.recv(1024)
                if not more:
                    break
                got += more
            connection.sendall(b"OK 0123456789abcdef0123456789abcdef\r\n")

    def close(self) -> None:
        self.server.shutdown(socket.SHUT_RDWR)  # wakes the accept (close alone does not)
        self.server.close()
        for connection in self.taken:
            connection.close()


def test_a_keychain_that_never_answers_does_not_hold_the_start(tmp_path, monkeypatch):
    bus = SilentBus(tmp_path / "bus")
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", bus.address)
    monkeypatch.delenv("PYTHON_KEYRING_BACKEND", raising=False)
    monkeypatch.setattr(keychain, "_found", None)
    monkeypatch.setattr(keychain, "WAIT", 1.0)
    home = tmp_path / "home"
    save_config(home / "config.json", Config(api_key=KEY))
    try:
        begun = time.monotonic()
        backend = started(home)
        assert time.monotonic() - begun < 5
        assert backend.backend.config.api_key == KEY
        assert "did not answer within 1 s" in backend.backend.settings.warning
        answer = ask(backend, PacketType.SET_CONFIG, {"api_key": NEW_KEY})
        assert answer.success, answer.error  # the hung call is not waited for again
        assert in_file(home)["api_key"] == NEW_KEY
        assert "earlier request" in settings(backend)["key_store_reason"]
        backend.backend.close()
    finally:
        bus.close()  # the hung call ends with the connection
        assert keychain._idle.acquire(timeout=30)
        keychain._idle.release()
    assert load_config(home / "config.json")[0].api_key == NEW_KEY


@needs_daemon
def test_the_terminal_reads_the_key_from_the_keychain(desktop, tmp_path, llm):
    home = tmp_path / "home"
    backend = started(home)
    assert ask(backend, PacketType.SET_CONFIG, {"api_key": KEY}).success
    backend.backend.close()
    llm.play({"text": "Hello from the model."})
    env = {k: v for k, v in os.environ.items() if k != "TRULYMEM_API_KEY"}
    process = subprocess.run(
        [sys.executable, "-m", "app.main", "--cli", "--home", str(home), "--base-url",
         llm.base_url, "--model", "test-model"], input="hello\n/quit\n", text=True,
        capture_output=True, env=env, cwd=Path(__file__).resolve().parents[1], timeout=60,
        check=False)
    assert process.returncode == 0, process.stderr
    assert "Hello from the model." in process.stdout
    assert "no API key" not in process.stderr
    assert KEY not in process.stdout + process.stderr
