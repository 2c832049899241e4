"""Where TrulyMEM keeps its data: one folder holding the config and the graph database."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

HOME_ENV = "TRULYMEM_HOME"
DB_NAME = "graph_memory.db"
CONFIG_NAME = "config.json"


def data_home(explicit: str | os.PathLike[str] | None = None) -> Path:
    """`--home DIR` first, then $TRULYMEM_HOME, then ~/.trulymem."""
    if explicit:
        return Path(explicit).expanduser()
    if os.environ.get(HOME_ENV):
        return Path(os.environ[HOME_ENV]).expanduser()
    return Path.home() / ".trulymem"


def memory_label(home: str | os.PathLike[str] | None, name: str = "") -> str:
    """What a memory is called where two could be told apart (the title bar, the tray):
    the name the person gave it, else its folder's name; "" for the default folder with
    no name (the one memory most people have)."""
    if name.strip():
        return name.strip()
    if not home:
        return ""
    folder = Path(home).expanduser()
    return "" if folder == Path.home() / ".trulymem" else folder.name


def add_home_option(parser: argparse.ArgumentParser) -> None:
    """The `--home` every command and mode takes, said the same way everywhere."""
    from core.i18n import tr  # noqa: PLC0415  (paths load before the languages)

    parser.add_argument("--home",
                        help=tr("data folder (default $TRULYMEM_HOME or ~/.trulymem)"))


def database_path(home: Path) -> Path:
    return home / DB_NAME


def config_path(home: Path) -> Path:
    return home / CONFIG_NAME


PRIVATE_FOLDER = 0o700
PRIVATE_FILE = 0o600
# Files of ours that hold the person's data; anything else in the folder is left alone.
PRIVATE_PATTERNS = (f"{DB_NAME}*", f"{CONFIG_NAME}*", ".config-*", "window.ini", "*.db",
                    "*.db-wal", "*.db-shm", "*.db-journal")


def make_private_file(path: Path) -> bool:
    """Take group and other access away from `path` if it has any; True if it changed."""
    try:
        mode = path.stat().st_mode & 0o777
        if mode & 0o077:
            path.chmod(mode & PRIVATE_FILE)
            return True
    except OSError:  # missing, or not ours to change: nothing to tighten
        pass
    return False


def secure_home(home: Path) -> list[Path]:
    """Create the data folder readable by its owner only (0700), and tighten the folder
    and our files in it that older versions left readable by others. Answers what was
    tightened. Never raises: a folder that cannot be made or changed is reported later by
    whatever then fails to use it."""
    tightened: list[Path] = []
    try:
        home.mkdir(mode=PRIVATE_FOLDER, parents=True, exist_ok=True)
        if home.stat().st_mode & 0o077:
            home.chmod(PRIVATE_FOLDER)
            tightened.append(home)
        for pattern in PRIVATE_PATTERNS:
            tightened += [p for p in sorted(home.glob(pattern))
                          if p.is_file() and make_private_file(p)]
    except OSError:
        pass
    return list(dict.fromkeys(tightened))


def aside_path(path: Path, tag: str) -> Path:
    """A free name beside `path` for a copy kept aside (`name.tag-<time>`): two in one
    second never collide, and no file already there is ever overwritten."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    candidate, n = path.with_name(f"{path.name}.{tag}-{stamp}"), 1
    while candidate.exists():
        candidate, n = path.with_name(f"{path.name}.{tag}-{stamp}-{n}"), n + 1
    return candidate


def file_name(title: str, most: int = 80) -> str:
    """A title as a file name on any system: no path separators, reserved or control
    characters, no leading dots, bounded ("Trip: Kyoto/Osaka?" is "Trip Kyoto Osaka")."""
    kept = "".join(" " if c in '<>:"/\\|?*' or not c.isprintable() else c for c in title)
    return " ".join(kept.split()).strip(" .")[:most].strip(" .")
