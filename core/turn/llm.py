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
import urllib.request
from dataclasses import dataclass, field, replace
from typing import Any

import openai

from core import redaction
from core.endpoint.api_errors import (
    describe_api_error,
    describe_broken_stream,
    model_missing,
    retry_after,
)
from core.errors import ErrorCode
from core.events import Event
from core.i18n import tr_kept
from core.redaction import scrub_known
from core.turn import parrot
from core.turn.guards import LoopGuard
from core.turn.pace import ReadingPace
from core.turn.pronouns import ToThePerson
from core.turn.repetition import repetition_start
from core.turn.text_calls import read_reply, visible_prefix
from core.turn.tool_round import Progress, RunTool, assistant_message, rewrite, run_call
from core.turn.turn_result import (
    BadReply,
    EmptyStream,
    TurnCancelled,
    TurnOptions,
    TurnResult,
    add_usage,
    made_answer,
    model_words,
)

# What other modules have taken from here since before the turn was split in modules
__all__ = ["BadReply", "ChatSession", "EmptyStream", "TurnCancelled", "TurnOptions",
           "TurnResult", "add_usage", "describe_api_error", "made_answer",
           "model_words"]


@dataclass
class _Attempt:
    """One model request of a turn, as the stream reader and its watchdog share it."""

    result: TurnResult
    progress: Progress
    options: TurnOptions
    answer_now: bool  # ask for an answer: no call runs, whatever comes back
    chunks: int = 0
    shown: int = 0  # characters of the text already shown to the person
    pending: str = ""  # text after those, not shown yet
    holding: bool = False  # a call written as text started: the rest waits for the end
    repeating: bool = False  # the reply began repeating itself: it was cut there
    length: int = 0  # characters of text so far (summing the pieces each time cost O(n²))
    checked: int = 0  # text length at the last look for repetition
    backing_off: bool = False  # waiting to retry a rate limit: not the model's silence
    parroted: bool = False  # the reply repeated the person's words: not shown, asked again
    dropped: list[tuple[int, int]] = field(default_factory=list)  # sentences of theirs, unshown
    offered: set[str] = field(default_factory=set)  # the tools of this request
    last: float = field(default_factory=time.monotonic)  # when the last chunk came
    sent: float = 0.0  # when the request went (after any back-off)…
    waited: float | None = None  # …and how long until its first chunk
    usage: dict[str, Any] = field(default_factory=dict)  # this request's own usage…
    timings: dict[str, Any] | None = None  # …and llama.cpp's count of its reading
    text: list[str] = field(default_factory=list)
    thought: str = ""  # the reasoning so far…
    thought_shown: int = 0  # …and how much of it went to the window


def _show_reasoning(attempt: _Attempt, final: bool = False) -> None:
    """Send the reasoning that arrived, masked like the reply: a key the model thinks
    aloud is never shown, not even split over two pieces (its start waits for the rest,
    until the stream ends)."""
    whole = attempt.thought
    upto = len(whole) if final else _before_a_key(whole, len(whole))
    if upto > attempt.thought_shown:
        attempt.progress(Event.REASONING,
                         {"delta": scrub_known(whole[attempt.thought_shown:upto])})
        attempt.thought_shown = upto


RETRIES = 2  # for rate limits and server errors; never for a timeout
WATCH_INTERVAL = 0.25  # seconds between the stream watchdog's looks at the clock
MAX_BACKOFF = 8.0


def _sampling(options: TurnOptions) -> dict[str, Any]:
    """The optional request fields a turn sets: only those given, so a server keeps its
    own defaults for the rest."""
    extra: dict[str, Any] = {}
    if options.temperature is not None:
        extra["temperature"] = options.temperature
    if options.max_tokens is not None:
        extra["max_tokens"] = options.max_tokens
    if options.extra_body:
        extra["extra_body"] = options.extra_body
    return extra


WRITTEN_CALLS_TAIL = 300  # characters after calls written as text before the stream stops
REPEATING_NOTE = "\n\n[Stopped: the reply was repeating itself.]"
PARROT_WINDOW = 2_000  # characters of a reply watched for the person's words said back


