"""Status-bar parts that shrink gracefully: each elides its text to the room it gets (the
whole text stays in its tooltip), so a narrow window shows "Tokens: last 1,2…" rather
than parts clipped into each other."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QFrame, QLabel, QWidget

from app.sizes import chars


class StatusPart(QLabel):
    clicked = Signal()

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self._full = text

    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.clicked.emit()
        super().mousePressEvent(event)

    def setText(self, text: str) -> None:
        if text == self._full and self.toolTip() == text:
            return  # set on every streamed delta: no relayout when nothing changed
        self._full = text
        self.setToolTip(text)
        super().setText(text)
        self.updateGeometry()

    def text(self) -> str:
        return self._full

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        return QSize(min(hint.width(), chars(self, 6)),
                     hint.height())

    def sizeHint(self) -> QSize:
        return QSize(self.fontMetrics().horizontalAdvance(self._full) + 4,
                     super().sizeHint().height())

    def paintEvent(self, _event) -> None:
        painter = QPainter(self)
        shown = self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight,
                                              self.contentsRect().width())
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.drawText(self.contentsRect(), Qt.AlignmentFlag.AlignVCenter
                         | Qt.AlignmentFlag.AlignLeft, shown)


def separator() -> QFrame:
    line = QFrame()
    line.setFrameShape(QFrame.Shape.VLine)
    line.setFrameShadow(QFrame.Shadow.Sunken)
    return line


def first_upper(text: str) -> str:
    """A backend summary as the start of a sentence: only its first letter raised (names
    inside it keep their case, which str.capitalize would lower)."""
    return text[:1].upper() + text[1:]


def count_of(n: int, one: str, many: str) -> str:
    """`one` ("1 change") or `many` ("{n} changes") filled in: both already translated."""
    return one if n == 1 else many.format(n=f"{n:,}")
