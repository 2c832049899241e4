"""What the window benchmarks share: an event-loop stall probe and ways to wait for the
window without blocking it."""

from __future__ import annotations

import os
import time
from pathlib import Path

from PySide6.QtCore import QElapsedTimer, QTimer
from PySide6.QtWidgets import QApplication

from app.startup import gui


class GapProbe:
    """A 5 ms timer; the longest time between two of its ticks is the longest stall."""

    def __init__(self) -> None:
        self.clock = QElapsedTimer()
        self.timer = QTimer()
        self.timer.timeout.connect(self._tick)
        self.gaps: list[float] = []

    def start(self) -> None:
        self.gaps = []
        self.clock.start()
        self._last = self.clock.nsecsElapsed()
        self.timer.start(5)

    def _tick(self) -> None:
        now = self.clock.nsecsElapsed()
        self.gaps.append((now - self._last) / 1e6)
        self._last = now

    def stop(self) -> float:
        self.timer.stop()
        return max(self.gaps, default=0.0)


def offscreen_application() -> QApplication:
    """The window's application, drawn off screen unless a display is asked for."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    return gui.make_application()


def wait(app: QApplication, condition, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the window did not get there in time")
        app.processEvents()
        time.sleep(0.001)


def open_ready(app: QApplication, home: Path, size: tuple[int, int] = (1100, 800)):
    """A window on `home`, shown, with its store open and its history on screen."""
    window = gui.open_window(home)
    ready: list[bool] = []
    window.usable.connect(lambda: ready.append(True))
    window.resize(*size)
    window.show()
    wait(app, lambda: bool(ready) and not window.host.busy)
    return window
