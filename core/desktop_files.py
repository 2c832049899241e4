"""The menu entry, its icon and the start-at-login entry, written where desktops look for
them (the XDG base directories): `$XDG_DATA_HOME/applications`, the hicolor icon theme
under `$XDG_DATA_HOME/icons`, and `$XDG_CONFIG_HOME/autostart`.

Whether TrulyMEM starts at login is not a setting in the config file: the autostart entry
existing is the setting, so the desktop's own session settings and the app's checkbox
can never disagree. Each entry's Exec names the program actually running (the frozen
executable, or the `trulymem` script of the environment it runs from), with `--home` when
the data folder is not the default one, and its TryExec names the same file, so an entry
left behind by a removed install is ignored rather than failing at every login.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from importlib.resources import files
from pathlib import Path
from typing import Any

from core.i18n import N_, tr

APP_ID = "trulymem"
# Desktops that read XDG entries: Linux and the BSDs (Windows and macOS have their own).
SUPPORTED = not sys.platform.startswith(("win32", "cygwin", "darwin"))
ENTRY_NAME = f"{APP_ID}.desktop"
ICON_FILES = (("trulymem.svg", "scalable", "svg"), ("trulymem-256.png", "256x256", "png"))
# The Desktop Entry spec's reserved characters: an argument holding one is double-quoted.
RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")
QUOTED_ESCAPES = set('"`$\\')


def _base(variable: str, default: str) -> Path:
    """An XDG base directory; a relative value is invalid by the spec and ignored."""
    value = os.environ.get(variable, "")
    return Path(value) if os.path.isabs(value) else Path.home() / default


def data_dir() -> Path:
    return _base("XDG_DATA_HOME", ".local/share")


def entry_path() -> Path:
    return data_dir() / "applications" / ENTRY_NAME


def icon_paths() -> list[Path]:
    theme = data_dir() / "icons" / "hicolor"
    return [theme / size / "apps" / f"{APP_ID}.{suffix}" for _, size, suffix in ICON_FILES]


def autostart_path() -> Path:
    return _base("XDG_CONFIG_HOME", ".config") / "autostart" / ENTRY_NAME


def program_command() -> list[str]:
    """How to start the program running now, from a desktop that has none of its
    environment: the frozen executable; the `trulymem` script it was started as, or the
    one beside this Python (a virtual environment's, even off PATH), or the one on PATH;
    else this Python running the module."""
    if getattr(sys, "frozen", False):
        return [os.path.abspath(sys.executable)]
    started_as = sys.argv[0] if sys.argv else ""
    if Path(started_as).name == APP_ID and os.path.isfile(started_as):
        return [os.path.abspath(started_as)]
    beside = Path(sys.executable).parent / APP_ID
    if beside.is_file() and os.access(beside, os.X_OK):
        return [os.path.abspath(beside)]
    on_path = shutil.which(APP_ID)
    if on_path:
        return [os.path.abspath(on_path)]
    return [os.path.abspath(sys.executable), "-m", "app.main"]


def home_arguments(home: str | os.PathLike[str] | None) -> list[str]:
    """`--home DIR` when the data folder is not the default: a login session does not
    have the $TRULYMEM_HOME or the command line the app was started with."""
    if home is None:
        return []
    folder = Path(home).expanduser().absolute()
    return [] if folder == (Path.home() / ".trulymem").absolute() else ["--home", str(folder)]


def _string_value(text: str) -> str:
    """The escapes of the spec's string type: backslash first, then the whitespace."""
    return (text.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")
            .replace("\r", "\\r"))


def quote_argument(argument: str) -> str:
    """One Exec argument as the Desktop Entry spec wants it: `%` doubled, an argument
    with a reserved character double-quoted with `"` `` ` `` `$` `\\` escaped inside,
    and then the string escapes over all of it (so a literal backslash is four)."""
    argument = argument.replace("%", "%%")
    if not argument or any(c in RESERVED for c in argument):
        argument = '"' + "".join("\\" + c if c in QUOTED_ESCAPES else c
                                 for c in argument) + '"'
    return _string_value(argument)


def exec_line(arguments: list[str]) -> str:
    return " ".join(quote_argument(a) for a in arguments)


def entry_text(command: list[str]) -> str:
    """The packaged entry (resources/trulymem.desktop) with this program's Exec and
    TryExec in place of its `Exec=trulymem`."""
    lines = []
    for line in files("resources").joinpath(ENTRY_NAME).read_text(encoding="utf-8") \
            .splitlines():
        if line.startswith("Exec="):
            lines += [f"TryExec={_string_value(command[0])}", f"Exec={exec_line(command)}"]
        elif not line.startswith("TryExec="):
            lines.append(line)
    return "\n".join(lines) + "\n"


def _write(path: Path, data: bytes) -> None:
    """Atomic, readable by all (an entry and an icon hold nothing private)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _failed(template: str, path: Path, error: OSError) -> dict[str, Any]:
    return {"success": False, "error": tr(template, path=str(path),
                                          error=error.strerror or str(error))}


def install_entry(home: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Put TrulyMEM in the applications menu, with its icon; answers the files written."""
    command = program_command() + home_arguments(home)
    written = []
    targets = [*zip((name for name, _, _ in ICON_FILES), icon_paths(), strict=True),
               (ENTRY_NAME, entry_path())]
    target = entry_path()
    try:
        for name, target in targets:
            if name == ENTRY_NAME:
                data = entry_text(command).encode("utf-8")
            elif files("resources").joinpath(name).is_file():
                data = files("resources").joinpath(name).read_bytes()
            else:  # the PNG is made by the build: only frozen builds have it
                continue
            _write(target, data)
            written.append(str(target))
    except OSError as error:
        return _failed(N_("could not write {path}: {error}"), target, error)
    return {"success": True, "data": {"entry": str(entry_path()), "files": written,
                                      "command": command}}


def _remove(paths: list[Path]) -> dict[str, Any]:
    removed = []
    for path in paths:
        try:
            path.unlink()
            removed.append(str(path))
        except FileNotFoundError:
            pass
        except OSError as error:
            return _failed(N_("could not remove {path}: {error}"), path, error)
    return {"success": True, "data": {"removed": removed}}


def remove_entry() -> dict[str, Any]:
    """Take away everything `install_entry` and `set_start_at_login` put outside the data
    folder (run before uninstalling a pip install); the data folder is left alone."""
    return _remove([entry_path(), *icon_paths(), autostart_path()])


def starts_at_login() -> bool:
    """The autostart entry exists and the desktop has not switched it off (GNOME's and
    the spec's ways of switching an entry off without deleting it)."""
    try:
        text = autostart_path().read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    keys = {k.strip(): v.strip() for k, _, v in
            (line.partition("=") for line in text.splitlines()) if _}
    return keys.get("Hidden") != "true" and keys.get("X-GNOME-Autostart-enabled") != "false"


def set_start_at_login(on: bool, home: str | os.PathLike[str] | None = None
                       ) -> dict[str, Any]:
    """Write or remove `$XDG_CONFIG_HOME/autostart/trulymem.desktop`."""
    path = autostart_path()
    if not on:
        return _remove([path])
    command = program_command() + home_arguments(home)
    try:
        _write(path, entry_text(command).encode("utf-8"))
    except OSError as error:
        return _failed(N_("could not write {path}: {error}"), path, error)
    return {"success": True, "data": {"entry": str(path), "command": command}}
