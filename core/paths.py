"""Where TrulyMEM keeps its data: one folder holding the config and the graph database."""

from __future__ import annotations

import os
from pathlib import Path

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


def database_path(home: Path) -> Path:
    return home / DB_NAME


def config_path(home: Path) -> Path:
    return home / CONFIG_NAME
