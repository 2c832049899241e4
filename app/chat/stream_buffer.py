"""Streamed text gathered between repaints: a fast endpoint sends thousands of tiny deltas
a second, and handling each one (grow the reply, tell the view) kept the window busy for
70 ms at a time; they are applied together, at most every FLUSH_MS."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

FLUSH_MS = 16  # about one screen refresh


class StreamBuffer(QObject):
    def __init__(self, apply: Callable[[str, str], None], parent: QObject | None = None) -> None:
        """`apply(kind, text)` gets "text" or "reasoning" and the text gathered."""
        super().__init__(parent)
        self.apply = apply
        self.pending: dict[str, list[str]] = {"text": [], "reasoning": []}
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(FLUSH_MS)
        self.timer.timeout.connect(self.flush)

    def add(self, kind: str, delta: str) -> None:
        self.pending[kind].append(delta)
        if not self.timer.isActive():
            self.timer.start()

    def flush(self) -> None:
        """Apply what is pending now (also before a turn's end is shown)."""
        self.timer.stop()
        for kind, parts in self.pending.items():
            if parts:
                text = "".join(parts)
                parts.clear()
                self.apply(kind, text)
