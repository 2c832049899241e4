"""Keys out of what servers and models say: an endpoint may echo the API key in an error
("Incorrect API key provided: …", a 400 that repeats the Authorization header, an error
event inside the stream), and whatever the app shows, logs, stores or exports of a
server's or a model's words must not carry it.

The app knows the keys it sends: every key a client is made with, the configured one and
the MCP token are remembered here for the life of the process, whatever their shape
(Ollama, LM Studio and proxy keys are short, or have dots). They are one set for the
process on purpose: the logging record factory, the history writer and the terminal all
scrub with the same keys, and a key once used stays a secret after the person changes it.
Server words are also scrubbed of anything shaped like a key (`sk-…`, bearer tokens, long
tokens); the person's and the model's own text only of the known keys, exactly, since a
shape would also match a commit hash or a long identifier they wrote.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import urllib.parse
from typing import Any

MASK = "…"
_BEARER = re.compile(r"(?i)\b(bearer\s+)[^\s\"',;)\]}]+")
# The shapes providers give keys: sk-…, sk-proj-…, pk-…, rk-…, and long bare tokens.
_KEY_SHAPED = re.compile(r"\b((?:sk|pk|rk)-)[A-Za-z0-9_\-]{6,}")
_LONG_TOKEN = re.compile(r"\b(?=[A-Za-z0-9_\-]*\d)(?=[A-Za-z0-9_\-]*[A-Za-z])"
                         r"[A-Za-z0-9_\-]{32,}\b")
SHORTEST = 4  # a key shorter than this is no secret (and masking it would eat words)
# Values local servers document as "any key will do": they name no secret, and masking
# them would cut "ollama" out of every sentence that mentions it.
PLACEHOLDERS = frozenset({"ollama", "lm-studio", "not-needed", "empty", "none",
                          "sk-no-key-required"})

class _Known:
    """The keys remembered so far and one pattern that finds any of them."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.keys: tuple[str, ...] = ()  # longest first: a key containing another goes whole
        self.pattern: re.Pattern[str] | None = None

    def add(self, fresh: set[str]) -> None:
        with self.lock:
            if fresh <= set(self.keys):
                return
            self.keys = tuple(sorted(set(self.keys) | fresh, key=lambda k: (-len(k), k)))
            self.pattern = _compile(self.keys)


_KNOWN = _Known()


def _forms(key: str) -> set[str]:
    """A key as it may appear in a server's words: as sent, escaped inside JSON, and
    percent-encoded in a URL."""
    return {key, json.dumps(key)[1:-1], urllib.parse.quote(key, safe="")}


def _compile(keys: tuple[str, ...]) -> re.Pattern[str] | None:
    if not keys:
        return None
    # A short key is masked only where it stands alone, not inside a longer word.
    parts = [re.escape(k) if len(k) >= 12 else rf"(?<![A-Za-z0-9]){re.escape(k)}(?![A-Za-z0-9])"
             for k in keys]
    return re.compile("|".join(parts))


def remember(*keys: Any) -> None:
    """Treat `keys` as secrets from now on (empty, short and placeholder values are
    skipped). Called wherever the app takes a key: making a client, loading the config,
    saving a new key, the MCP token."""
    fresh: set[str] = set()
    for given in keys:
        key = given.strip() if isinstance(given, str) else ""
        if len(key) >= SHORTEST and key.lower() not in PLACEHOLDERS:
            fresh |= {form for form in _forms(key) if len(form) >= SHORTEST}
    if fresh:
        _KNOWN.add(fresh)


def known() -> tuple[str, ...]:
    """The keys remembered so far, longest first."""
    return _KNOWN.keys


def scrub_known(text: str, *extra: str | None) -> str:
    """`text` without any remembered key (and without `extra` keys): for the person's and
    the model's words, which a key's shape would damage."""
    if not isinstance(text, str) or not text:
        return text
    if any(extra):
        remember(*extra)
    pattern = _KNOWN.pattern
    return pattern.sub(MASK, text) if pattern is not None else text


def scrub(text: str, *extra: str | None) -> str:
    """A server's words without the known keys and without anything shaped like a key
    or a bearer token."""
    text = scrub_known(text, *extra)
    text = _BEARER.sub(rf"\g<1>{MASK}", text)
    text = _KEY_SHAPED.sub(rf"\g<1>{MASK}", text)
    return _LONG_TOKEN.sub(MASK, text)


def scrub_value(value: Any) -> Any:
    """`value` (text, or lists and dicts of it, as a message's tool calls are) with the
    known keys masked in every string."""
    if isinstance(value, str):
        return scrub_known(value)
    if isinstance(value, dict):
        return {k: scrub_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub_value(v) for v in value]
    return value


def held_back(text: str) -> int:
    """How many characters at the end of `text` could be the start of a known key: a
    stream shows text as it arrives, and a key split over two pieces must not be shown
    half before the rest arrives to be masked."""
    longest = 0
    for key in _KNOWN.keys:
        for size in range(min(len(key) - 1, len(text)), longest, -1):
            if key.startswith(text[-size:]):
                longest = size
                break
    return longest


def sent_key(error: Any) -> str | None:
    """The key the failed request carried (its Authorization header), if the HTTP
    library kept it; the known keys are scrubbed whether or not it did."""
    request = getattr(error, "request", None)
    headers = getattr(request, "headers", None)
    try:
        auth = headers.get("authorization") if headers is not None else None
    except (AttributeError, TypeError):
        return None
    if not auth:
        return None
    return auth.split(None, 1)[-1].strip() or None


def _scrubbed_record_factory(base: Any) -> Any:
    def make(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = base(*args, **kwargs)
        if _KNOWN.pattern is None:
            return record
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a bad format string: leave it to logging
            return record
        cleaned = scrub(message)
        if cleaned != message:
            record.msg, record.args = cleaned, ()
        return record
    make.scrubs_keys = True  # type: ignore[attr-defined]
    return make


def scrub_logs() -> None:
    """Every log record, of every logger and handler, made without the known keys and
    key-shaped words (a library's message may quote a server's error)."""
    current = logging.getLogRecordFactory()
    if not getattr(current, "scrubs_keys", False):
        logging.setLogRecordFactory(_scrubbed_record_factory(current))
