"""core/ must run without Qt: nothing in it may import PySide6 or shiboken6."""

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import core

pytestmark = pytest.mark.slow  # `-m "not slow"` leaves these out of a quick loop


CORE = Path(core.__file__).parent
QT = ("PySide6", "shiboken6")


def test_no_module_under_core_imports_qt_in_its_source():
    offenders = []
    for path in CORE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path}: {n}" for n in names if n.split(".")[0] in QT]
    assert offenders == []


def test_importing_every_core_module_loads_no_qt():
    modules = [m.name for m in pkgutil.walk_packages([str(CORE)], prefix="core.")]
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        f"bad = [m for m in sys.modules if m.split('.')[0] in {QT!r}]\n"
        "assert not bad, bad\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert len(modules) > 10


def test_plain_modules_import_without_the_llm_client():
    """A process that only reads or writes the store (the crash test's writer, a backup)
    must not pay for `openai`: on a slow machine that import alone takes a second."""
    plain = ["core", "core.store", "core.tools", "core.config", "core.paths",
             "core.store.browse", "core.store.exchange", "core.tools.corrections",
             "core.store.history", "core.turn.snapshot"]
    code = (
        "import importlib, sys\n"
        f"for name in {plain!r}: importlib.import_module(name)\n"
        "assert 'openai' not in sys.modules, 'openai was imported'\n"
        "from core import BackendServer, BackendClient, Packet, PacketType, PacketResponse\n"
        "assert 'openai' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
