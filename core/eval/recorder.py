"""A pass-through proxy on 127.0.0.1 that records every request the app sends.

The eval puts it between the app and the endpoint under test, so the cost figures (how
much of each prompt repeats the previous one, the server's own usage and cache counts)
come from the requests as they really went out, whatever the endpoint is.
"""

from __future__ import annotations

import http.client
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

FORWARDED = ("authorization", "content-type", "accept")


class RecordingProxy:
    def __init__(self, target_base_url: str, timeout: float = 1800.0) -> None:
        parts = urlsplit(target_base_url.rstrip("/"))
        self.https = parts.scheme == "https"
        self.netloc = parts.netloc
        self.path = parts.path
        self.timeout = timeout
        self.records: list[dict[str, Any]] = []  # {"body": request, "usage": dict | None}
        self.lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"proxy": self})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        """What the app is pointed at instead of the endpoint."""
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{self.path}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def connect(self) -> http.client.HTTPConnection:
        """A connection to the endpoint (redirects are not followed, as in the app)."""
        kind = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
        return kind(self.netloc, timeout=self.timeout)


def usage_in(line: bytes) -> dict[str, Any] | None:
    """The usage object of one SSE `data:` line, if it carries one."""
    if not line.startswith(b"data:"):
        return None
    try:
        data = json.loads(line[5:])
    except ValueError:
        return None
    return data.get("usage") if isinstance(data, dict) else None


class _Handler(BaseHTTPRequestHandler):
    proxy: RecordingProxy
    protocol_version = "HTTP/1.1"

    def log_message(self, *_args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._forward(None)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        self._forward(self.rfile.read(length))

    def _forward(self, payload: bytes | None) -> None:
        record: dict[str, Any] | None = None
        if payload is not None:
            try:
                record = {"body": json.loads(payload), "usage": None}
            except ValueError:
                record = {"body": {}, "usage": None}
            with self.proxy.lock:
                self.proxy.records.append(record)
        headers = {k: v for k, v in self.headers.items() if k.lower() in FORWARDED}
        connection = self.proxy.connect()
        try:
            connection.request("POST" if payload is not None else "GET", self.path,
                               body=payload, headers=headers)
            response = connection.getresponse()
        except (OSError, http.client.HTTPException) as error:
            connection.close()
            self.send_error(502, f"the endpoint could not be reached: {error}")
            return
        try:
            self.send_response(response.status)
            for name in ("content-type", "retry-after", "location"):
                if response.getheader(name):
                    self.send_header(name, response.getheader(name))
            self.send_header("Connection", "close")
            self.end_headers()
            pending = b""
            while chunk := response.read1(65536):
                self.wfile.write(chunk)
                self.wfile.flush()
                if record is not None:
                    pending += chunk
                    *lines, pending = pending.split(b"\n")
                    for line in lines:
                        record["usage"] = usage_in(line.strip()) or record["usage"]
        except (OSError, http.client.HTTPException):
            pass  # the app sees the stream end and says so
        finally:
            connection.close()
            self.close_connection = True
