"""A hybrid logical clock: wall-clock milliseconds, a counter, and the device's id.

Stamps compare as strings: the time, then the counter, then the device (ties between
devices are broken by their ids). A stamp received from a device whose clock runs ahead
moves this clock past it, so the next local write still comes after it: a clock an hour
ahead wins only against writes made before its change was seen, never forever.
"""

from __future__ import annotations

import time
from collections.abc import Callable

COUNTER_LIMIT = 99_999


def make_stamp(millis: int, counter: int, device: str) -> str:
    return f"{millis:013d}-{counter:05d}-{device}"


# How far ahead of this device's clock another's may be. Further, its files are refused
# (told on both devices, kept on the writer): a clock ten years fast would otherwise drag
# every device's clock ten years ahead for good, and win every edit till then.
MOST_AHEAD_MS = 24 * 3600 * 1000


class ClockAhead(ValueError):
    """A stamp from a clock further ahead of this one than `MOST_AHEAD_MS`."""

    def __init__(self, ahead_ms: int) -> None:
        super().__init__(f"a clock {ahead_ms} ms ahead")
        self.ahead_ms = ahead_ms


def parse_stamp(stamp: str) -> tuple[int, int, str]:
    """(millis, counter, device) of a stamp; ValueError for anything else."""
    millis, counter, device = stamp.split("-", 2)
    if len(millis) > 13 and millis.isdigit():  # past the year 2286: a clock set wrong
        raise ClockAhead(int(millis) - int(time.time() * 1000))
    if len(millis) != 13 or len(counter) != 5 or not device:
        raise ValueError(f"not a clock stamp: {stamp!r}")
    return int(millis), int(counter), device


def check_not_ahead(stamp: str, now: float) -> None:
    """ClockAhead when `stamp` is further ahead of `now` (seconds) than a clock may be."""
    ahead = parse_stamp(stamp)[0] - int(now * 1000)
    if ahead > MOST_AHEAD_MS:
        raise ClockAhead(ahead)


def millis_of(stamp: str | None) -> int:
    """The wall-clock part of a stamp (0 for none, or one that cannot be read)."""
    try:
        return int(str(stamp).split("-", 1)[0])
    except ValueError:
        return 0


class HybridClock:
    """One device's clock. `last` is the newest stamp it made or saw (kept by the owner,
    so a restart never goes back)."""

    def __init__(self, device: str, last: str | None = None,
                 wall: Callable[[], float] = time.time) -> None:
        self.device = device
        self.wall = wall
        self.millis, self.counter = 0, 0
        if last:  # its own, however far ahead a wrong date set it
            millis, counter, _ = last.split("-", 2)
            self.millis, self.counter = int(millis), int(counter)

    def _advance(self, millis: int, counter: int) -> None:
        if counter > COUNTER_LIMIT:  # a thousand stamps in one millisecond: borrow the next
            millis, counter = millis + 1, 0
        self.millis, self.counter = millis, counter

    def tick(self) -> str:
        """A stamp for a local write, later than every stamp made or seen before."""
        now = int(self.wall() * 1000)
        if now > self.millis:
            self._advance(now, 0)
        else:
            self._advance(self.millis, self.counter + 1)
        return make_stamp(self.millis, self.counter, self.device)

    def see(self, stamp: str) -> None:
        """A stamp received from another device: later local stamps come after it."""
        millis, counter, _ = parse_stamp(stamp)
        self.millis, self.counter = max((self.millis, self.counter), (millis, counter))

    @property
    def last(self) -> str:
        return make_stamp(self.millis, self.counter, self.device)
