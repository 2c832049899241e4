"""A loopback mirror of the model hub's file URLs (`{base}/{repo}/resolve/main/{file}`),
with HTTP Range, for the tests and the benchmarks: it serves one file, from bytes or read
from disk as it is sent, and plays a real network's bad days when told: a cut connection
(`cut_after` bytes, once), a wrong byte, ranges ignored, a slow line (`rate` bytes a
second)."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

BLOCK = 1 << 16


class Mirror(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, body: bytes | Path, path: str) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.body, self.file_path = body, path
        self.cut_after: int | None = None
        self.wrong_byte: int | None = None
        self.ranges = True
        self.rate: float | None = None  # bytes a second: a slow line
        self.asked: list[str | None] = []  # the Range header of each request
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @classmethod
    def of(cls, body: bytes | Path, repo: str, file: str) -> Mirror:
        """A mirror serving `body` as the hub serves `file` of `repo`."""
        return cls(body, f"/{repo}/resolve/main/{file}")

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def close(self) -> None:
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: Mirror

    def log_message(self, *_args) -> None:
        pass

    def do_GET(self) -> None:
        mirror = self.server
        asked = self.headers.get("Range")
        mirror.asked.append(asked)
        if self.path != mirror.file_path:
            self.send_error(404)
            return
        size = mirror.body.stat().st_size if isinstance(mirror.body, Path) \
            else len(mirror.body)
        start = int(asked.removeprefix("bytes=").split("-")[0]) \
            if asked and mirror.ranges else 0
        if start >= size and asked:
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{size}")
            self.end_headers()
            return
        if asked and mirror.ranges:
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{size - 1}/{size}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(size - start))
        self.end_headers()
        cut, mirror.cut_after = mirror.cut_after, None
        left = size - start if cut is None else min(cut, size - start)
        began = time.monotonic()
        sent = 0
        try:
            for block in self._blocks(start, left):
                self.wfile.write(block)
                sent += len(block)
                if mirror.rate:  # a slow line: never ahead of `rate` bytes a second
                    time.sleep(max(0.0, sent / mirror.rate - (time.monotonic() - began)))
        except (BrokenPipeError, ConnectionResetError):
            return  # the app stopped reading (cancelled)
        if cut is not None:
            self.wfile.flush()
            self.connection.shutdown(2)  # the network goes away mid-file

    def _blocks(self, start: int, left: int):
        mirror = self.server
        if isinstance(mirror.body, Path):
            with mirror.body.open("rb") as model:
                model.seek(start)
                while left > 0 and (block := model.read(min(BLOCK, left))):
                    left -= len(block)
                    yield block
            return
        body = bytearray(mirror.body[start:start + left])
        if mirror.wrong_byte is not None and start <= mirror.wrong_byte < start + left:
            body[mirror.wrong_byte - start] ^= 0xFF
        for at in range(0, len(body), BLOCK):
            yield bytes(body[at:at + BLOCK])
