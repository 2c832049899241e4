"""The window as a screen reader gets it: the real program under X (Xvfb), its
accessibility tree read over the AT-SPI bus by pyatspi as Orca reads it, a message sent
through AT-SPI actions, and the finished reply heard as an announcement.

Needs what a Linux desktop has: Xvfb, dbus-daemon, at-spi2-core and python3-pyatspi for
the system's python3 (`.ci/run` installs them); skipped where one is missing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.config import Config, save_config

PROBE = Path(__file__).with_name("screen_reader_probe.py")
LAUNCHER = Path("/usr/libexec/at-spi-bus-launcher")
SYSTEM_PYTHON = Path("/usr/bin/python3")


def _has_pyatspi() -> bool:
    if not SYSTEM_PYTHON.exists():
        return False
    return subprocess.run([str(SYSTEM_PYTHON), "-c", "import pyatspi"],
                          check=False, capture_output=True).returncode == 0


pytestmark = pytest.mark.skipif(
    not (shutil.which("Xvfb") and shutil.which("dbus-daemon") and LAUNCHER.exists()
         and _has_pyatspi()),
    reason="needs Xvfb, dbus-daemon, at-spi2-core and python3-pyatspi")


def _free_display() -> int:
    return next(n for n in range(90, 200) if not Path(f"/tmp/.X11-unix/X{n}").exists()
                and not Path(f"/tmp/.X{n}-lock").exists())


def _wait_for(path: Path, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} did not appear")
        time.sleep(0.05)


@pytest.fixture
def desktop(tmp_path):
    """A session bus with the accessibility bus on it, and an X display."""
    started: list[subprocess.Popen] = []
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    try:
        bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"],
                               stdout=subprocess.PIPE, text=True)
        started.append(bus)
        env = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": bus.stdout.readline().strip(),
               "XDG_RUNTIME_DIR": str(runtime)}
        started.append(subprocess.Popen([str(LAUNCHER), "--launch-immediately"], env=env,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        display = _free_display()
        started.append(subprocess.Popen(
            ["Xvfb", f":{display}", "-screen", "0", "1280x850x24", "-nolisten", "tcp"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        _wait_for(Path(f"/tmp/.X11-unix/X{display}"), 20)
        env["DISPLAY"] = f":{display}"
        yield env, started
    finally:
        for process in reversed(started):
            process.terminate()
        for process in started:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()


def test_a_screen_reader_reads_the_window_and_hears_the_reply(tmp_path, llm, desktop):
    env, started = desktop
    home = tmp_path / "home"
    home.mkdir()
    save_config(home / "config.json", Config(api_key="sk-reader-test-0000",
                                             base_url=llm.base_url, model="test-model"))
    llm.play({"text": "Your plant could be called Fern."})
    app_env = {**env, "QT_QPA_PLATFORM": "xcb", "QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1",
               "QT_ACCESSIBILITY": "1"}
    log = (tmp_path / "app.log").open("w")
    started.append(subprocess.Popen([sys.executable, "-m", "app.main", "--home", str(home)],
                                    env=app_env, cwd=Path(__file__).resolve().parents[2],
                                    stdout=log, stderr=subprocess.STDOUT))
    probe = subprocess.run([str(SYSTEM_PYTHON), str(PROBE), "TrulyMEM",
                            "suggest a name for a houseplant", "60"],
                           check=False, env=env, capture_output=True, text=True,
                           timeout=120)
    lines = probe.stdout.strip().splitlines()
    assert lines, f"the probe said nothing: {probe.stderr[-2000:]}\n" \
        f"the app: {(tmp_path / 'app.log').read_text()[-2000:]}"
    read = json.loads(lines[-1])
    assert "error" not in read, read
    assert read["unnamed"] == [], read["unnamed"]
    names = set(read["names"])
    assert {"push button: Send message", "text: Message"} <= names, sorted(names)
    assert read["sent"], "the message field or the send button was not found by name"
    assert any("Fern" in said for said in read["announced"]), read["announced"]
