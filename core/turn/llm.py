"""One chat turn against an OpenAI-compatible endpoint: stream, run tools, repeat.

The loop streams each model response, assembles tool calls from their deltas, runs them
through the caller's executor (which applies the turn's limits), and asks again until the
model answers without tools or the round-trip cap is reached.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import openai

Progress = Callable[[str, dict[str, Any]], None]
# Shown to the person under a reply cut short; never sent back to the model as its words.
STOPPED_NOTE = ("\n\n[Stopped: the model used all {} round trips of this turn without a "
                "final answer.]")
_STOPPED = re.compile(r"\n\n\[Stopped: the model used all \d+ round trips of this turn "
                      r"without a final answer\.\]$")


def model_words(content: str) -> str:
    """A reply as the model wrote it, without the app's own note about stopping it."""
    return _STOPPED.sub("", content)
RunTool = Callable[[str, str], dict[str, Any]]


class TurnCancelled(Exception):
    """The person stopped the turn."""

    def __init__(self, partial: str = "") -> None:
        super().__init__("cancelled")
        self.partial = partial  # text that arrived before the stop


class BadReply(Exception):
    """The endpoint answered, but not with a whole chat completion stream."""

    def __init__(self, message: str, partial: str = "") -> None:
        super().__init__(message)
        self.partial = partial  # text that arrived before the stream broke off


@dataclass
class TurnResult:
    content: str = ""
    reasoning: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    rejected_tools: list[tuple[str, str]] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    round_trips: int = 0
    error: str | None = None
    cancelled: bool = False

    def data(self) -> dict[str, Any]:
        return {"content": self.content, "reasoning": self.reasoning,
                "tool_calls": self.tool_calls, "rejected_tools": self.rejected_tools,
                "usage": self.usage, "round_trips": self.round_trips}


RETRIES = 2  # for rate limits and server errors; never for a timeout
MAX_BACKOFF = 8.0


def make_client(api_key: str, base_url: str, timeout: float) -> openai.OpenAI:
    """An OpenAI-compatible client that retries nothing itself (the turn loop retries what
    is worth retrying, so a stalled endpoint is reported after one timeout, not three) and
    follows no redirect: the conversation goes only to the address the person set."""
    http = openai.DefaultHttpxClient(follow_redirects=False)
    return openai.OpenAI(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0,
                         http_client=http)


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
    words = str(words or "").strip()
    return f": {words[:300]}" if words else ""


def describe_api_error(error: Exception, base_url: str) -> str:
    """A sentence a person can act on, with the server's own words; never the key."""
    status = getattr(error, "status_code", None)
    if isinstance(error, openai.APIStatusError) and status is not None and 300 <= status < 400:
        target = error.response.headers.get("location", "another address")
        return (f"the endpoint {base_url} redirected to {target}; TrulyMEM does not follow "
                "redirects, so the conversation was not sent there. If you trust that "
                "address, set it as the base URL")
    words = _server_words(error)
    if isinstance(error, openai.AuthenticationError):
        return f"the API key was rejected (401{words}): check it in the settings"
    if isinstance(error, openai.PermissionDeniedError):
        return f"the API refused access (403{words}): the key may lack access to this model"
    if isinstance(error, openai.NotFoundError):
        return f"not found (404{words}): check the base URL and the model name"
    if isinstance(error, openai.RateLimitError):
        return (f"the API is rate-limiting requests (429{words}), still after retries: try "
                "again later")
    if isinstance(error, openai.APITimeoutError):
        return "timeout: the API did not answer in time"
    if isinstance(error, openai.APIConnectionError):
        return f"cannot reach the API at {base_url}: check the address and your connection"
    if isinstance(error, openai.InternalServerError):
        return (f"the API failed ({error.status_code}{words}), still after retries: try "
                "again later")
    if isinstance(error, openai.APIStatusError):
        return f"the API answered with an error ({error.status_code}{words})"
    if isinstance(error, (openai.APIResponseValidationError, json.JSONDecodeError)):
        return "the API sent a response that is not valid JSON"
    return f"the reply stream broke off ({type(error).__name__})"


MAX_KEPT_ARGUMENTS = 20_000  # characters of a call's arguments kept in history and trace


