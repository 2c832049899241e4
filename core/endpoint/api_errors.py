"""What an endpoint's failures mean, in words a person can act on, with the server's own
words where it gave some, and never the key (see `core.redaction`)."""

from __future__ import annotations

import json
import re

import openai

from core.i18n import tr, tr_kept
from core.redaction import scrub, sent_key


def _server_words(error: Exception) -> str:
    """What the server itself said about the error, if anything."""
    body = getattr(error, "body", None)
    words = None
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            words = inner.get("message") or inner.get("code")
        elif isinstance(inner, str):
            words = inner
    words = scrub(str(words or "").strip(), sent_key(error))
    return f": {words[:300]}" if words else ""


_MISSING_MODEL = re.compile(
    r"model.{0,80}\b(not exist|does not exist|doesn't exist|not found|no such|unknown|"
    r"not available|invalid)|(unknown|invalid|no such) model", re.IGNORECASE | re.DOTALL)


def model_missing(error: Exception) -> bool:
    """The endpoint said the requested model does not exist: OpenAI answers 404 with the
    code model_not_found, DeepSeek 400 "Model Not Exist", Ollama 404 "model … not found"."""
    if not isinstance(error, (openai.NotFoundError, openai.BadRequestError)):
        return False
    body = getattr(error, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(inner, dict) and inner.get("code") == "model_not_found":
        return True
    return bool(_MISSING_MODEL.search(_server_words(error)))


def describe_api_error(error: Exception, base_url: str, model: str = "") -> str:
    """A sentence a person can act on, with the server's own words; never the key."""
    if model and model_missing(error):
        return tr_kept("the endpoint has no model named {model}{words}: choose one it offers",
                       model=model, words=f" ({_server_words(error)[2:]})"
                       if _server_words(error) else "")
    status = getattr(error, "status_code", None)
    if isinstance(error, openai.APIStatusError) and status is not None and 300 <= status < 400:
        target = error.response.headers.get("location", tr("another address"))
        return tr_kept("the endpoint {base_url} redirected to {target}; TrulyMEM does not follow "
                       "redirects, so the conversation was not sent there. If you trust that "
                       "address, set it as the base URL", base_url=base_url, target=target)
    words = _server_words(error)
    if isinstance(error, openai.AuthenticationError):
        return tr_kept("the API key was rejected (401{words}): check it in the settings",
                       words=words)
    if isinstance(error, openai.PermissionDeniedError):
        return tr_kept("the API refused access (403{words}): the key may lack access to this "
                       "model", words=words)
    if isinstance(error, openai.NotFoundError):
        return tr_kept("not found (404{words}): check the base URL and the model name", words=words)
    if isinstance(error, openai.RateLimitError):
        return _rate_limited(error, words)
    if isinstance(error, openai.APITimeoutError):
        return tr_kept("timeout: the API did not answer in time")
    if isinstance(error, openai.APIConnectionError):
        return tr_kept("cannot reach the API at {base_url}: check the address and your "
                       "connection", base_url=base_url)
    if isinstance(error, openai.InternalServerError):
        return tr_kept("the API failed ({status}{words}), still after retries: try again later",
                       status=error.status_code, words=words)
    if isinstance(error, openai.APIStatusError):
        return tr_kept("the API answered with an error ({status}{words})",
                       status=error.status_code, words=words)
    if isinstance(error, (openai.APIResponseValidationError, json.JSONDecodeError)):
        return tr_kept("the API sent a response that is not valid JSON")
    if isinstance(error, openai.APIError):  # an error event inside the stream
        return tr_kept("the API reported an error in the middle of the reply{words}",
                       words=_stream_words(error))
    return tr_kept("the reply stream broke off ({name})", name=type(error).__name__)


def _rate_limited(error: Exception, words: str) -> str:
    told = retry_after(error)
    if told is not None:
        return tr_kept("the API is rate-limiting requests (429{words}): it asks to try again in "
                       "{seconds} s", words=words, seconds=f"{told:g}")
    return tr_kept("the API is rate-limiting requests (429{words}), still after retries: try "
                   "again later", words=words)


def _stream_words(error: openai.APIError) -> str:
    return _server_words(error) or (
        f": {scrub(error.message, sent_key(error))[:300]}" if error.message else "")


def describe_broken_stream(error: Exception) -> str:
    """A stream that had started and then failed: the server's words when it sent an
    error event, else that the connection broke (not "cannot reach": it was reached)."""
    if isinstance(error, openai.APIError) and not isinstance(
            error, (openai.APIConnectionError, openai.APIResponseValidationError)):
        return tr_kept("the API reported an error in the middle of the reply{words}; what had "
                       "arrived is kept", words=_stream_words(error))
    if isinstance(error, openai.APITimeoutError):
        return tr_kept("timeout: the reply stopped arriving; what had arrived is kept")
    return tr_kept("the connection to the API broke off in the middle of the reply (the server "
                   "stopped or the network dropped); what had arrived is kept")


def retry_after(error: Exception) -> float | None:
    response = getattr(error, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None
