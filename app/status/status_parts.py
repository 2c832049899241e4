"""Status-bar parts that shrink gracefully: each elides its text to the room it gets (the
whole text stays in its tooltip), so a narrow window shows "Tokens: last 1,2…" rather
than parts clipped into each other."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QFrame, QLabel, QWidget

from app.looks.sizes import chars
from core.i18n import tr


class StatusPart(QLabel):
    clicked = Signal()
    changed = Signal()  # its text changed

    def __init__(self, text: str = "", parent: QWidget | None = None,
                 steady: bool = False) -> None:
        """A `steady` part asks for the same room whatever it says (the turn's state at
        the left): a message coming and going moves no other part."""
        super().__init__(text, parent)
        self._full = text
        self.steady = steady

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
        self.changed.emit()

    def text(self) -> str:
        return self._full

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        return QSize(min(hint.width(), chars(self, 6)),
                     hint.height())

    def sizeHint(self) -> QSize:
        width = chars(self, 12) if self.steady else self.natural_width()
        return QSize(width, super().sizeHint().height())

    def natural_width(self) -> int:
        """The room its whole text takes."""
        return self.fontMetrics().horizontalAdvance(self._full) + 4

    def narrowest(self) -> int:
        """The least room it says what matters in (all of it, for most parts)."""
        return self.natural_width()

    def shown(self, width: int) -> str:
        """What fits in `width` pixels."""
        return self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight, width)

    def paintEvent(self, _event) -> None:
        painter = QPainter(self)
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.drawText(self.contentsRect(), Qt.AlignmentFlag.AlignVCenter
                         | Qt.AlignmentFlag.AlignLeft, self.shown(self.contentsRect().width()))


class EndpointPart(StatusPart):
    """"host · model": the model is what the person needs to read, so the host gives way
    first ("127.0… · deepseek-v4-flash", then the model alone; the whole URL stays in the
    tooltip), and the model is cut only when nothing else is left to give."""

    def __init__(self) -> None:
        super().__init__()
        self.host, self.model = "", ""

    def set_endpoint(self, host: str, model: str, url: str) -> None:
        self.host, self.model = host, model
        self.setText(f"{host} · {model}" if host and model else host or model)
        self.setToolTip(url)

    def narrowest(self) -> int:
        return self.fontMetrics().horizontalAdvance(self.model or self.text()) + 4

    def shown(self, width: int) -> str:
        metrics = self.fontMetrics()
        whole = self.text()
        if metrics.horizontalAdvance(whole) <= width or not (self.host and self.model):
            return super().shown(width)
        tail = f" · {self.model}"
        room = width - metrics.horizontalAdvance(tail)
        host = metrics.elidedText(self.host, Qt.TextElideMode.ElideRight, room)
        if room > 0 and len(host.rstrip("…")) >= 4:
            return host + tail
        return metrics.elidedText(self.model, Qt.TextElideMode.ElideRight, width)


def separator() -> QFrame:
    line = QFrame()
    line.setFrameShape(QFrame.Shape.VLine)
    line.setFrameShadow(QFrame.Shadow.Sunken)
    return line


def first_upper(text: str) -> str:
    """A backend summary as the start of a sentence: only its first letter raised (names
    inside it keep their case, which str.capitalize would lower)."""
    return text[:1].upper() + text[1:]


def as_sentence(text: str) -> str:
    """A backend summary as a whole sentence in the person's language: its first letter
    raised and the language's full stop ("。" in Chinese, where "." read as a leftover)."""
    return tr("{sentence}.", sentence=first_upper(text))


def count_of(n: int, one: str, many: str) -> str:
    """`one` ("1 change") or `many` ("{n} changes") filled in: both already translated."""
    return one if n == 1 else many.format(n=f"{n:,}")


def synced_words(data: dict) -> str:
    """What a sync did, counted the same way in the toast and in Settings › Sync: the
    changes this device sent and the ones that arrived ("1 change", never "1 rows")."""
    sent = count_of(int(data.get("wrote", 0)), tr("1 change"), tr("{n} changes"))
    came = count_of(int(data.get("applied_rows", 0)), tr("1 change"), tr("{n} changes"))
    files = int(data.get("applied_files", 0))
    if not files:
        return tr("Synced: sent {sent}; nothing arrived", sent=sent)
    return tr("Synced: sent {sent}; {came} arrived from {files}", sent=sent, came=came,
              files=count_of(files, tr("1 file"), tr("{n} files")))
