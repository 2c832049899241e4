"""The picture's colours: each node type keeps one colour in every view and every run (it
is derived from the type's name), and every node stands out from the background in light
and dark alike, untyped ones included.
"""

from __future__ import annotations

import zlib
from typing import Any

from PySide6.QtGui import QColor, QPalette

from core.i18n import tr

# Hues for entity types, spaced so neighbours differ; the person, the persona and tasks
# keep hues of their own, out of this list.
TYPE_HUES = (0, 35, 60, 95, 140, 170, 190, 240, 300, 330)
PERSONA_HUE, TASK_HUE, PERSON_HUE = 275, 20, 215
THE_PERSON = "user"  # the node the tools store the person's own facts on


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Base).lightness() < 128


def hue_color(hue: int, palette: QPalette, deep: bool = False) -> QColor:
    """A fill that reads on the theme's base: lighter on dark, a little deeper on light;
    `deep` is a second, darker shade of the same hue."""
    lightness = (130 if is_dark(palette) else 150) - (40 if deep else 0)
    return QColor.fromHsl(hue, 160, lightness)


def untyped_color(palette: QPalette) -> QColor:
    """A neutral grey that stands out from the base in either theme."""
    return QColor.fromHsl(0, 0, 150 if is_dark(palette) else 165)


def type_shade(kind_type: str) -> tuple[int, bool]:
    """(hue, deep) of a type: from its name alone, so "Person" is one colour everywhere."""
    h = zlib.crc32(" ".join(kind_type.casefold().split()).encode())
    return TYPE_HUES[h % len(TYPE_HUES)], bool((h >> 8) & 1)


def node_color(node: dict[str, Any], palette: QPalette) -> tuple[QColor, str]:
    """The node's fill and the legend entry it belongs to."""
    kind = node["kind"]
    if kind == "persona":
        return hue_color(PERSONA_HUE, palette), tr("Assistant (persona)")
    if kind == "task":
        return hue_color(TASK_HUE, palette), tr("Task")
    if node["name"].casefold() == THE_PERSON:
        return hue_color(PERSON_HUE, palette), tr("You")
    kind_type = (node.get("type") or "").strip()
    if not kind_type:
        return untyped_color(palette), tr("No type")
    hue, deep = type_shade(kind_type)
    return hue_color(hue, palette, deep), kind_type
