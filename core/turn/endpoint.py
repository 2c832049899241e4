"""Asking an endpoint which models it serves: the connection test and the model picker."""

from __future__ import annotations

import time

import openai

from core.config import Config
from core.errors import CodedError, ErrorCode
from core.turn.llm import describe_api_error, make_client

LIST_TIMEOUT = 15.0  # seconds: a listing is small; a dead address should say so soon


class EndpointError(CodedError):
    """The endpoint refused or failed; the message says what to do, never the key."""

    code = ErrorCode.ENDPOINT


def list_models(config: Config) -> tuple[list[str], float]:
    """The endpoint's model names, sorted, and how long the listing took (ms). This
    checks the address and the key without spending tokens."""
    client = make_client(config.api_key, config.base_url,
                         min(config.request_timeout, LIST_TIMEOUT))
    started = time.perf_counter()
    try:
        models = sorted(m.id for m in client.models.list())
    except (openai.OpenAIError, ValueError, OSError) as error:
        raise EndpointError(describe_api_error(error, config.base_url)) from None
    finally:
        client.close()
    return models, (time.perf_counter() - started) * 1000