def _tools(options: TurnOptions, answer_now: bool) -> dict[str, Any]:
    """The request's tools: offered with tool_choice "auto" (some servers drop the tools
    unless it is sent); for an answer, "none" with the tools still listed, so the prompt
    prefix stays the same for the server's cache, or no tools at all where "none" is
    not honoured."""
    if not options.tools or (answer_now and options.drop_tools_to_answer):
        return {}
    return {"tools": options.tools, "tool_choice": "none" if answer_now else "auto"}


def _must_answer(guard: LoopGuard, result: TurnResult, options: TurnOptions) -> bool:
    """The last round trip, a turn going in circles, or one past its tool rounds must end
    in an answer."""
    return guard.must_answer or result.round_trips == options.max_round_trips or (
        options.max_tool_rounds is not None and result.round_trips > options.max_tool_rounds)


def _before_a_key(text: str, cut: int) -> int:
    """`cut` moved back so that no known key is shown in part: not across the cut, and
    not where the text so far ends with what may be a key's beginning (its rest has not
    arrived yet to be masked)."""
    if not redaction.known() or not cut:
        return cut
    if cut == len(text):  # what may start a key waits; that wait may not split a key
        cut -= redaction.held_back(text)
    for key in redaction.known():
        start = text.find(key, max(0, cut - len(key) + 1), cut + len(key) - 1)
        if start != -1 and start < cut < start + len(key):
            cut = start
    return cut


def _at_sentence_start(attempt: _Attempt) -> bool:
    """Everything shown so far ends a sentence: the next one is still whole to judge."""
    return parrot.ends_sentence("".join(attempt.text)[:attempt.shown][-8:])


def _drop(attempt: _Attempt, length: int) -> None:
    """The pending sentence of `length` characters is the person's: passed over, unshown."""
    attempt.dropped.append((attempt.shown, attempt.shown + length))
    attempt.shown += length
    attempt.pending = attempt.pending[length:]


