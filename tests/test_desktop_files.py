"""The menu entry, its icon and the start-at-login entry: written where the XDG base
directories say, starting the program that wrote them (with its data folder), quoted as
the Desktop Entry spec wants, valid for desktop-file-validate, and removed without a trace."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core import desktop_files

ROOT = Path(__file__).resolve().parent.parent
# Every reserved character of the spec, a percent sign and a backslash.
AWKWARD = "my data/it's \"$HOME\" & `x` \\ 100% (a|b);<c>~*?#"


@pytest.fixture
def xdg(tmp_path, monkeypatch):
    """XDG_DATA_HOME and XDG_CONFIG_HOME in tmp_path."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path


def keys(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text(encoding="utf-8").splitlines()
                if "=" in line)


def unescape_string(value: str) -> str:
    escapes = {"s": " ", "n": "\n", "t": "\t", "r": "\r", "\\": "\\"}
    out, i = [], 0
    while i < len(value):
        if value[i] == "\\" and i + 1 < len(value) and value[i + 1] in escapes:
            out.append(escapes[value[i + 1]])
            i += 2
        else:
            out.append(value[i])
            i += 1
    return "".join(out)


def exec_arguments(value: str) -> list[str]:
    """Split an Exec value the way the spec tells launchers to: string escapes first,
    then double-quoted arguments with `\\` escaping `"` `` ` `` `$` `\\`, then `%%`."""
    text, arguments, current, quoted, i = unescape_string(value), [], [], False, 0
    started = False
    while i < len(text):
        c = text[i]
        if quoted:
            if c == "\\" and text[i + 1] in '"`$\\':
                current.append(text[i + 1])
                i += 1
            elif c == '"':
                quoted = False
            else:
                current.append(c)
        elif c == '"':
            quoted = started = True
        elif c == " ":
            if started:
                arguments.append("".join(current))
            current, started = [], False
        else:
            current.append(c)
            started = True
        i += 1
    if started:
        arguments.append("".join(current))
    return [a.replace("%%", "%") for a in arguments]


