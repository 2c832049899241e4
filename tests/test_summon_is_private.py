"""The window's summoning socket is this user's alone: another local user who makes the
folder or the socket first never receives what `trulymem --ask` sends, and a process of
another user that connects is not heard. Played with a real second uid ("nobody")."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from app.desktop import summon

needs_root = pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0,
                                reason="a second uid needs root to switch to")
NOBODY = 65534
# the other user's process needs only the standard library, from a Python it may run
PLAIN_PYTHON = shutil.which("python3", path="/usr/bin:/bin") or sys.executable


def _as_nobody(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([PLAIN_PYTHON, "-c", code], user=NOBODY, group=NOBODY,
                          extra_groups=[], check=False, capture_output=True, text=True,
                          timeout=30)


@pytest.fixture
def shared_tmp():
    """A folder like /tmp, which every user may write and reach."""
    folder = Path(tempfile.mkdtemp(dir="/tmp"))
    folder.chmod(0o1777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@needs_root
def test_a_folder_another_user_made_first_is_never_used(tmp_path, shared_tmp, monkeypatch):
    temp = shared_tmp
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    squatter = temp / f"trulymem-{os.getuid()}"
    made = _as_nobody(f"import os; os.mkdir({str(squatter)!r}, 0o777); "
                      f"os.chmod({str(squatter)!r}, 0o777)")
    assert made.returncode == 0, made.stderr
    assert summon.private_folder() == ""
    assert summon.socket_path(tmp_path / "home") == ""
    assert summon.send(tmp_path / "home", summon.wish("ask", "my PIN is 4711")) is False


@needs_root
def test_a_runtime_folder_that_is_not_the_users_is_not_used(tmp_path, monkeypatch):
    runtime = tmp_path / "run"
    runtime.mkdir()
    os.chown(runtime, NOBODY, NOBODY)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert summon.private_folder() == str(tmp_path / f"trulymem-{os.getuid()}")
    assert oct((tmp_path / f"trulymem-{os.getuid()}").stat().st_mode & 0o777) == "0o700"


@needs_root
def test_a_socket_someone_else_owns_is_never_sent_to(tmp_path, monkeypatch):
    folder = tmp_path / "run"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    path = summon.socket_path(tmp_path / "home")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)
    os.chown(path, NOBODY, NOBODY)  # as if another user had made it
    try:
        assert summon.send(tmp_path / "home", summon.wish("ask", "secret")) is False
    finally:
        listener.close()


@needs_root
def test_a_process_of_another_user_is_told_apart_by_its_credentials(shared_tmp):
    path = str(shared_tmp / "s.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o777)
    listener.listen(1)
    client = subprocess.Popen([PLAIN_PYTHON, "-c", "import socket; s = socket.socket("
                               f"socket.AF_UNIX); s.connect({path!r}); s.recv(1)"],
                              user=NOBODY, group=NOBODY, extra_groups=[])
    listener.settimeout(30)
    connection, _ = listener.accept()
    try:
        assert summon.peer_is_me(connection) is False
    finally:
        connection.close()
        listener.close()
        client.wait(30)
    mine_a, mine_b = socket.socketpair()
    assert summon.peer_is_me(mine_a) is True
    mine_a.close()
    mine_b.close()


def test_the_socket_lies_in_a_folder_only_this_user_can_write(tmp_path, monkeypatch):
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    path = Path(summon.socket_path(tmp_path / "home"))
    info = path.parent.stat()
    assert info.st_uid == os.getuid() and info.st_mode & 0o077 == 0
