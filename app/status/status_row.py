"""The status bar's lasting parts, laid out by what matters most.

Left to Qt's layout every part shrank by the same share: at 1280 pixels the model's name
was cut ("127.0.0.1:35601 · deepsee…") while the token count showed whole, and at 800
every part was cut. Here each part shows whole or not at all, in this order of giving
way: the endpoint's host shortens first (the model's name stays), then the tokens, the
indexer's progress and the review count step aside (each says the same in a tooltip
elsewhere or on a click), and only then are the model's name and the memory's counts cut.
The row sits at the right of the status bar, so the turn's state at its left (a message
coming and going) moves nothing here."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QFrame, QSizePolicy, QWidget

from app.looks.sizes import chars
from app.status.status_parts import StatusPart, separator


@dataclass
class Place:
    part: StatusPart
    line: QFrame
    drops: int = 0  # the order it steps aside when room is short (1 first); 0 never


class StatusRow(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("statusParts")
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.places: list[Place] = []

    def add(self, part: StatusPart, drops: int = 0) -> None:
        line = separator()
        line.setParent(self)
        part.setParent(self)
        part.changed.connect(self.refresh)
        self.places.append(Place(part, line, drops))
        self.updateGeometry()

    def refresh(self) -> None:
        """A part's text changed: the row asks for its new room and arranges again."""
        self.updateGeometry()
        self.arrange()

    def wanted(self) -> list[Place]:
        """The parts that have something to say."""
        return [p for p in self.places if p.part.text()]

    def _gap(self) -> int:
        return chars(self, 1.5)  # a separator with room on both sides

    def sizeHint(self) -> QSize:
        wanted = self.wanted()
        width = sum(p.part.natural_width() for p in wanted) + self._gap() * len(wanted)
        return QSize(width, self._height())

    def minimumSizeHint(self) -> QSize:
        return QSize(chars(self, 12), self._height())

    def _height(self) -> int:
        return max((p.part.sizeHint().height() for p in self.places), default=0)

    def widths(self, room: int) -> dict[StatusPart, int]:
        """Each shown part's width in `room` pixels, by the order of giving way."""
        shown = self.wanted()
        gap = self._gap()
        width = {p.part: p.part.natural_width() for p in shown}

        def need() -> int:
            return sum(width.values()) + gap * len(width)

        for place in shown:  # the host gives way first: the model's name stays whole
            over = need() - room
            if over > 0:
                part = place.part
                width[part] = max(part.narrowest(), width[part] - over)
        for place in sorted((p for p in shown if p.drops), key=lambda p: p.drops):
            if need() > room:
                del width[place.part]
        over = need() - room
        if over > 0:  # still too narrow: the rest shares the cut, the widest first
            least = chars(self, 6)
            for part in sorted(width, key=width.get, reverse=True):
                cut = min(over, max(0, width[part] - least))
                width[part] -= cut
                over -= cut
        return width

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.arrange()

    def arrange(self) -> None:
        widths = self.widths(self.width())
        gap, height = self._gap(), self.height()
        x = 0
        for place in self.places:
            width = widths.get(place.part)
            place.part.setVisible(width is not None)
            place.line.setVisible(width is not None)
            if width is None:
                continue
            place.line.setGeometry(x + gap // 2, 0, 2, height)
            place.part.setGeometry(x + gap, 0, width, height)
            x += gap + width
        self.update()


def is_lasting(text: str, resting: str) -> bool:
    """A state that goes on is said with an ellipsis ("Thinking…", "正在导入…") or is the
    resting one ("Ready"); anything else is news that goes after a while."""
    return text == resting or text.endswith(("…", "..."))

