"""Models that are going away: the shutdown date an endpoint announces for a model.

OpenAI documents it on `GET /v1/models` (and `GET /v1/models/{model}`) as each model's
optional `shutdown_date`, "YYYY-MM-DD" or null when none is announced
(https://developers.openai.com/api/reference/resources/models/methods/list). Other
servers copy OpenAI's shapes loosely, so a date given as Unix seconds (or milliseconds),
as an ISO timestamp, or as text that is no date at all is read as well as it can be, and
ignored when it cannot.
"""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta
from typing import Any

NOTICE_DAYS = 28  # the status bar says it this many days ahead (and once the day has passed)
_FIRST, _LAST = date(2000, 1, 1), date(2200, 1, 1)  # outside these, a value is no real date


def shutdown_date(value: Any) -> str | None:
    """`value` as an ISO date ("2027-01-14"), or None when it says no date."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        try:
            value = float(text)  # "1799884800": seconds written as text
        except ValueError:
            return _from_text(text)
    if isinstance(value, int | float):
        return _from_number(float(value))
    return None


def _from_text(text: str) -> str | None:
    try:
        day = date.fromisoformat(text[:10])
    except ValueError:
        try:  # a timestamp: its calendar day in UTC, as the endpoint wrote it
            day = datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC).date()
        except ValueError:
            return None
    else:
        if len(text) > 10 and text[10] not in "T ":
            return None
    return day.isoformat() if _FIRST <= day < _LAST else None


def _from_number(seconds: float) -> str | None:
    if not math.isfinite(seconds) or seconds <= 0:
        return None
    if seconds > 1e11:  # milliseconds: seconds this large are thousands of years away
        seconds /= 1000
    try:
        day = datetime.fromtimestamp(seconds, UTC).date()
    except (OverflowError, OSError, ValueError):
        return None
    return day.isoformat() if _FIRST <= day < _LAST else None


def shutdown_of(model: Any) -> str | None:
    """The shutdown date of one entry of the SDK's model list: the SDK's own field where
    it has one, else the raw JSON it kept (older SDKs, other servers)."""
    value = getattr(model, "shutdown_date", None)
    if value is None:
        value = (getattr(model, "model_extra", None) or {}).get("shutdown_date")
    return shutdown_date(value)


def days_left(shutdown: str, today: date) -> int:
    return (date.fromisoformat(shutdown) - today).days


def notice_due(shutdown: str | None, today: date) -> bool:
    """Whether the status bar should say the model is going away: within `NOTICE_DAYS`,
    or already gone."""
    return shutdown is not None and days_left(shutdown, today) <= NOTICE_DAYS


def in_days(days: int, today: date | None = None) -> str:
    """The ISO date `days` from `today` (tests and the loopback server use it)."""
    return ((today or date.today()) + timedelta(days=days)).isoformat()
