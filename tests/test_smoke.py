"""The packaged app's self-check, run from source: the same code the frozen build runs."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # `-m "not slow"` leaves these out of a quick loop


ROOT = Path(__file__).resolve().parent.parent


def test_the_smoke_test_passes_with_a_clean_stderr():
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run([sys.executable, "-m", "app.main", "--smoke-test"],
                            capture_output=True, text=True, cwd=ROOT, env=env, timeout=120,
                            check=False)
    assert result.returncode == 0, result.stderr
    assert "reply arrived, memory written" in result.stdout
    assert "Traceback" not in result.stderr and "Warning" not in result.stderr


def test_the_desktop_entry_and_icon_are_package_data():
    from resources import resource_text

    entry = dict(line.split("=", 1) for line in resource_text("trulymem.desktop").splitlines()
                 if "=" in line)
    assert entry["Exec"] == "trulymem" and entry["Icon"] == "trulymem"
    assert entry["Type"] == "Application" and entry["Categories"].endswith(";")
    assert resource_text("trulymem.svg").lstrip().startswith("<svg")
