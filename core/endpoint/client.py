"""The one way this app makes an OpenAI-compatible client."""

from __future__ import annotations

import openai

from core import redaction


def make_client(api_key: str, base_url: str, timeout: float) -> openai.OpenAI:
    """An OpenAI-compatible client that retries nothing itself (the turn loop retries what
    is worth retrying, so a stalled endpoint is reported after one timeout, not three) and
    follows no redirect: the conversation goes only to the address the person set."""
    redaction.remember(api_key)  # whatever a server says back is scrubbed of it
    http = openai.DefaultHttpxClient(follow_redirects=False)
    return openai.OpenAI(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0,
                         http_client=http)
