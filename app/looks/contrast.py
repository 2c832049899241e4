"""Colours a person can read: WCAG AA contrast for every text colour the window draws
(4.5:1) and for the focus ring (3:1, WCAG 1.4.11), in whatever palette the desktop gives.

Qt's own Fusion palette misses it in places the app relies on: the placeholder colour
(timestamps, hints, empty states) is the text colour at half strength, 3.9:1 on light
grey; white on the light selection blue is 3.7:1; the dark selection is a 2.6:1 ring on
the dark window; a desktop's dark theme can keep the light theme's dark blue links. So the
palette is adjusted, keeping each colour's hue, only where it falls short."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QColor, QPalette

Role = QPalette.ColorRole
TEXT_RATIO = 4.5  # WCAG 2.x AA, normal text
RING_RATIO = 3.0  # WCAG 2.x AA, non-text contrast (focus indicators, selections)
MARGIN = 0.05  # above the line, so rounding never puts a colour under it
GROUPS = (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive)
# what the placeholder colour is drawn on: the input and lists, the window, notices
PLACEHOLDER_ON = (Role.Base, Role.Window, Role.AlternateBase)


def luminance(color: QColor) -> float:
    """Relative luminance (WCAG 2.x)."""
    def channel(value: float) -> float:
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4
    return (0.2126 * channel(color.redF()) + 0.7152 * channel(color.greenF())
            + 0.0722 * channel(color.blueF()))


def flattened(color: QColor, background: QColor) -> QColor:
    """A translucent colour as it shows over `background`."""
    alpha = color.alphaF()
    return QColor.fromRgbF(*(alpha * a + (1 - alpha) * b for a, b in zip(
        (color.redF(), color.greenF(), color.blueF()),
        (background.redF(), background.greenF(), background.blueF()), strict=True)))


def ratio(foreground: QColor, background: QColor) -> float:
    """The contrast ratio of `foreground` drawn on `background`, 1 to 21."""
    lighter, darker = sorted((luminance(flattened(foreground, background)),
                              luminance(background)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def _with_lightness(color: QColor, lightness: float) -> QColor:
    hue, saturation, _lightness, _alpha = color.getHslF()
    return QColor.fromHslF(max(hue, 0), saturation, min(max(lightness, 0.0), 1.0), 1.0)


def _nearest(color: QColor, fits) -> QColor:
    """The colour of `color`'s hue and saturation whose lightness is closest to its own
    among those `fits` accepts (searched in steps of 0.5%); `color` itself if it fits."""
    if fits(color):
        return color
    start = color.getHslF()[2]
    for step in range(1, 201):
        for lightness in (start - step / 200, start + step / 200):
            if 0 <= lightness <= 1 and fits(candidate := _with_lightness(color, lightness)):
                return candidate
    return color


def tint(base: QColor, accent: QColor, share: float) -> QColor:
    """`base` moved `share` of the way to `accent`: a bubble colour from the palette."""
    return QColor.fromRgbF(*(b + (a - b) * share for a, b in
                             zip(accent.getRgbF()[:3], base.getRgbF()[:3], strict=True)))


def code_tint(palette: QPalette) -> QColor:
    """The background of a code block in a reply."""
    return tint(palette.color(Role.Base), palette.color(Role.Text), 0.07)


def readable_on(color: QColor, background: QColor) -> QColor:
    """`color` as text on `background`, its lightness moved just enough to read (4.5:1):
    a syntax colour of a code block, say."""
    return _nearest(color, lambda c: ratio(c, background) >= TEXT_RATIO + MARGIN)


def readable(palette: QPalette) -> QPalette:
    """`palette` with its links, placeholder text and selection made readable (see above)."""
    palette = QPalette(palette)
    for group in GROUPS:
        def color(role: Role, group: QPalette.ColorGroup = group) -> QColor:
            return palette.color(group, role)

        backgrounds = [color(r) for r in PLACEHOLDER_ON]
        palette.setColor(group, Role.PlaceholderText, _nearest(
            flattened(color(Role.PlaceholderText), color(Role.Base)),
            lambda c, on=backgrounds: all(ratio(c, b) >= TEXT_RATIO + MARGIN for b in on)))
        for role in (Role.Link, Role.LinkVisited):
            palette.setColor(group, role, _nearest(
                color(role), lambda c: ratio(c, color(Role.Base)) >= TEXT_RATIO + MARGIN))
        _readable_selection(palette, group)
    return palette


def _readable_selection(palette: QPalette, group: QPalette.ColorGroup) -> None:
    """The selection's text reads on it, and the selection, which is also the focus ring,
    shows on the window and in lists: the selection's lightness moves, or where no
    lightness does both (white text on a selection that must be light), the text turns
    black or white."""
    def fits(text: QColor) -> Callable[[QColor], bool]:
        return lambda c: ratio(text, c) >= TEXT_RATIO + MARGIN and all(
            ratio(c, palette.color(group, r)) >= RING_RATIO + MARGIN
            for r in (Role.Window, Role.Base))

    highlight = palette.color(group, Role.Highlight)
    text = palette.color(group, Role.HighlightedText)
    chosen = _nearest(highlight, fits(text))
    if not fits(text)(chosen):
        text = max((QColor("black"), QColor("white")), key=lambda c: ratio(c, highlight))
        palette.setColor(group, Role.HighlightedText, text)
        chosen = _nearest(highlight, fits(text))
    palette.setColor(group, Role.Highlight, chosen)
