"""The house rules that keep the code easy to change: every packet has one declared handler,
no code compares error or event text, events and settings are declared once, the window
stays an assembler, and the app's modules import each other without a circle."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import PySide6.QtWidgets

from core.config import READABLE, SETTABLE, SETTINGS, Config
from core.errors import ErrorCode
from core.events import Event
from core.protocol.dispatcher import HANDLERS
from core.protocol.handlers.settings import START_AT_LOGIN
from core.protocol.packets import PacketType

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [p for folder in ("app", "core") for p in sorted((ROOT / folder).rglob("*.py"))]


def _trees():
    for path in SOURCES:
        yield path.relative_to(ROOT), ast.parse(path.read_text("utf-8"))


def _is_error_text(node: ast.AST) -> bool:
    """`x["error"]`, `x.get("error")`, `x.error` or `str(error)`: an error's words."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return node.slice.value == "error"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr == "get" and node.args and isinstance(node.args[0], ast.Constant):
        return node.args[0].value == "error"
    if isinstance(node, ast.Attribute):
        return node.attr == "error"
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
        node.func.id == "str" and bool(node.args) and isinstance(node.args[0], ast.Name) \
        and node.args[0].id in ("error", "refusal")


def test_every_packet_type_has_exactly_one_declared_handler():
    assert set(HANDLERS) == set(PacketType)


def test_no_code_compares_error_text():
    found = []
    for where, tree in _trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                if any(isinstance(s, ast.Constant) and isinstance(s.value, str) for s in sides) \
                        and any(_is_error_text(s) for s in sides):
                    found.append(f"{where}:{node.lineno}")
    assert found == []


def test_the_detector_finds_a_comparison_of_error_text():
    tree = ast.parse('if answer["error"] == "cancelled" or "does not exist" in str(error): pass')
    compares = [n for n in ast.walk(tree) if isinstance(n, ast.Compare)]
    assert len(compares) == 2 and all(
        any(_is_error_text(s) for s in [c.left, *c.comparators]) for c in compares)


def test_events_are_told_and_read_by_their_declared_names_only():
    """No event is sent as a bare string, and no code compares an event with a string."""
    names = {event.value for event in Event}
    found = []
    for where, tree in _trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                    and node.args[0].value in names:
                called = node.func.attr if isinstance(node.func, ast.Attribute) else \
                    getattr(node.func, "id", "")
                if called in ("progress", "events", "report", "sink", "_report", "emit"):
                    found.append(f"{where}:{node.lineno} {called}({node.args[0].value!r})")
            if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and \
                    node.left.id == "event" and any(
                        isinstance(c, ast.Constant) and c.value in names
                        for c in node.comparators):
                found.append(f"{where}:{node.lineno} event compared with text")
    assert found == []


def test_the_readme_lists_every_packet_event_and_error_code():
    readme = (ROOT / "README.md").read_text("utf-8")
    missing = [item.value for group in (PacketType, Event, ErrorCode) for item in group
               if f"`{item.value}`" not in readme and f"`{item.name}`" not in readme]
    assert missing == []


def test_each_setting_is_declared_once_and_the_packets_read_the_declaration():
    assert set(SETTABLE) <= set(READABLE) <= set(SETTINGS)
    for name, field in SETTINGS.items():
        assert field.metadata["about"], f"{name} has no description"
        assert callable(field.metadata["check"])
    assert Config().request_timeout == SETTINGS["request_timeout"].default


def test_the_settings_dialog_saves_only_settable_settings():
    source = (ROOT / "app" / "dialogs" / "settings.py").read_text("utf-8")
    values = source[source.index("def values("):]
    values = values[:values.index("\n    def ", 10)]
    saved = set(re.findall(r'"([a-z_]+)":', values))
    # and whether it starts at login, which SET_CONFIG takes but the config file never holds
    settable = {*SETTABLE, START_AT_LOGIN}
    assert saved and saved <= settable, saved - settable


def test_the_dispatcher_routes_and_the_window_assembles():
    dispatcher = (ROOT / "core" / "protocol" / "dispatcher.py").read_text("utf-8")
    assert "def _on_" not in dispatcher and "getattr(self" not in dispatcher
    assert len((ROOT / "app" / "main_window.py").read_text("utf-8").splitlines()) < 400