def validate(path: Path) -> None:
    if shutil.which("desktop-file-validate") is None:
        return  # desktop-file-utils (CI installs it) checks the spec; the keys are checked anyway
    result = subprocess.run(["desktop-file-validate", str(path)], capture_output=True,
                            text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_menu_entry_starts_this_program_on_its_data_folder_and_goes_away_clean(
        xdg, monkeypatch):
    monkeypatch.setattr(desktop_files, "program_command", lambda: ["/opt/my apps/trulymem"])
    home = xdg / AWKWARD
    done = desktop_files.install_entry(home)
    assert done["success"], done
    entry = xdg / "data" / "applications" / "trulymem.desktop"
    icon = xdg / "data" / "icons" / "hicolor" / "scalable" / "apps" / "trulymem.svg"
    assert done["data"]["entry"] == str(entry)
    assert icon.read_text(encoding="utf-8").lstrip().startswith("<svg")
    values = keys(entry)
    assert exec_arguments(values["Exec"]) == ["/opt/my apps/trulymem", "--home", str(home)]
    assert values["TryExec"] == "/opt/my apps/trulymem"  # a removed install: entry ignored
    assert values["Icon"] == "trulymem" and values["Name"] == "TrulyMEM"
    validate(entry)
    assert not desktop_files.starts_at_login()
    assert desktop_files.set_start_at_login(True, home)["success"]
    removed = desktop_files.remove_entry()
    assert removed["success"] and set(removed["data"]["removed"]) == {
        str(entry), str(icon), str(desktop_files.autostart_path())}
    assert [p for p in xdg.rglob("*") if p.is_file()] == []
    assert desktop_files.remove_entry() == {"success": True, "data": {"removed": []}}


@pytest.mark.parametrize("argument", ["plain", "with space", AWKWARD, "tab\tnew\nline", ""])
def test_every_argument_comes_back_as_it_was_quoted(argument):
    line = desktop_files.exec_line(["/usr/bin/trulymem", argument])
    assert exec_arguments(line) == ["/usr/bin/trulymem", argument]


def test_the_default_data_folder_is_left_out_of_the_command(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert desktop_files.home_arguments(None) == []
    assert desktop_files.home_arguments(tmp_path / ".trulymem") == []
    assert desktop_files.home_arguments("~/other") == ["--home", str(tmp_path / "other")]


def test_the_command_is_the_frozen_program_or_the_trulymem_script(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", "/opt/trulymem/trulymem")
    assert desktop_files.program_command() == ["/opt/trulymem/trulymem"]
    monkeypatch.delattr(sys, "frozen")
    script = tmp_path / "bin" / "trulymem"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.setattr(sys, "argv", [str(script), "--install-desktop-entry"])
    assert desktop_files.program_command() == [str(script)]
    monkeypatch.setattr(sys, "argv", ["-c"])  # python -c / -m: the script beside python
    monkeypatch.setattr(sys, "executable", str(tmp_path / "bin" / "python3"))
    assert desktop_files.program_command() == [str(script)]
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python3"))
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert desktop_files.program_command() == [str(tmp_path / "python3"), "-m", "app.main"]


def test_an_autostart_entry_the_desktop_switched_off_is_off(xdg):
    assert desktop_files.set_start_at_login(True)["success"]
    path = xdg / "config" / "autostart" / "trulymem.desktop"
    validate(path)
    assert desktop_files.starts_at_login()
    path.write_text(path.read_text(encoding="utf-8") + "Hidden=true\n", encoding="utf-8")
    assert not desktop_files.starts_at_login()
    assert desktop_files.set_start_at_login(True)["success"]  # on again: written anew
    assert desktop_files.starts_at_login()
    assert desktop_files.set_start_at_login(False)["success"]
    assert not path.exists() and not desktop_files.starts_at_login()


def test_a_folder_that_cannot_be_written_is_an_answer_not_an_exception(xdg):
    (xdg / "config").write_text("a file where the folder should be")
    done = desktop_files.set_start_at_login(True)
    assert not done["success"] and "autostart" in done["error"]


def test_the_command_line_adds_and_removes_the_menu_entry(xdg):
    env = {**os.environ, "XDG_DATA_HOME": str(xdg / "data"),
           "XDG_CONFIG_HOME": str(xdg / "config")}
    script = Path(sys.executable).parent / "trulymem"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "app.main"]
    added = subprocess.run([*command, "--home", str(xdg / "home"), "--install-desktop-entry"],
                           capture_output=True, text=True, env=env, cwd=ROOT, check=False,
                           timeout=60)
    assert added.returncode == 0, added.stderr
    entry = xdg / "data" / "applications" / "trulymem.desktop"
    assert str(entry) in added.stdout
    assert exec_arguments(keys(entry)["Exec"])[-2:] == ["--home", str(xdg / "home")]
    assert not (xdg / "home").exists()  # adding a menu entry makes no data folder
    removed = subprocess.run([*command, "--remove-desktop-entry"], capture_output=True,
                             text=True, env=env, cwd=ROOT, check=False, timeout=60)
    assert removed.returncode == 0, removed.stderr
    assert not entry.exists() and str(entry) in removed.stdout


def test_the_backend_reads_and_sets_starting_at_login_with_the_config(xdg, headless):
    _server, client = headless()
    assert client.get_config()["start_at_login"] is False
    assert client.update_config(None, start_at_login=True)["status"] == "config_updated"
    path = xdg / "config" / "autostart" / "trulymem.desktop"
    assert exec_arguments(keys(path)["Exec"])[-2:] == ["--home", str(xdg / "home")]
    assert client.get_config()["start_at_login"] is True
    config = xdg / "home" / "config.json"
    assert not config.exists() or "start_at_login" not in config.read_text()
    assert client.update_config(None, start_at_login=False)["status"] == "config_updated"
    assert not path.exists() and client.get_config()["start_at_login"] is False
