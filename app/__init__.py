"""TrulyMEM desktop window (PySide6); displays what core/ does."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("trulymem")  # the standalone build carries the metadata too
except PackageNotFoundError:
    __version__ = "(unknown version)"
