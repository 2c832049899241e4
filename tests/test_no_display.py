"""Started without a display, `trulymem` says so in one line and points to the terminal chat,
instead of Qt aborting with a core dump and a message about a library that is installed."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from app.startup.display import no_display, x_server_reachable

ROOT = Path(__file__).resolve().parents[1]
# the installed command and the standalone build's entry script
ENTRIES = {"trulymem": ["-c", "import sys; from app.main import main; sys.exit(main())"],
           "launcher": [str(ROOT / "packaging" / "launcher.py")]}
DISPLAYS = {"unset": {}, "nothing at :99": {"DISPLAY": ":99"},
            "no server on the network": {"DISPLAY": "127.0.0.1:57"}}


def start(entry: str, env: dict[str, str], home: Path) -> subprocess.CompletedProcess:
    bare = {k: v for k, v in os.environ.items()
            if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    return subprocess.run([sys.executable, *ENTRIES[entry]], cwd=home,
                          env={**bare, **env, "TRULYMEM_HOME": str(home)},
                          capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X and Wayland are Linux's")
@pytest.mark.parametrize("entry", sorted(ENTRIES))
@pytest.mark.parametrize("display", sorted(DISPLAYS))
def test_without_a_display_one_line_points_to_the_terminal_chat(entry, display, tmp_path):
    done = start(entry, DISPLAYS[display], tmp_path)
    assert done.returncode == 1, done.stderr  # not 134: Qt was never asked
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("trulymem: ") and "trulymem --cli" in lines[0]
    assert done.stdout == ""
    assert not list(tmp_path.glob("core*"))


def test_a_display_that_answers_is_left_to_qt():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        assert port > 6000  # an ephemeral port: X's port of display `port - 6000`
        assert x_server_reachable(f"127.0.0.1:{port - 6000}") is True
        assert x_server_reachable(f"tcp/127.0.0.1:{port - 6000}.0") is True
        assert no_display({"DISPLAY": f"127.0.0.1:{port - 6000}"}, "linux") is None


def test_what_the_check_leaves_alone():
    assert no_display({"QT_QPA_PLATFORM": "offscreen"}, "linux") is None
    assert no_display({"QT_QPA_PLATFORM": "vnc"}, "linux") is None
    assert no_display({"WAYLAND_DISPLAY": "wayland-0"}, "linux") is None
    assert no_display({}, "darwin") is None
    assert no_display({}, "win32") is None
    # told to use X, X is checked however Wayland is set
    assert no_display({"QT_QPA_PLATFORM": "xcb", "WAYLAND_DISPLAY": "wayland-0"},
                      "linux") is not None
    assert x_server_reachable("not a display") is False
    assert x_server_reachable(":99") is False
