"""Text a person can read and a focus ring they can see: WCAG AA contrast (4.5:1 for text,
3:1 for the focus ring) in the light and the dark look, for every colour the window draws
text in, and in a desktop palette that falls short (the app mends it)."""

from __future__ import annotations

import pytest
from pygments.styles import get_style_by_name
from PySide6.QtGui import QColor, QPalette

from app.looks.contrast import code_tint, ratio, readable, readable_on
from app.startup import gui

Role = QPalette.ColorRole
# text colour, and the backgrounds it is drawn on in the window
TEXT_ON = {
    Role.Text: (Role.Base, Role.AlternateBase),
    Role.WindowText: (Role.Window,),
    Role.ButtonText: (Role.Button,),
    Role.HighlightedText: (Role.Highlight,),
    Role.PlaceholderText: (Role.Base, Role.Window, Role.AlternateBase),  # times, hints
    Role.Link: (Role.Base,),
    Role.ToolTipText: (Role.ToolTipBase,),
    Role.Window: (Role.WindowText,),  # the toast: the colours inverted
}


def short_of(palette: QPalette) -> list[str]:
    problems = []
    for group in (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive):
        for text, backgrounds in TEXT_ON.items():
            for back in backgrounds:
                found = ratio(palette.color(group, text), palette.color(group, back))
                if found < 4.5:
                    problems.append(f"{group.name} {text.name} on {back.name}: {found:.2f}")
        for back in (Role.Window, Role.Base):  # the focus ring, and a selection's edge
            found = ratio(palette.color(group, Role.Highlight), palette.color(group, back))
            if found < 3:
                problems.append(f"{group.name} focus ring on {back.name}: {found:.2f}")
    return problems


@pytest.fixture
def restored_palette(qapp):
    original = QPalette(qapp.palette())
    yield
    qapp.setPalette(original)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_window_reads_at_wcag_aa(restored_palette, scheme):
    app = gui.make_application(scheme=scheme)
    assert short_of(app.palette()) == []
    # code in a reply: each syntax colour on the block's tint
    background = code_tint(app.palette())
    style = get_style_by_name("monokai" if scheme == "dark" else "default")
    colours = {v["color"] for _k, v in style if v["color"]}
    assert all(ratio(readable_on(QColor(f"#{c}"), background), background) >= 4.5
               for c in colours)


def test_a_desktop_palette_that_falls_short_is_mended():
    """A theme with faint hints, a pale selection under white text and dark links on a
    dark background: each colour keeps its hue and is moved just far enough."""
    palette = QPalette()
    for role, color in ((Role.Base, "#1e1e1e"), (Role.Window, "#2b2b2b"),
                        (Role.AlternateBase, "#252525"), (Role.Text, "#dddddd"),
                        (Role.WindowText, "#dddddd"), (Role.ButtonText, "#dddddd"),
                        (Role.Button, "#2b2b2b"), (Role.PlaceholderText, "#555555"),
                        (Role.Highlight, "#6fa8ff"), (Role.HighlightedText, "#ffffff"),
                        (Role.Link, "#2a3f9f"), (Role.ToolTipText, "#dddddd"),
                        (Role.ToolTipBase, "#333333")):
        palette.setColor(role, QColor(color))
    assert short_of(palette) != []
    mended = readable(palette)
    assert short_of(mended) == []
    assert mended.color(Role.Highlight).hue() == QColor("#6fa8ff").hue()
    assert mended.color(Role.Text) == QColor("#dddddd")  # what was fine is left alone
