"""The token an app sends to `trulymem mcp --http`: random, made once, kept in the config."""

from __future__ import annotations

import secrets


def new_token() -> str:
    return secrets.token_urlsafe(24)
