"""Icons and desktop-integration files, found through importlib.resources so the same code
works from a source checkout and from the frozen build."""

from __future__ import annotations

from importlib.resources import as_file, files
from pathlib import Path


def resource_text(name: str) -> str:
    return files(__package__).joinpath(name).read_text(encoding="utf-8")


def resource_bytes(name: str) -> bytes:
    return files(__package__).joinpath(name).read_bytes()


def resource_path(name: str) -> Path:
    """A real file path (for Qt APIs that want one); resources ship as plain files."""
    with as_file(files(__package__).joinpath(name)) as path:
        return Path(path)
