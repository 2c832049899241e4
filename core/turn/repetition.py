"""Notices a reply that repeats itself, so its stream can be stopped.

A 1.5B model streamed `{"subject": "Tea house", "relation": "is a building", "object":
"Yes"}` over and over: 4,096 tokens at 10 tokens a second, seven minutes shown to the
person as they came. A reply whose tail is one piece of text repeated many times is not
going anywhere."""

from __future__ import annotations

MIN_PERIOD = 4  # characters in the repeated piece, at least…
MAX_PERIOD = 300  # …and at most
MIN_REPEATS = 4  # the piece back to back at least this many times…
MIN_SPAN = 400  # …covering at least this many characters


def repetition_start(text: str) -> int | None:
    """Where the repetition at the end of `text` begins, keeping its first copy (the
    text up to there is what the model meant to say); None when it does not repeat."""
    length = len(text)
    for period in range(MIN_PERIOD, min(MAX_PERIOD, length // MIN_REPEATS) + 1):
        unit = text[length - period:]
        if len(set(unit.strip())) < 2:
            continue  # a rule of dashes or a run of spaces is layout, not a loop
        repeats, end = 1, length - period
        while end >= period and text[end - period:end] == unit:
            repeats += 1
            end -= period
        if repeats >= MIN_REPEATS and repeats * period >= MIN_SPAN:
            return end + period
    return None
