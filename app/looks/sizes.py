"""Sizes from font metrics that mean the same in every script and with any system font.

`QFontMetrics.averageCharWidth()` reads the font's own average over all its glyphs: 6 px
for DejaVu Sans, 13 px for Noto Sans CJK SC (its average counts the wide ideographs) and
2,550 px when fontconfig hands Qt the colour-emoji font. Sizes derived from it made the
window 1,092 px or 32,767 px wide. The advance of a reference string of Latin letters and
digits is what a column "N characters wide" means on screen, whatever else the font has.
"""

from __future__ import annotations

from PySide6.QtGui import QFont, QFontDatabase, QFontInfo, QFontMetrics, QTextLayout
from PySide6.QtWidgets import QWidget

REFERENCE = "abcdefghijklmnopqrstuvwxyz0123456789"

# A glyph wider than a few lines' height is not text: the font is an emoji or symbol font.
MAX_CHAR_TO_LINE = 2.0


def char_width(source: QWidget | QFont | QFontMetrics) -> float:
    """The advance of one average Latin character, in pixels, bounded by the line height
    so that no font (an emoji font chosen by mistake) makes it absurd."""
    metrics = source if isinstance(source, QFontMetrics) else QFontMetrics(
        source.font() if isinstance(source, QWidget) else source)
    width = metrics.horizontalAdvance(REFERENCE) / len(REFERENCE)
    return max(1.0, min(width, metrics.height() * 0.75))


def line_height(source: QWidget | QFont) -> int:
    """A line's height that holds Chinese as well as Latin: with a Latin interface font
    (DejaVu Sans) Chinese comes from a fallback font whose lines are taller (19 px
    against 15), and rows sized from the font alone cut it or set it low."""
    font = source.font() if isinstance(source, QWidget) else source
    tallest = float(QFontMetrics(font).height())
    for sample in ("Ag", "中文"):
        layout = QTextLayout(sample, font)
        layout.beginLayout()
        line = layout.createLine()
        layout.endLayout()
        tallest = max(tallest, line.height())
    return round(tallest)


def chars(source: QWidget | QFont | QFontMetrics, count: float) -> int:
    """`count` average characters wide, in whole pixels."""
    return round(count * char_width(source))


def is_text_font(font: QFont) -> bool:
    """False when the font Qt actually uses is an emoji or symbol font (no Latin script, or
    glyphs many times a line wide): such a font must never be the interface's."""
    family = QFontInfo(font).family()
    if "emoji" in family.lower():
        return False
    if QFontDatabase.WritingSystem.Latin not in QFontDatabase.writingSystems(family):
        return False
    metrics = QFontMetrics(font)
    return metrics.horizontalAdvance("x") <= MAX_CHAR_TO_LINE * metrics.height()


FALLBACK_FAMILIES = ("Noto Sans", "DejaVu Sans", "Liberation Sans", "Cantarell", "Ubuntu",
                     "Arial", "Helvetica")


def interface_font(font: QFont) -> QFont:
    """`font` if it is a text font; otherwise the same size in the first installed text
    family. Emoji then come from Qt's own emoji fallback, drawn in colour at text size."""
    if is_text_font(font):
        return font
    installed = set(QFontDatabase.families())
    candidates = [f for f in FALLBACK_FAMILIES if f in installed] + sorted(
        f for f in installed
        if QFontDatabase.WritingSystem.Latin in QFontDatabase.writingSystems(f)
        and not QFontDatabase.isFixedPitch(f))
    for family in candidates:
        chosen = QFont(font)
        chosen.setFamilies([family])
        if is_text_font(chosen):
            return chosen
    return font


def natural_size(dialog: QWidget) -> None:
    """A short form keeps the size its content asks for. A window manager puts a resize
    handle under a window that can be resized (openbox: a double line under the buttons,
    which no message box has); a form of a few fields gains nothing by resizing. Called
    again after its text changed (an error shown), it grows to hold it at its width."""
    layout = dialog.layout()
    if dialog.minimumSize() == dialog.maximumSize() and layout is not None:
        width = dialog.width()
        height = layout.totalHeightForWidth(width) if layout.hasHeightForWidth() \
            else layout.totalSizeHint().height()
        dialog.setFixedSize(width, height)
        return
    dialog.adjustSize()
    dialog.setFixedSize(dialog.size())


TITLE_BAR = 32  # pixels a window manager's title bar may take, before it has drawn one


def fit_on_screen(dialog: QWidget) -> None:
    """As tall and as wide as the dialog's pages want where the screen allows (Qt would
    cap a new window at two thirds of the screen: on an 800 px wide screen the fields were
    cut at the right), else the screen's size, the pages scrolling. Called when shown."""
    screen = dialog.screen().availableGeometry()
    frame = max(dialog.frameGeometry().height() - dialog.height(), TITLE_BAR)
    sides = max(dialog.frameGeometry().width() - dialog.width(), 0)
    height = min(dialog.sizeHint().height(), screen.height() - frame)
    width = max(dialog.width(), min(dialog.sizeHint().width(), screen.width() - sides))
    if (width, height) != (dialog.width(), dialog.height()):
        dialog.resize(width, height)
    if dialog.y() + height + frame > screen.bottom():
        dialog.move(dialog.x(), screen.top())
    if dialog.x() + width + sides > screen.right():
        dialog.move(max(screen.left(), screen.right() - width - sides), dialog.y())
