"""Asking an endpoint which models it serves: the connection test and the model picker."""

from __future__ import annotations

import time
from typing import Any

import openai

from core.config import Config
from core.endpoint.api_errors import describe_api_error
from core.endpoint.client import make_client
from core.endpoint.shutdown import shutdown_of
from core.errors import CodedError, ErrorCode

LIST_TIMEOUT = 15.0  # seconds: a listing is small; a dead address should say so soon


class EndpointError(CodedError):
    """The endpoint refused or failed; the message says what to do, never the key."""

    code = ErrorCode.ENDPOINT


class Listing(list[str]):
    """The endpoint's model names, sorted, with the shutdown dates it announces
    (`shutdowns`: name -> "YYYY-MM-DD", only the models that have one)."""

    def __init__(self, models: list[Any]) -> None:
        super().__init__(sorted(m.id for m in models))
        self.shutdowns = {m.id: day for m in models if (day := shutdown_of(m))}


def list_models(config: Config) -> tuple[Listing, float]:
    """The endpoint's models and how long the listing took (ms). This checks the address
    and the key without spending tokens."""
    client = make_client(config.api_key, config.base_url,
                         min(config.request_timeout, LIST_TIMEOUT))
    started = time.perf_counter()
    try:
        models = Listing(list(client.models.list()))
    except (openai.OpenAIError, ValueError, OSError) as error:
        raise EndpointError(describe_api_error(error, config.base_url)) from None
    finally:
        client.close()
    return models, (time.perf_counter() - started) * 1000
