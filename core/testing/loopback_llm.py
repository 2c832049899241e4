"""A real HTTP server on 127.0.0.1 that speaks OpenAI chat completions and plays a script.

It stands in for DeepSeek or OpenAI in the tests, the benchmarks and the packaged app's
`--smoke-test`, which is why it ships inside `core` rather than in `tests/`.

Each request takes the next step of the script. A step is a dict:
  text: the reply text, streamed in small pieces
  reasoning: reasoning_content streamed before the text (DeepSeek thinking models)
  tool_calls: [{"name": ..., "arguments": dict or raw text}], arguments split over chunks
  status: an HTTP error status to answer with instead (message, code, headers: its body's
    error message and code, and extra headers such as Retry-After)
  delay: seconds to wait before answering; chunk_delay: seconds between chunks
  hold: a threading.Event to wait for before answering (a test's handshake: the request
    has arrived and stays unanswered until the test sets it; 60 s at most)
  keepalive: seconds of SSE keep-alive comments after the headers, before the first chunk
    (what llama-server and proxies send while a model reads a long prompt)
  cut: end the stream in the middle, without finish_reason or [DONE]
  reset: drop the connection in the middle of the stream (a server killed mid-reply)
  empty_stream: answer a streamed request with a stream that carries nothing (what
    llama-cpp-python's function-calling formats do when the model wants a tool)
  error_event: {"message", "code"}: an error event in the middle of the stream, as
    servers send when generation fails after the answer has started
  garbage: answer 200 with a body that is not JSON
  redirect: answer 307 pointing at this address
  silent: seconds of silence after the first chunk, while `GET /slots` says the slot is
    processing (llama-server holds back output that may become a tool call)
  timings: llama-server's `timings` (prompt_n, prompt_ms, ...) sent with the usage
Every request body is recorded in `requests` so tests can check what the app sent, and
`server_seconds` adds up the time spent answering, so benchmarks can leave it out.

With `cache_usage`, usage is counted the way DeepSeek counts it: prompt tokens estimated
from the request, and `prompt_cache_hit_tokens` (also `prompt_tokens_details.
cached_tokens`, OpenAI's name) for the part that repeats the previous request from its
start, which a server's prefix cache would not process again.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ScriptedOpenAIServer:
    def __init__(self, script: list[dict[str, Any]] | None = None) -> None:
        self.script: list[dict[str, Any]] = list(script or [])
        self.requests: list[dict[str, Any]] = []
        self.server_seconds = 0.0
        self.models = ["test-model", "deepseek-chat"]
        # `shutdown_date` per model as `GET /v1/models` gives it (OpenAI: "YYYY-MM-DD"; any
        # value is sent as it is, so a test can send seconds, text that is no date…)
        self.shutdowns: dict[str, Any] = {}
        self.cache_usage = False
        self.slots = True  # answer `GET /slots` as llama-server does (False: 404)
        self.generating = 0  # requests being answered now
        self._previous_prompt = ""
        self.lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"fake": self})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def play(self, *steps: dict[str, Any]) -> None:
        with self.lock:
            self.script.extend(steps)

    def next_step(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            self.requests.append(body)
            return self.script.pop(0) if self.script else {"text": "(script ended)"}

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def usage(self, body: dict[str, Any]) -> dict[str, Any]:
        """Token counts for a request (see `cache_usage`); about four characters a token."""
        if not self.cache_usage:
            return {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
        prompt = rendered_prompt(body)
        with self.lock:
            previous, self._previous_prompt = self._previous_prompt, prompt
        shared = shared_prefix(previous, prompt)
        tokens, cached = len(prompt) // 4, shared // 4
        return {"prompt_tokens": tokens, "completion_tokens": 20, "total_tokens": tokens + 20,
                "prompt_cache_hit_tokens": cached, "prompt_cache_miss_tokens": tokens - cached,
                "prompt_tokens_details": {"cached_tokens": cached}}


def rendered_prompt(body: dict[str, Any]) -> str:
    """A request as a chat template lays it out: the first system message, the tools,
    then every other message in order. Prefix caches work on this order."""
    messages = body.get("messages") or []
    system = [m for m in messages[:1] if m.get("role") == "system"]
    parts = [json.dumps(m, ensure_ascii=False, sort_keys=True) for m in system]
    parts.append(json.dumps(body.get("tools") or [], ensure_ascii=False, sort_keys=True))
    parts += [json.dumps(m, ensure_ascii=False, sort_keys=True) for m in messages[len(system):]]
    return "\n".join(parts)


def shared_prefix(a: str, b: str) -> int:
    """How many characters `a` and `b` share from their start."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _pieces(text: str, size: int = 7) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