def _handler_writes(tree: ast.AST) -> list[str]:
    """`backend.x = …` (or `+=`) anywhere in a handler module: a handler that sets the
    backend's fields instead of asking through its methods."""
    targets = [t for node in ast.walk(tree) if isinstance(node, ast.Assign | ast.AugAssign)
               for t in (node.targets if isinstance(node, ast.Assign) else [node.target])]
    return [ast.unparse(t) for t in targets if isinstance(t, ast.Attribute)
            and isinstance(t.value, ast.Name) and t.value.id == "backend"]


def test_the_dispatcher_only_routes_and_handlers_ask_the_backend():
    dispatcher = ROOT / "core" / "protocol" / "dispatcher.py"
    assert len(dispatcher.read_text("utf-8").splitlines()) <= 150
    written = {path.name: _handler_writes(ast.parse(path.read_text("utf-8")))
               for path in (ROOT / "core" / "protocol" / "handlers").glob("*.py")}
    assert {name: fields for name, fields in written.items() if fields} == {}
    window = "\n".join(p.read_text("utf-8") for p in (ROOT / "app").rglob("*.py"))
    for flag in ("writing_memory", "backing_up"):
        assert flag not in window  # the window hears of the worker's work by signals


def test_the_handler_check_finds_a_field_written():
    assert _handler_writes(ast.parse("def run(backend, body):\n"
                                     "    backend.conversation_id = 3\n")) \
        == ["backend.conversation_id"]


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """What a module imports when it runs (not what it names for type checkers only);
    `from package import module` is that module, not the package."""
    tree = ast.parse(path.read_text("utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            node.body = []
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                inner = f"{node.module}.{alias.name}"
                found.add(inner if inner in modules else node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_no_module_imports_itself_back_through_others():
    modules = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): p
               for p in SOURCES}
    graph = {name: {m for m in _imports(path, modules) if m in modules and m != name}
             for name, path in modules.items()}
    assert _circles(graph) == []
    assert _circles(_package_graph(graph)) == []  # nor a package through other packages


def _package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The module graph as a graph of packages (`core.sync`, `app.graph`): a module in a
    package imports another package when one of its modules does (TYPE_CHECKING aside)."""
    def package(module: str) -> str | None:
        path = ROOT / Path(*module.split(".")[:2])
        return ".".join(module.split(".")[:2]) if path.is_dir() else None

    packages: dict[str, set[str]] = {}
    for name, imported in graph.items():
        own = package(name)
        if own is not None:
            packages.setdefault(own, set()).update(
                p for m in imported if (p := package(m)) is not None and p != own)
    return packages


def _circles(graph: dict[str, set[str]]) -> list[str]:
    state: dict[str, int] = {}
    circles: list[str] = []

    def visit(name: str, trail: list[str]) -> None:
        state[name] = 1
        for other in sorted(graph.get(name, ())):
            if state.get(other) == 1:
                circles.append(" -> ".join([*trail[trail.index(other):], other]))
            elif other not in state:
                visit(other, [*trail, other])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    return circles


def test_the_package_check_finds_a_circle():
    assert _circles({"core.a": {"core.b"}, "core.b": {"core.a"}}) == [
        "core.a -> core.b -> core.a"]


def test_pyside_makes_its_types_at_import_in_the_app_and_in_the_tests():
    """A lazily made Qt type raced the backend thread's start and crashed the process;
    `app` turns lazy loading off, so whoever imports it first gets every type at once."""
    assert len(vars(PySide6.QtWidgets)) > 150, "the tests imported PySide6 before app"
    probe = ("import app.main, PySide6.QtWidgets as w, PySide6.QtCore as c; "
             "print(len(vars(w)), len(vars(c)))")
    env = {k: v for k, v in os.environ.items() if k != "PYSIDE6_OPTION_LAZY"}
    counts = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            env=env, cwd=ROOT, check=True).stdout.split()
    assert int(counts[0]) > 150 and int(counts[1]) > 150, counts