def _without(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` but for the `spans` left out of it."""
    for start, end in reversed(spans):
        text = text[:start] + text[end:]
    return text


def _question(options: TurnOptions) -> str:
    """The person's message this turn answers (the last of what they said)."""
    return options.person_said[-1] if options.person_said else ""


def _guards_parrots(options: TurnOptions) -> bool:
    """A reply that repeats the person is held back: it can be asked again, or answered
    by the app."""
    return options.ask_again is not None or options.fallback is not None


class ChatSession:
    """Runs turns with one client; `cancel()` may be called from any thread."""

    def __init__(self, client: openai.OpenAI, model: str, base_url: str = "",
                 pace: ReadingPace | None = None) -> None:
        self.client = client
        self.model = model
        self.base_url = base_url
        self._cancel = threading.Event()
        self._expired: float | None = None  # the turn time limit that stopped the turn
        self._stalled: str | None = None  # why the watchdog closed the stream
        self._stream_lock = threading.Lock()
        self._stream: Any = None
        # how fast this model reads: the evidence it is shown
        self.pace = pace if pace is not None else ReadingPace()

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
        self._close_stream()

    def _close_stream(self) -> None:
        with self._stream_lock:
            stream = self._stream
        if stream is not None:
            # Closing from another thread may race the reader; either way the read ends.
            with contextlib.suppress(Exception):
                stream.close()

    def run(self, messages: list[dict[str, Any]], run_tool: RunTool, progress: Progress,
            options: TurnOptions) -> TurnResult:
        """Play one turn starting from `messages` (system + user); never raises. A cancel
        that arrived since the last `reset()` stops it at once."""
        result = TurnResult()
        turn_start = len(messages)
        guard = LoopGuard()
        offered = {t["function"]["name"] for t in options.tools}
        try:
            while True:
                result.round_trips += 1
                attempt = _Attempt(result, progress, options,
                                   _must_answer(guard, result, options), offered=offered)
                text, reasoning, calls = self._ask(messages, attempt, offered)
                if attempt.parroted:  # the repeat was not shown: ask once more, then the
                    again = self._parroted(messages, options, text, result, progress)
                    if again is None:  # the app answered from the memory itself
                        break
                    messages, options = again
                    continue
                result.reasoning += reasoning
                if calls and attempt.answer_now:  # told to answer, it called again: none runs
                    text, calls = self._rescue(text, result, options, progress), []
                result.content += text
                if attempt.repeating:
                    result.content += REPEATING_NOTE
                    break
                if not calls:
                    break
                messages.append(assistant_message(text, reasoning, calls))
                self._run_calls(calls, messages, turn_start=turn_start, run_tool=run_tool,
                                progress=progress, result=result, guard=guard)
            self._never_blank(result, options, progress)
        except TurnCancelled as stop:
            result.content += stop.partial
            self._stopped(result)
        except BadReply as error:
            result.content += error.partial
            result.error, result.code = error.args[0], ErrorCode.ENDPOINT  # its Words
        except (openai.OpenAIError, json.JSONDecodeError, ValueError, OSError,
                RuntimeError) as error:
            if self._cancel.is_set():
                self._stopped(result)
            else:
                result.error = describe_api_error(error, self.base_url, self.model)
                result.code = ErrorCode.MODEL_NOT_FOUND if model_missing(error) \
                    else ErrorCode.ENDPOINT
        finally:
            with self._stream_lock:
                self._stream = None
        return result

    def _run_calls(self, calls: list[dict[str, str]], messages: list[dict[str, Any]], *,
                   turn_start: int, run_tool: RunTool, progress: Progress,
                   result: TurnResult, guard: LoopGuard) -> None:
        """Run one round's calls and add their replies to the conversation."""
        summary = None
        for call in calls:
            self._check_cancel()
            reply, said = self.run_call(call, run_tool, progress, result, guard)
            summary = said or summary
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": reply})
        if summary:
            rewrite(messages, turn_start, summary)

    def _ask(self, messages: list[dict[str, Any]], attempt: _Attempt,
             offered: set[str]) -> tuple[str, str, list[dict[str, str]]]:
        """One model request: streamed, or not when the stream came empty; a reply that
        holds calls written as text is taken as those calls, and never shown as an
        answer. Prose before such a call was shown; the rest is not."""
        try:
            text, reasoning, calls = self._stream_once(messages, attempt)
        except EmptyStream:
            text, reasoning, calls = self._complete_once(messages, attempt)
        if not calls and (written := read_reply(text, offered).calls):
            calls = self._calls_from_text(written, attempt.result, attempt.progress)
        if calls:
            return _without(text[:attempt.shown], attempt.dropped), reasoning, calls
        options = attempt.options
        if _guards_parrots(options) and attempt.shown < len(text) and (
                parrot.says_back(text, options.person_said)
                or (not attempt.shown and (
                    parrot.repeats(text, options.person_said)
                    or parrot.answers_nothing(text, _question(options))))):
            # what was held back repeats the person ("Hello, Luo Bin! <their message>"):
            # it is left out, and what was shown before it stays
            attempt.parroted = True
            lead = len(text[attempt.shown:]) - len(text[attempt.shown:].lstrip(
                " \t,.;:!?，。；：！？"))  # the greeting's own "! " stays with it
            if attempt.shown and lead:
                self._show(attempt, attempt.shown + lead)
            return _without(text[:attempt.shown], attempt.dropped), reasoning, calls
        self._show_rest(attempt, text)  # prose after all: the held-back rest
        kept = _without(text, attempt.dropped)
        if attempt.dropped and _guards_parrots(options) and not re.search(r"[^\W_]", kept):
            attempt.parroted = True  # nothing but the person's sentences: asked again
            return "", reasoning, calls
        return kept, reasoning, calls

    @staticmethod
    def _calls_from_text(written: list[dict[str, str]], result: TurnResult,
                         progress: Progress) -> list[dict[str, str]]:
        """A reply that is a tool call written as text: run it as the call it is."""
        calls = [{**c, "id": f"text_call_{result.round_trips}_{i}"}
                 for i, c in enumerate(written)]
        result.calls_in_text += len(calls)
        progress(Event.CALLS_IN_TEXT, {"names": [c["name"] for c in calls]})
        return calls

    @staticmethod
    def _stream_text(attempt: _Attempt, piece: str) -> None:
        """Show the reply as it streams, except what may be a call written as text, and a
        sentence that may be the person's words said back, until it is seen whole."""
        if attempt.holding:
            return
        attempt.pending += piece
        guarded = _guards_parrots(attempt.options) and attempt.length <= PARROT_WINDOW
        said = attempt.options.person_said
        so_far = "".join(attempt.text)
        if guarded and (parrot.could_become(so_far, said) or (
                not attempt.shown and parrot.could_answer_nothing(so_far, _question(
                    attempt.options)))):
            # it may be the person's words said back, or a bare "Yes." to "do you
            # remember my name?": not shown unless it turns out not to be
            return
        while attempt.pending:
            limit = len(attempt.pending)
            if guarded:
                sentence, whole = parrot.first_sentence(attempt.pending)
                if _at_sentence_start(attempt):  # a sentence begun on screen goes on there
                    if whole and parrot.echoes(sentence, said):
                        _drop(attempt, len(sentence))
                        continue
                    if not whole and parrot.could_echo(sentence, said):
                        return
                limit = len(sentence)
            cut, attempt.holding = visible_prefix(attempt.pending, at_start=not attempt.shown)
            cut = min(_before_a_key(attempt.pending, cut), limit)
            if cut:
                attempt.progress(Event.TEXT, {"delta": scrub_known(attempt.pending[:cut])})
                attempt.shown += cut
                attempt.pending = attempt.pending[cut:]
            if not guarded or cut < limit or attempt.holding:
                return

    def _show_rest(self, attempt: _Attempt, text: str) -> None:
        """The end of the stream: what was held back is shown, but for the person's own
        sentences said back, which are left out."""
        said = attempt.options.person_said
        while attempt.shown < len(text):
            sentence, _ = parrot.first_sentence(text[attempt.shown:], final=True)
            if _guards_parrots(attempt.options) and _at_sentence_start(attempt) and \
                    parrot.echoes(sentence, said):
                attempt.pending = text[attempt.shown:]
                _drop(attempt, len(sentence))
            else:
                self._show(attempt, attempt.shown + len(sentence))
        attempt.pending = ""

    @staticmethod
    def _show(attempt: _Attempt, upto: int) -> None:
        """Stream the text up to `upto` to the person (what was not shown yet)."""
        text = "".join(attempt.text)
        if upto > attempt.shown:
            attempt.progress(Event.TEXT, {"delta": scrub_known(text[attempt.shown:upto])})
            attempt.shown = upto

    @staticmethod
    def _parroted(messages: list[dict[str, Any]], options: TurnOptions, text: str,
                  result: TurnResult, progress: Progress
                  ) -> tuple[list[dict[str, Any]], TurnOptions] | None:
        """A reply that repeated the person: the request asking once more, or (asked once
        already) None, the app's own answer from the memory given."""
        result.parroted += 1
        result.content += text  # what was shown before it ("Hello! ")
        if options.ask_again is not None:
            return options.ask_again(messages), replace(options, ask_again=None)
        text = options.fallback() if options.fallback else text
        progress(Event.TEXT, {"delta": text})
        result.content += text
        return None

    @classmethod
    def _never_blank(cls, result: TurnResult, options: TurnOptions,
                     progress: Progress) -> None:
        """A turn that ends with nothing to show (the model wrote no words, or blanks)
        gets a short answer in the person's language, never an empty bubble."""
        if not result.content.strip():
            result.content = cls._rescue("", result, options, progress)

    @staticmethod
    def _rescue(shown: str, result: TurnResult, options: TurnOptions,
                progress: Progress) -> str:
        """The model was told to answer and called a tool again: the call does not run,
        and the turn ends with an answer all the same, the prose it had written or a
        short one made from what the turn did."""
        result.rescued += 1
        if shown.strip():
            return shown.rstrip()
        text = made_answer(result.tool_calls, options.person_text)
        progress(Event.TEXT, {"delta": text})
        return text

    def _stopped(self, result: TurnResult) -> None:
        if self._expired is not None:
            result.error = tr_kept("timeout: the turn took longer than {seconds} s; what had "
                                   "arrived is kept", seconds=f"{self._expired:g}")
            result.code = ErrorCode.TIMEOUT
        else:
            result.cancelled, result.code = True, ErrorCode.CANCELLED

    def _create(self, messages: list[dict[str, Any]], options: TurnOptions,
                answer_now: bool, waiting: _Attempt | None = None) -> Any:
        """Open the stream; rate limits and server errors are retried with backoff (the
        server's Retry-After first), timeouts and refused connections are not. A
        Retry-After longer than the backoff is not waited out: the turn says when to try.
        The first-token watchdog of `waiting` starts again after each back-off: it had
        counted through them and called a rate limit "did not start answering"."""
        extra = _sampling(options)
        for attempt in range(RETRIES + 1):
            try:
                # tool_choice "auto" is the API's default, but some servers
                # (llama-cpp-python's function-calling formats) drop the tools unless it
                # is sent. "none" keeps the tools listed, so the prompt prefix stays the
                # same for the server's cache, and asks for an answer.
                if waiting is not None:
                    waiting.sent = time.monotonic()
                return self.client.chat.completions.create(
                    model=self.model, messages=messages, stream=True,
                    stream_options={"include_usage": True}, **_tools(options, answer_now),
                    **extra)
            except (openai.RateLimitError, openai.InternalServerError) as error:
                told = retry_after(error)
                if attempt == RETRIES or (told is not None and told > MAX_BACKOFF):
                    raise
                wait = told or 0.5 * 2 ** attempt
                if waiting is not None:
                    waiting.backing_off = True
                try:
                    if self._cancel.wait(min(wait, MAX_BACKOFF)):
                        raise TurnCancelled from None
                finally:
                    if waiting is not None:
                        waiting.backing_off, waiting.last = False, time.monotonic()
        raise AssertionError("unreachable")

    def _check_cancel(self) -> None:
        if self._cancel.is_set():
            raise TurnCancelled

    def _watch(self, attempt: _Attempt, done: threading.Event) -> None:
        """Close the stream when no chunk came in time: before the first one within
        `first_token_timeout`, after it within `stall_timeout`. Keep-alive comments are
        not chunks, so they cannot keep a dead turn waiting."""
        options = attempt.options
        while not done.wait(WATCH_INTERVAL):
            first = not attempt.chunks
            limit = options.first_token_timeout if first else options.stall_timeout
            if attempt.backing_off:
                continue
            if time.monotonic() - attempt.last > limit:
                if options.local and not first and self._server_busy():
                    attempt.last = time.monotonic()  # generating, only not sending yet
                    continue
                self._stalled = (
                    tr_kept("timeout: the model did not start answering within {seconds} s",
                            seconds=f"{limit:g}") if first else
                    tr_kept("timeout: the model stopped sending for {seconds} s",
                            seconds=f"{limit:g}"))
                self._close_stream()
                return

    def complete_json(self, messages: list[dict[str, Any]], response_format: dict[str, Any],
                      timeout: float) -> str:
        """One request whose answer the server constrains to `response_format` (a JSON
        schema), not streamed; a server that refuses the schema form is asked for a JSON
        object. Raises TurnCancelled, or openai's errors."""
        self._check_cancel()
        for shape in (response_format, {"type": "json_object"}):
            try:
                completion = self.client.chat.completions.create(
                    model=self.model, messages=messages, stream=False, temperature=0,
                    max_tokens=600, response_format=shape, timeout=timeout)
            except openai.BadRequestError:
                if shape is not response_format:
                    raise
                continue
            self._check_cancel()
            choices = getattr(completion, "choices", None)
            return (choices[0].message.content or "") if choices else ""
        return ""

    def _server_busy(self) -> bool:
        """A local llama-server that says (`GET /slots`) a slot is processing: it sends
        nothing while it holds back output that may become a tool call, so silence is not
        a dead server. Servers without the endpoint answer no."""
        root = self.base_url.rstrip("/").removesuffix("/v1")
        try:
            with urllib.request.urlopen(f"{root}/slots", timeout=2.0) as answer:
                slots = json.loads(answer.read(1_000_000))
        except (OSError, ValueError):  # refused, 404 (HTTPError is an OSError), not JSON
            return False
        return isinstance(slots, list) and any(
            isinstance(slot, dict) and slot.get("is_processing") for slot in slots)

    def _stream_once(self, messages: list[dict[str, Any]],
                     attempt: _Attempt) -> tuple[str, str, list[dict[str, str]]]:
        self._check_cancel()
        self._stalled = None
        done = threading.Event()
        threading.Thread(target=self._watch, args=(attempt, done), daemon=True,
                         name="trulymem-stream-watch").start()
        partial = attempt.text
        try:
            return self._read_stream(messages, attempt)
        except (openai.OpenAIError, ValueError, OSError, RuntimeError) as error:
            # RuntimeError: the HTTP library's "stream closed" when the watchdog closed it
            if self._cancel.is_set():  # closing the stream to stop it broke the read
                raise TurnCancelled("".join(partial)) from None
            if self._stalled:
                raise BadReply(tr_kept("{reason}; what had arrived is kept", reason=self._stalled),
                               "".join(partial)) from None
            if attempt.chunks:  # the stream had started: it broke off, keep its text
                raise BadReply(describe_broken_stream(error), "".join(partial)) from None
            raise
        finally:
            done.set()
            with self._stream_lock:
                self._stream = None

    def _read_stream(self, messages: list[dict[str, Any]],
                     attempt: _Attempt) -> tuple[str, str, list[dict[str, str]]]:
        stream = self._create(messages, attempt.options, attempt.answer_now, attempt)
        with self._stream_lock:
            self._stream = stream
        if self._cancel.is_set() or self._stalled:
            self._close_stream()
        text, reasoning = attempt.text, []
        calls: dict[int, dict[str, str]] = {}
        finished = False
        # an answer about the person, said to them as "you" (see `core.turn.pronouns`)
        to_person = ToThePerson() if attempt.options.to_person else None
        for chunk in stream:
            if self._cancel.is_set():
                raise TurnCancelled("".join(text))
            self._arrived(chunk, attempt)
            for choice in chunk.choices:
                if self._take_delta(choice.delta, text, reasoning, calls, attempt):
                    self._stream_piece(attempt, text, to_person)
                finished = finished or bool(choice.finish_reason)
            if self._repeats(attempt):
                finished = True
                break
        if to_person is not None:
            text.append(to_person.flush())
            self._stream_piece(attempt, text)
        if self._cancel.is_set():
            raise TurnCancelled("".join(text))
        if self._stalled:
            raise BadReply(tr_kept("{reason}; what had arrived is kept", reason=self._stalled),
                           "".join(text))
        _show_reasoning(attempt, final=True)
        if attempt.chunks == 0:
            raise EmptyStream
        if not finished:
            raise BadReply(tr_kept("the reply stream broke off before the model finished"),
                           partial="".join(text))
        self.pace.heard(attempt.usage, attempt.timings, attempt.waited)
        ordered = [calls[i] for i in sorted(calls)]
        for i, call in enumerate(ordered):
            call["id"] = call["id"] or f"call_{attempt.result.round_trips}_{i}"
        return "".join(text), "".join(reasoning), ordered

    def _stream_piece(self, attempt: _Attempt, text: list[str],
                      to_person: ToThePerson | None = None) -> None:
        """The newest piece of `text` shown as it may be: turned to the person first
        (`to_person`, which may hold it back), then past the stream's own guards."""
        if to_person is not None:
            text[-1] = to_person.feed(text[-1])
        if text[-1]:
            attempt.length += len(text[-1])
            self._stream_text(attempt, text[-1])

    def _complete_once(self, messages: list[dict[str, Any]],
                       attempt: _Attempt) -> tuple[str, str, list[dict[str, str]]]:
        """The same request without streaming, after a stream that carried nothing."""
        self._check_cancel()
        extra = _sampling(attempt.options)
        try:
            completion = self.client.chat.completions.create(
                model=self.model, messages=messages, stream=False,
                **_tools(attempt.options, attempt.answer_now), **extra)
        except (openai.OpenAIError, ValueError, OSError) as error:
            if self._cancel.is_set():
                raise TurnCancelled from None
            raise BadReply(tr_kept("the API sent an empty stream, and then failed without "
                                   "streaming: {error}",
                                   error=describe_api_error(error, self.base_url))) from None
        choices = getattr(completion, "choices", None)
        if not choices:
            raise BadReply(tr_kept("the API sent a response that is not valid JSON or not a chat "
                                   "completion: check the base URL"))
        if completion.usage:
            self._add_usage(completion.usage, attempt.result, attempt.progress)
        message = choices[0].message
        text = message.content or ""
        if attempt.options.to_person:
            to_person = ToThePerson()
            text = to_person.feed(text) + to_person.flush()
        attempt.text[:] = [text]
        reasoning = getattr(message, "reasoning_content", None) or (
            (message.model_extra or {}).get("reasoning_content")) or ""
        calls = [{"id": call.id or f"call_{attempt.result.round_trips}_{i}",
                  "name": call.function.name, "arguments": call.function.arguments or ""}
                 for i, call in enumerate(message.tool_calls or [])]
        return text, reasoning, calls

    def _arrived(self, chunk: Any, attempt: _Attempt) -> None:
        """A chunk's bookkeeping: when it came, and the usage and reading it counts."""
        attempt.chunks += 1
        attempt.last = time.monotonic()
        if attempt.chunks == 1 and attempt.sent:
            attempt.waited = attempt.last - attempt.sent
        if chunk.usage:
            self._add_usage(chunk.usage, attempt.result, attempt.progress)
            attempt.usage = chunk.usage.model_dump(exclude_none=True)
        timings = (chunk.model_extra or {}).get("timings")
        attempt.timings = timings if isinstance(timings, dict) else attempt.timings

    @staticmethod
    def _add_usage(usage: Any, result: TurnResult, progress: Progress) -> None:
        add_usage(result.usage, usage.model_dump(exclude_none=True))
        progress(Event.USAGE, {k: dict(v) if isinstance(v, dict) else v
                           for k, v in result.usage.items()})

    def _repeats(self, attempt: _Attempt) -> bool:
        """A reply repeating itself (a small model's loop: one line 4,096 tokens long)
        is cut where the repetition began and its stream closed."""
        length = attempt.length
        if length < 400 or length - attempt.checked < 200:
            return False
        attempt.checked = length
        text = "".join(attempt.text)
        start = repetition_start(text)
        if start is None:
            return self._past_written_calls(attempt, text)
        attempt.text[:] = [text[:start].rstrip()]
        attempt.shown = min(attempt.shown, start)
        attempt.repeating = True
        self._close_stream()
        return True

    def _past_written_calls(self, attempt: _Attempt, text: str) -> bool:
        """A reply written as calls that goes on long after its last complete call: the
        1.5B model wrote its call and then 4,000 more tokens (nearly four minutes at 22
        tokens a second, none of it shown). The calls are what it meant: stop there."""
        if attempt.shown:
            return False
        read = read_reply(text, attempt.offered)
        if not read.calls or len(text) - read.end < WRITTEN_CALLS_TAIL:
            return False
        attempt.text[:] = [text[:read.end]]
        self._close_stream()
        return True

    @staticmethod
    def _take_delta(delta: Any, text: list[str], reasoning: list[str],
                    calls: dict[int, dict[str, str]], attempt: _Attempt) -> bool:
        """Take one delta; answers whether it brought reply text (shown by the caller,
        which holds back what may be a call written as text)."""
        if delta is None:
            return False
        brought = bool(delta.content)
        if delta.content:
            text.append(delta.content)
        thought = getattr(delta, "reasoning_content", None) or (
            (delta.model_extra or {}).get("reasoning_content"))
        if thought:
            reasoning.append(thought)
            attempt.thought += thought
            _show_reasoning(attempt)
        for part in delta.tool_calls or []:
            slot = calls.setdefault(part.index or 0, {"id": "", "name": "", "arguments": ""})
            if part.id:
                slot["id"] = part.id
            if part.function is not None:
                if part.function.name and part.function.name != slot["name"]:
                    slot["name"] += part.function.name
                if part.function.arguments:
                    slot["arguments"] += part.function.arguments
        return brought

    def run_call(self, call: dict[str, str], run_tool: RunTool, progress: Progress,
                 result: TurnResult, guard: LoopGuard) -> tuple[str, str | None]:
        """One tool call of the turn (see `core.turn.tool_round.run_call`)."""
        return run_call(call, run_tool, progress, result, guard)
