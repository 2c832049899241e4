"""A brief confirmation ("Code copied (8 lines)", "Allowed: …"), as chat apps show them.

The status bar's temporary message had no room of its own: it replaced the left part, the
permanent parts took the width, and every confirmation was invisible. Floating above the
input row, the toast then covered the newest reply exactly where the person was reading.
So it has a strip of its own under the tabs, above the status bar: while it shows, the
conversation is a line shorter (and still shows its newest message), nothing is covered;
it wraps instead of eliding, stays for its time (longer when pointed at), a new one
replaces the old, and a screen reader hears it."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

from app.looks.access import announce
from app.looks.sizes import chars

MIN_MSECS = 3000
CONFIRM_MSECS = 4000  # a save confirmed (Settings, Tool limits, a rename…)


class Toast(QLabel):
    """The confirmation itself; `strip` is the row it sits in, to be put in a layout."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("toast")
        self.setWordWrap(True)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.strip = QWidget()
        self.strip.setObjectName("toastStrip")
        row = QHBoxLayout(self.strip)
        pad = self.fontMetrics().height() // 4
        row.setContentsMargins(pad, pad, pad, pad)
        row.addStretch(1)
        row.addWidget(self)
        row.addStretch(1)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._expire)
        self._style()
        self.strip.hide()
        self.strip.installEventFilter(self)  # its own style changes its own palette

    def _style(self) -> None:
        """Inverted colours, the window's text colour as the background, so it reads on
        light and dark themes alike."""
        palette = self.strip.palette()
        text = palette.color(QPalette.ColorRole.WindowText)
        back = palette.color(QPalette.ColorRole.Window)
        pad = self.fontMetrics().height() // 2
        self.setStyleSheet(
            f"QLabel#toast {{ background: {QColor(text).name()};"
            f" color: {back.name()}; border-radius: {pad}px;"
            f" padding: {pad // 2}px {2 * pad}px; }}")

    def show_text(self, text: str, msecs: int = MIN_MSECS) -> None:
        """Shows `text` for at least three seconds, or `msecs` if longer."""
        self.setText(text)
        self.setToolTip(text)
        self._fit()
        self.strip.show()
        self._timer.start(max(MIN_MSECS, msecs))
        announce(self, text)

    def current(self) -> str:
        """The text on screen now ("" when none): what a person reads."""
        return self.text() if self.isVisible() else ""

    def hide(self) -> None:
        self.strip.hide()

    def _expire(self) -> None:
        if self.underMouse():
            self._timer.start(1000)  # being read: stay a moment more
            return
        self.hide()

    def _fit(self) -> None:
        """As wide as its words, up to 90 characters or the window's width: a wrapped
        label left to a layout wraps at a third of that."""
        pad = self.fontMetrics().height() // 2
        natural = self.fontMetrics().horizontalAdvance(self.text()) + 4 * pad + 2
        room = max(1, self.strip.width() - 2 * self.fontMetrics().height())
        self.setFixedWidth(min(natural, room, chars(self, 90)))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.PaletteChange:
            self._style()
        elif event.type() == QEvent.Type.Resize:
            self._fit()
        return False

    def mousePressEvent(self, _event) -> None:
        self.hide()  # a click puts it away
