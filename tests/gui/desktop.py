"""Running a test file again inside a real X server (Xvfb) with the programs a desktop has
(a window manager, a tray, a notification daemon): what the offscreen tests cannot see."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_inside(test_file: str, programs: list[list[str]], env: dict[str, str],
               ) -> subprocess.CompletedProcess[str]:
    """Start Xvfb on a free display, then `programs` on it, and run `test_file` with pytest
    there (Qt's xcb platform, `env` added); everything started is stopped after."""
    read, write = os.pipe()
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0",
                             "1280x800x24", "-nolisten", "tcp"], pass_fds=(write,),
                            stderr=subprocess.DEVNULL)
    os.close(write)
    with os.fdopen(read) as told:
        display = ":" + told.readline().strip()  # Xvfb says its display once it is up
    env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb", **env}
    started = [subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL) for command in programs]
    try:
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               test_file], check=False, cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=300)
    finally:
        for process in (*started, xvfb):
            process.terminate()
        for process in (*started, xvfb):
            process.wait(10)
