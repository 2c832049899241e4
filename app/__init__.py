"""TrulyMEM desktop window (PySide6); displays what core/ does."""

import os
from importlib.metadata import PackageNotFoundError, version

# PySide 6.11 makes a Qt type the first time Python reads its name (lazy loading). The
# window's backend thread starts while the GUI thread may still be making such types, and
# that race crashed the process (a segfault on the backend thread while the GUI thread made
# QEventLoop's enums, 2 runs in 60). Making every type when PySide6 is imported removes
# the race at about 60 ms of start-up. It must be set before PySide6 is first imported:
# every entry point (app.main, the standalone launcher, the tests) imports `app` first.
os.environ.setdefault("PYSIDE6_OPTION_LAZY", "0")

try:
    __version__ = version("trulymem")  # the standalone build carries the metadata too
except PackageNotFoundError:
    __version__ = "(unknown version)"
