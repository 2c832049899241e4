"""The status bar at every width: the model's name and the memory's counts stay whole, the
others give way in order, a message coming and going moves no part, and news expires."""

from __future__ import annotations

import itertools

import pytest
from PySide6.QtCore import QPoint

from app.status import status_bar

ENDPOINT = {"base_url": "http://127.0.0.1:35601/v1", "model": "deepseek-v4-flash"}


def shown_parts(window):
    """(part, its span in the status bar) for every part on screen, left to right."""
    bar = window.statusBar()
    status = window.status
    parts = [status.state_label, status.endpoint_label, status.tokens_label,
             status.memory_label, status.review_label, status.meaning_label]
    spans = []
    for part in parts:
        if part.isVisibleTo(bar):
            left = part.mapTo(bar, QPoint(0, 0)).x()
            spans.append((part, left, left + part.width()))
    return sorted(spans, key=lambda s: s[1])


def whole(part) -> bool:
    return part.shown(part.contentsRect().width()) == part.text()


def settle(qtbot, window, width, height):
    window.resize(width, height)
    qtbot.waitUntil(lambda: abs(window.statusBar().width() - window.width()) < 40)
    qtbot.waitUntil(lambda: all(right <= window.statusBar().width()
                                for _p, _l, right in shown_parts(window)))


@pytest.mark.parametrize("size", [(1600, 1000), (1280, 800), (800, 500)])
def test_the_model_and_the_memory_counts_stay_whole(qtbot, open_window, home, size):
    window = open_window(home)
    status = window.status
    status.show_endpoint(ENDPOINT)
    status.tokens_label.setText("Tokens: last 123,456 · session 9,876,543")
    qtbot.waitUntil(lambda: status.memory_label.text().startswith("Memory:"))
    settle(qtbot, window, *size)
    endpoint = status.endpoint_label
    assert endpoint.isVisible()
    assert endpoint.shown(endpoint.contentsRect().width()).endswith("deepseek-v4-flash")
    assert status.memory_label.isVisible() and whole(status.memory_label)
    spans = shown_parts(window)
    assert all(a[2] <= b[1] for a, b in itertools.pairwise(spans))  # side by side
    for part, _left, _right in spans:  # what is shown is whole, but for the host
        if part not in (status.state_label, endpoint):
            assert whole(part), part.text()
    if size[0] >= 1280:  # room for everything
        assert whole(endpoint) and status.tokens_label.isVisible()
    assert endpoint.toolTip() == ENDPOINT["base_url"]


def test_the_host_gives_way_before_the_model():
    from app.status.status_parts import EndpointPart

    part = EndpointPart()
    part.set_endpoint("127.0.0.1:35601", "deepseek-v4-flash", ENDPOINT["base_url"])
    metrics = part.fontMetrics()
    full = metrics.horizontalAdvance(part.text()) + 4
    assert part.shown(full) == "127.0.0.1:35601 · deepseek-v4-flash"
    squeezed = part.shown(full - metrics.horizontalAdvance("1:35601"))
    assert squeezed.endswith(" · deepseek-v4-flash") and squeezed.startswith("127")
    assert part.shown(part.narrowest()) == "deepseek-v4-flash"


def test_a_message_moves_no_part_and_expires(qtbot, open_window, home, monkeypatch):
    monkeypatch.setattr(status_bar, "NEWS_MSECS", 300)
    window = open_window(home)
    status = window.status
    settle(qtbot, window, 1280, 800)

    def places():
        return [(part.objectName(), left, right) for part, left, right in shown_parts(window)
                if part is not status.state_label]

    before = places()
    status.set_state("Thinking…")
    status.set_state("The last message failed: Retry (Ctrl+R) sends it again, a long "
                     "message that would not fit in any status bar at all")
    window.statusBar().layout().activate()
    assert places() == before
    qtbot.waitUntil(lambda: status.state_label.text() == "Thinking…", timeout=3000)
    assert places() == before
    status.set_state("Ready")
    status.set_state("Stopped")
    qtbot.waitUntil(lambda: status.state_label.text() == "Ready", timeout=3000)
    assert places() == before


def test_an_empty_review_inbox_says_so(qtbot, open_window, home):
    window = open_window(home)
    qtbot.waitUntil(lambda: window.status.review_label.text() == "Nothing to review")
    window.status.show_review_count(2, "Ctrl+Shift+R")
    assert window.status.review_label.text() == "Review: 2"
