"""Keys out of what servers say: an endpoint may echo the API key in an error ("Incorrect
API key provided: sk-…", a 400 that repeats the Authorization header), and whatever the
app shows, logs or stores of a server's words must not carry it."""

from __future__ import annotations

import re
from typing import Any

MASK = "…"
_BEARER = re.compile(r"(?i)\b(bearer\s+)[^\s\"',;)\]}]+")
# The shapes providers give keys: sk-…, sk-proj-…, pk-…, rk-…, and long bare tokens.
_KEY_SHAPED = re.compile(r"\b((?:sk|pk|rk)-)[A-Za-z0-9_\-]{6,}")
_LONG_TOKEN = re.compile(r"\b(?=[A-Za-z0-9_\-]*\d)(?=[A-Za-z0-9_\-]*[A-Za-z])"
                         r"[A-Za-z0-9_\-]{32,}\b")


def sent_key(error: Any) -> str | None:
    """The key the failed request carried (its Authorization header), if known."""
    request = getattr(error, "request", None)
    headers = getattr(request, "headers", None)
    auth = headers.get("authorization") if headers is not None else None
    if not auth:
        return None
    return auth.split(None, 1)[-1].strip() or None


def scrub(text: str, *known: str | None) -> str:
    """`text` without the `known` keys and without anything shaped like a key or a
    bearer token."""
    for key in known:
        if key and len(key) >= 6:
            text = text.replace(key, MASK)
    text = _BEARER.sub(rf"\g<1>{MASK}", text)
    text = _KEY_SHAPED.sub(rf"\g<1>{MASK}", text)
    return _LONG_TOKEN.sub(MASK, text)