class _Handler(BaseHTTPRequestHandler):
    fake: ScriptedOpenAIServer
    protocol_version = "HTTP/1.1"

    def log_message(self, *_args: Any) -> None:  # keep test output clean
        return

    def do_GET(self) -> None:
        """`GET /v1/models`: the models this server pretends to have; `GET /slots`: whether
        it is generating, as llama-server tells."""
        if self.path.rstrip("/") == "/slots" and self.fake.slots:
            self._raw(200, json.dumps([{"id": 0, "is_processing": self.fake.generating > 0}])
                      .encode(), "application/json")
            return
        if not self.path.rstrip("/").endswith("/models"):
            self._json(404, {"error": {"message": "not found", "type": "not_found"}})
            return
        self._json(200, {"object": "list", "data": [
            {"id": name, "object": "model", "created": 0, "owned_by": "loopback",
             **({"shutdown_date": self.fake.shutdowns[name]}
                if name in self.fake.shutdowns else {})}
            for name in self.fake.models]})

    def do_POST(self) -> None:
        started = time.perf_counter()
        with self.fake.lock:
            self.fake.generating += 1
        try:
            self._answer()
        finally:
            with self.fake.lock:
                self.fake.server_seconds += time.perf_counter() - started
                self.fake.generating -= 1

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(length) or b"{}")
        step = self.fake.next_step(body)
        if "hold" in step:
            step["hold"].wait(60)
        time.sleep(step.get("delay", 0))
        if "redirect" in step:
            self.send_response(307)
            self.send_header("Location", step["redirect"])
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif "status" in step:
            self._json(step["status"], {"error": {"message": step.get("message", "scripted"),
                                                  "type": "scripted_error",
                                                  "code": step.get("code")}},
                       step.get("headers"))
        elif step.get("garbage"):
            self._raw(200, b"<html>this is not json</html>", "application/json")
        elif body.get("stream") and step.get("empty_stream"):
            self._raw(200, b"", "text/event-stream")
        elif body.get("stream"):
            self._stream(step, body.get("model", "m"), self.fake.usage(body))
        else:
            self._json(200, self._completion(step, body.get("model", "m")))

    def _raw(self, status: int, payload: bytes, kind: str,
             headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _json(self, status: int, data: dict[str, Any],
              headers: dict[str, str] | None = None) -> None:
        self._raw(status, json.dumps(data).encode(), "application/json", headers)

    @staticmethod
    def _arguments(call: dict[str, Any]) -> str:
        args = call.get("arguments", {})
        return args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)

    def _completion(self, step: dict[str, Any], model: str) -> dict[str, Any]:
        calls = [{"id": f"call_{i}", "type": "function",
                  "function": {"name": c["name"], "arguments": self._arguments(c)}}
                 for i, c in enumerate(step.get("tool_calls", []))]
        return {"id": "cmpl", "object": "chat.completion", "created": int(time.time()),
                "model": model, "choices": [{"index": 0, "finish_reason":
                                             "tool_calls" if calls else "stop",
                                             "message": {"role": "assistant",
                                                         "content": step.get("text"),
                                                         "tool_calls": calls or None}}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}

    def _stream(self, step: dict[str, Any], model: str, usage: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        ends = time.monotonic() + step.get("keepalive", 0)
        while time.monotonic() < ends:
            self.wfile.write(b": keep-alive\n\n")
            self.wfile.flush()
            time.sleep(0.05)
        chunks: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
        chunks += [{"reasoning_content": p} for p in _pieces(step["reasoning"])] \
            if step.get("reasoning") else []
        chunks += [{"content": p} for p in _pieces(step.get("text", ""))] \
            if step.get("text") else []
        for i, call in enumerate(step.get("tool_calls", [])):
            chunks.append({"tool_calls": [{"index": i, "id": f"call_{i}", "type": "function",
                                           "function": {"name": call["name"],
                                                        "arguments": ""}}]})
            chunks += [{"tool_calls": [{"index": i, "function": {"arguments": p}}]}
                       for p in _pieces(self._arguments(call), 5)]
        broken = step.get("cut") or step.get("reset") or step.get("error_event")
        cut_at = len(chunks) // 2 if broken else None
        try:
            for n, delta in enumerate(chunks):
                if n == cut_at:
                    self._break_off(step)
                    return
                self._event({"id": "c", "object": "chat.completion.chunk", "created": 0,
                             "model": model, "choices": [{"index": 0, "delta": delta,
                                                          "finish_reason": None}]})
                time.sleep(step.get("silent", 0) if n == 0 else step.get("chunk_delay", 0))
            finish = "tool_calls" if step.get("tool_calls") else "stop"
            self._event({"id": "c", "object": "chat.completion.chunk", "created": 0,
                         "model": model, "choices": [{"index": 0, "delta": {},
                                                      "finish_reason": finish}]})
            self._event({"id": "c", "object": "chat.completion.chunk", "created": 0,
                         "model": model, "choices": [], "usage": usage,
                         **({"timings": step["timings"]} if "timings" in step else {})})
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            return
        self.close_connection = True

    def _break_off(self, step: dict[str, Any]) -> None:
        """End the stream half-way: cleanly, with an error event, or with a reset."""
        if "error_event" in step:
            self._event({"error": {"message": step["error_event"].get("message", "failed"),
                                   "code": step["error_event"].get("code"),
                                   "type": "server_error"}})
        elif step.get("reset"):  # RST instead of FIN: the client sees the connection die
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
            os.close(self.connection.detach())
        self.close_connection = True

    def _event(self, data: dict[str, Any]) -> None:
        try:
            line = f"data: {json.dumps(data, ensure_ascii=False)}\n\n".encode()
        except UnicodeEncodeError:  # a lone surrogate: only the escaped form is UTF-8
            line = f"data: {json.dumps(data)}\n\n".encode()
        self.wfile.write(line)
        self.wfile.flush()
