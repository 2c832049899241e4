"""A brief confirmation floating over the window ("Code copied (8 lines)", "Allowed: …"),
as chat apps show them.

The status bar's temporary message had no room of its own: it replaced the left part, the
permanent parts took the width, and every confirmation was invisible. The toast has its own
place, above the input row at the bottom centre, wraps instead of eliding, and stays for its
time (longer when pointed at); a new one replaces the old."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QRect, Qt, QTimer
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QLabel, QWidget

from app.looks.sizes import chars

MIN_MSECS = 3000
CONFIRM_MSECS = 4000  # a save confirmed (Settings, Tool limits, a rename…)


class Toast(QLabel):
    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.setObjectName("toast")
        self.setWordWrap(True)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._expire)
        self._style()
        self.hide()
        window.installEventFilter(self)

    def _style(self) -> None:
        """Inverted colours, the window's text colour as the background, so it reads on
        light and dark themes alike."""
        palette = self.palette()
        text = palette.color(QPalette.ColorRole.WindowText)
        back = palette.color(QPalette.ColorRole.Window)
        pad = self.fontMetrics().height() // 2
        background = QColor(text)
        background.setAlpha(235)
        self.setStyleSheet(
            f"QLabel#toast {{ background: {background.name(QColor.NameFormat.HexArgb)};"
            f" color: {back.name()}; border-radius: {pad}px;"
            f" padding: {pad}px {2 * pad}px; }}")

    def show_text(self, text: str, msecs: int = MIN_MSECS) -> None:
        """Shows `text` for at least three seconds, or `msecs` if longer."""
        self.setText(text)
        self.setToolTip(text)
        self._place()
        self.show()
        self.raise_()
        self._timer.start(max(MIN_MSECS, msecs))

    def current(self) -> str:
        """The text on screen now ("" when none): what a person reads."""
        return self.text() if self.isVisible() else ""

    def _expire(self) -> None:
        if self.underMouse():
            self._timer.start(1000)  # being read: stay a moment more
            return
        self.hide()

    def _place(self) -> None:
        window = self.parentWidget()
        central = getattr(window, "centralWidget", lambda: None)()
        area = central.geometry() if central is not None else window.rect()
        margin = self.fontMetrics().height()
        pad = margin // 2
        frame = 4 * pad + 2  # the style's padding on both sides, and the border
        room = max(1, min(area.width() - 2 * margin, chars(self, 90)))
        natural = self.fontMetrics().horizontalAdvance(self.text()) + frame
        width = min(natural, room)
        height = self.heightForWidth(width)
        if height < 0:
            height = self.sizeHint().height()
        # Above the input row, which is about three lines tall with its frame.
        bottom = area.bottom() - 4 * margin
        self.setGeometry(QRect(area.center().x() - width // 2, bottom - height, width, height))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and self.isVisible():
            self._place()
        elif event.type() == QEvent.Type.PaletteChange:
            self._style()
        return False

    def mousePressEvent(self, _event) -> None:
        self.hide()  # a click puts it away
