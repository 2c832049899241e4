"""Text zoom: Ctrl+= (or Ctrl++), Ctrl+- and Ctrl+0 scale the chat's and the Memory tab's
text in steps from 80 % to 200 %. The factor belongs to this installation (the window's
QSettings, beside its geometry), not to a memory. The parts follow their font themselves:
each redraws or measures again on its FontChange; the tables' row heights follow here."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import QObject, QSettings, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QTableView, QWidget

from app.looks.sizes import line_height
from core.i18n import tr

STEPS = (80, 90, 100, 110, 120, 135, 150, 175, 200)  # percent
KEY = "view/text_zoom"


def scaled(font: QFont, percent: int) -> QFont:
    """`font` at `percent` of its size (in points, or pixels for a font sized in them)."""
    result = QFont(font)
    if font.pointSizeF() > 0:
        result.setPointSizeF(font.pointSizeF() * percent / 100)
    elif font.pixelSize() > 0:
        result.setPixelSize(max(1, round(font.pixelSize() * percent / 100)))
    return result


class TextZoom(QObject):
    said = Signal(str, int)  # "Text 120%", for the toast

    def __init__(self, settings: QSettings, targets: Sequence[QWidget],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.targets = list(targets)
        try:
            stored = int(settings.value(KEY, 100))
        except (TypeError, ValueError):
            stored = 100
        self.percent = min(STEPS, key=lambda step: abs(step - stored))
        if self.percent != 100:
            self._apply()

    def handlers(self) -> dict[str, Callable[[], None]]:
        return {"view.zoom_in": lambda: self.step(1), "view.zoom_out": lambda: self.step(-1),
                "view.zoom_reset": self.reset}

    def step(self, direction: int) -> None:
        at = STEPS.index(self.percent)
        self.set_percent(STEPS[max(0, min(len(STEPS) - 1, at + direction))])

    def reset(self) -> None:
        self.set_percent(100)

    def set_percent(self, percent: int) -> None:
        changed = percent != self.percent
        self.percent = percent
        if changed:
            self._apply()
            self.settings.setValue(KEY, percent)
        self.said.emit(tr("Text {percent}%", percent=percent), 2000)

    def _apply(self) -> None:
        for target in self.targets:
            target.setFont(QFont())  # back to the inherited font, the 100 % one
            if self.percent != 100:
                target.setFont(scaled(target.font(), self.percent))
            for table in target.findChildren(QTableView):  # rows as tall as the new lines
                table.verticalHeader().setDefaultSectionSize(line_height(table) + 6)