def _kept_arguments(raw: str) -> Any:
    """A call's arguments as history and the trace keep them: parsed when they are JSON,
    and never more than a sane size (a model can send megabytes of invalid text)."""
    if len(raw) > MAX_KEPT_ARGUMENTS:
        return f"{raw[:MAX_KEPT_ARGUMENTS]}… [{len(raw) - MAX_KEPT_ARGUMENTS:,} more characters]"
    try:
        return json.loads(raw or "{}")
    except (ValueError, RecursionError):
        return raw


def _retry_after(error: Exception) -> float | None:
    response = getattr(error, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


class ChatSession:
    """Runs turns with one client; `cancel()` may be called from any thread."""

    def __init__(self, client: openai.OpenAI, model: str, tools: list[dict[str, Any]],
                 base_url: str = "") -> None:
        self.client = client
        self.model = model
        self.tools = tools
        self.base_url = base_url
        self._cancel = threading.Event()
        self._expired: float | None = None  # the turn time limit that stopped the turn
        self._stream_lock = threading.Lock()
        self._stream: Any = None

    def reset(self) -> None:
        """Forget an old cancel: the host calls this as it starts a packet."""
        self._cancel.clear()
        self._expired = None

    def expire(self, limit: float) -> None:
        """The turn ran out of time: stop it, and say so rather than "cancelled"."""
        self._expired = limit
        self.cancel()

    def cancel(self) -> None:
        """Stop the running turn now: close its stream so a blocked read returns."""
        self._cancel.set()
        with self._stream_lock:
            stream = self._stream
        if stream is not None:
            # Closing from another thread may race the reader; either way the read ends.
            with contextlib.suppress(Exception):
                stream.close()

    def run(self, messages: list[dict[str, Any]], run_tool: RunTool, progress: Progress,
            max_round_trips: int) -> TurnResult:
        """Play one turn starting from `messages` (system + user); never raises. A cancel
        that arrived since the last `reset()` stops it at once."""
        result = TurnResult()
        turn_start = len(messages)
        try:
            while True:
                if result.round_trips >= max_round_trips:
                    result.content += STOPPED_NOTE.format(max_round_trips)
                    break
                result.round_trips += 1
                text, reasoning, calls = self._stream_once(messages, result, progress)
                result.content += text
                result.reasoning += reasoning
                if not calls:
                    break
                assistant: dict[str, Any] = {"role": "assistant", "content": text or None,
                                             "tool_calls": [
                    {"id": c["id"], "type": "function",
                     "function": {"name": c["name"], "arguments": c["arguments"]}}
                    for c in calls]}
                if reasoning:
                    assistant["reasoning_content"] = reasoning
                messages.append(assistant)
                rewrite = None
                for call in calls:
                    self._check_cancel()
                    reply, summary = self._run_call(call, run_tool, progress, result)
                    rewrite = summary or rewrite
                    messages.append({"role": "tool", "tool_call_id": call["id"],
                                     "content": reply})
                if rewrite:
                    self._rewrite(messages, turn_start, rewrite)
        except TurnCancelled as stop:
            result.content += stop.partial
            self._stopped(result)
        except BadReply as error:
            result.content += error.partial
            result.error = str(error)
        except (openai.OpenAIError, json.JSONDecodeError, ValueError, OSError) as error:
            if self._cancel.is_set():
                self._stopped(result)
            else:
                result.error = describe_api_error(error, self.base_url)
        finally:
            with self._stream_lock:
                self._stream = None
        return result

    def _stopped(self, result: TurnResult) -> None:
        if self._expired is not None:
            result.error = (f"timeout: the turn took longer than {self._expired:g} s; what "
                            "had arrived is kept")
        else:
            result.cancelled, result.error = True, "cancelled"

    def _create(self, messages: list[dict[str, Any]]) -> Any:
        """Open the stream; rate limits and server errors are retried with backoff (the
        server's Retry-After first), timeouts and refused connections are not."""
        for attempt in range(RETRIES + 1):
            try:
                # tool_choice is the API's default, but some servers (llama-cpp-python's
                # function-calling formats) drop the tools unless it is sent.
                return self.client.chat.completions.create(
                    model=self.model, messages=messages, tools=self.tools, tool_choice="auto",
                    stream=True, stream_options={"include_usage": True})
            except (openai.RateLimitError, openai.InternalServerError) as error:
                if attempt == RETRIES:
                    raise
                wait = _retry_after(error) or 0.5 * 2 ** attempt
                if self._cancel.wait(min(wait, MAX_BACKOFF)):
                    raise TurnCancelled from None
        raise AssertionError("unreachable")

    def _check_cancel(self) -> None:
        if self._cancel.is_set():
            raise TurnCancelled

    def _stream_once(self, messages: list[dict[str, Any]], result: TurnResult,
                     progress: Progress) -> tuple[str, str, list[dict[str, str]]]:
        self._check_cancel()
        stream = self._create(messages)
        with self._stream_lock:
            self._stream = stream
        text, reasoning, calls = [], [], {}
        received, finished = 0, False
        try:
            for chunk in stream:
                if self._cancel.is_set():
                    raise TurnCancelled("".join(text))
                received += 1
                if chunk.usage:
                    self._add_usage(chunk.usage, result, progress)
                for choice in chunk.choices:
                    self._take_delta(choice.delta, text, reasoning, calls, progress)
                    finished = finished or bool(choice.finish_reason)
        except (openai.OpenAIError, ValueError, OSError):
            if self._cancel.is_set():  # closing the stream to stop it broke the read
                raise TurnCancelled("".join(text)) from None
            raise
        finally:
            with self._stream_lock:
                self._stream = None
        if self._cancel.is_set():
            raise TurnCancelled("".join(text))
        if received == 0:
            raise BadReply("the API sent a response that is not valid JSON or not a chat "
                           "completion stream: check the base URL")
        if not finished:
            raise BadReply("the reply stream broke off before the model finished",
                           partial="".join(text))
        ordered = [calls[i] for i in sorted(calls)]
        for i, call in enumerate(ordered):
            call["id"] = call["id"] or f"call_{result.round_trips}_{i}"
        return "".join(text), "".join(reasoning), ordered

    @staticmethod
    def _add_usage(usage: Any, result: TurnResult, progress: Progress) -> None:
        for key, value in usage.model_dump(exclude_none=True).items():
            if isinstance(value, int):
                result.usage[key] = result.usage.get(key, 0) + value
        progress("usage", dict(result.usage))

    @staticmethod
    def _take_delta(delta: Any, text: list[str], reasoning: list[str],
                    calls: dict[int, dict[str, str]], progress: Progress) -> None:
        if delta is None:
            return
        if delta.content:
            text.append(delta.content)
            progress("text", {"delta": delta.content})
        thought = getattr(delta, "reasoning_content", None) or (
            (delta.model_extra or {}).get("reasoning_content"))
        if thought:
            reasoning.append(thought)
            progress("reasoning", {"delta": thought})
        for part in delta.tool_calls or []:
            slot = calls.setdefault(part.index or 0, {"id": "", "name": "", "arguments": ""})
            if part.id:
                slot["id"] = part.id
            if part.function is not None:
                if part.function.name and part.function.name != slot["name"]:
                    slot["name"] += part.function.name
                if part.function.arguments:
                    slot["arguments"] += part.function.arguments

    def _run_call(self, call: dict[str, str], run_tool: RunTool, progress: Progress,
                  result: TurnResult) -> tuple[str, str | None]:
        progress("tool_started", {"name": call["name"], "arguments": call["arguments"]})
        started = time.perf_counter()
        outcome = run_tool(call["name"], call["arguments"])
        duration = round((time.perf_counter() - started) * 1000, 3)
        if outcome["success"]:
            reply = outcome["data"]["result"]
        else:
            reply = outcome["error"] if outcome.get("rejected") else f"Error: {outcome['error']}"
        arguments = _kept_arguments(call["arguments"])
        record = {"name": call["name"], "arguments": arguments, "result": reply,
                  "duration_ms": duration, "success": outcome["success"]}
        if outcome.get("rejected"):
            result.rejected_tools.append((call["name"], outcome["error"]))
            progress("tool_rejected", {"name": call["name"], "reason": outcome["error"]})
        else:
            result.tool_calls.append(record)
        progress("tool_finished", record)
        summary = outcome["data"].get("rewrite_summary") if outcome["success"] else None
        return reply, summary

    @staticmethod
    def _rewrite(messages: list[dict[str, Any]], turn_start: int, summary: str) -> None:
        """Drop this turn's earlier tool exchanges for the model's summary.

        The last assistant message with its tool replies stays whole, so every tool call
        the next request shows still has its reply.
        """
        last = max(i for i, m in enumerate(messages) if m["role"] == "assistant"
                   and m.get("tool_calls"))
        if last <= turn_start:
            return
        messages[turn_start:last] = [{"role": "assistant",
                                      "content": f"[Summary of earlier tool work] {summary}"}]
