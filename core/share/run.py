"""`trulymem mcp`: serve the memory to other AI apps over stdio, or `--http` on 127.0.0.1.

Nothing is served unless the person turned on "Share memory with other apps" in the
settings. Over HTTP every request must carry the token shown there
(`Authorization: Bearer …`); the server listens on the loopback address only, and the
SDK's DNS-rebinding protection refuses requests naming another host.
"""

from __future__ import annotations

import argparse
import hmac
import json
import logging
import sys
from pathlib import Path
from typing import Any

from core.config import ConfigError, language_setting, load_config, save_config, updated
from core.i18n import N_, set_language, tr
from core.paths import add_home_option, config_path, data_home
from core.share.tokens import new_token

HOST = "127.0.0.1"
PATH = "/mcp"
OFF = N_("sharing is off: in TrulyMEM, open Settings and turn on \"Share memory with other "
         "apps\", or run \"trulymem mcp --enable\", then start this again")


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="trulymem mcp",
        description=tr("Share the memory with other AI apps over the Model Context "
                       "Protocol."),
        epilog=tr("Nothing is served while sharing is off. Switch it on in the window "
                  "(Settings, Other apps) or, without a window, with \"trulymem mcp "
                  "--enable\" (--disable switches it off again)."))
    add_home_option(parser)
    parser.add_argument("--http", action="store_true",
                        help=tr("serve streamable HTTP on {host} instead of stdin/stdout",
                                host=HOST))
    parser.add_argument("--port", type=int,
                        help=tr("with --http: the port (default: the one in the settings; 0 "
                                "picks a free one)"))
    parser.add_argument("--read-only", action="store_true",
                        help=tr("offer reading tools only, whatever the settings say"))
    switch = parser.add_mutually_exclusive_group()
    switch.add_argument("--enable", action="store_true",
                        help=tr("switch sharing on in the settings, print the HTTP token and "
                                "exit"))
    switch.add_argument("--disable", action="store_true",
                        help=tr("switch sharing off in the settings and exit"))
    return parser.parse_args(argv)


def switch_sharing(home: Path, on: bool) -> int:
    """Sharing switched on or off from a terminal, as the settings' checkbox does: for a
    machine where the window is never opened (a server Claude Desktop talks to)."""
    file = config_path(home)
    config, _warning = load_config(file)
    changes: dict[str, Any] = {"share_memory": on}
    if on and not config.share_token:
        changes["share_token"] = new_token()
    config = updated(config, **changes)
    try:
        save_config(file, config)
    except OSError as error:
        print(f"trulymem mcp: {error}", file=sys.stderr)
        return 1
    if on:
        print(tr("Sharing is on. Apps start \"trulymem mcp\" (stdio), or connect to "
                 "http://{host}:{port}{path} with the header \"Authorization: Bearer {token}\" "
                 "after \"trulymem mcp --http\".", host=HOST, port=config.share_port,
                 path=PATH, token=config.share_token))
    else:
        print(tr("Sharing is off: trulymem mcp serves nothing."))
    return 0


def http_token(home: Path) -> str:
    """The token apps send; made and saved on first use when the window never made one."""
    file = config_path(home)
    config, _warning = load_config(file)
    if config.share_token:
        return config.share_token
    token = new_token()
    save_config(file, updated(config, share_token=token))
    return token


class RequireToken:
    """ASGI middleware: an HTTP request without `Authorization: Bearer <token>` gets 401
    and reaches nothing (compared in constant time)."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = token.encode()

    def _allowed(self, header: bytes) -> bool:
        """`Bearer <token>`, the scheme in any case (RFC 7235: it is case-insensitive)."""
        scheme, _, given = header.strip().partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(),
                                                                   self.expected)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or ()).get(b"authorization", b"")
            if not self._allowed(given):
                body = json.dumps({"error": "a wrong or missing token: copy it from "
                                            "TrulyMEM's settings (Share memory with other "
                                            "apps)"}).encode()
                await send({"type": "http.response.start", "status": 401, "headers": [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", b"Bearer")]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def main(argv: list[str]) -> int:
    set_language(language_setting(argv))
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="trulymem mcp: %(message)s")
    home = data_home(args.home)
    if args.enable or args.disable:
        return switch_sharing(home, args.enable)
    config, warning = load_config(config_path(home))
    if warning:
        print(f"trulymem mcp: {warning}", file=sys.stderr)
    if not config.share_memory:
        print(f"trulymem mcp: {tr(OFF)}", file=sys.stderr)
        return 3
    from core.share.server import SharedMemory, build_server  # noqa: PLC0415  (the SDK)

    try:
        memory = SharedMemory(home, read_only=args.read_only)
    except (RuntimeError, ConfigError) as error:
        print(f"trulymem mcp: {error}", file=sys.stderr)
        return 1
    try:
        memory.start_meaning()
        server = build_server(memory)
        if args.http:
            port = config.share_port if args.port is None else args.port
            return _serve_http(server, http_token(home), port)
        return _serve_stdio(server)
    except KeyboardInterrupt:
        return 0
    finally:
        memory.close()


def _serve_stdio(server: Any) -> int:
    import anyio  # noqa: PLC0415
    from mcp.server.stdio import stdio_server  # noqa: PLC0415

    async def serve() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(serve)
    return 0


def _serve_http(server: Any, token: str, port: int) -> int:
    import anyio  # noqa: PLC0415
    import uvicorn  # noqa: PLC0415

    app = RequireToken(server.streamable_http_app(streamable_http_path=PATH, host=HOST),
                       token)
    web = uvicorn.Server(uvicorn.Config(app, host=HOST, port=port, log_level="warning",
                                        lifespan="on"))

    async def serve() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(web.serve)
            while not web.started:  # the address is told once it accepts connections
                if web.should_exit:
                    return
                await anyio.sleep(0.02)
            bound = web.servers[0].sockets[0].getsockname()[1]
            print("trulymem mcp: " + tr("serving {address}",
                                        address=f"http://{HOST}:{bound}{PATH}"),
                  file=sys.stderr, flush=True)

    try:
        anyio.run(serve)
    except OSError as error:
        print("trulymem mcp: " + tr("cannot listen on {address} ({error})",
                                    address=f"{HOST}:{port}", error=error), file=sys.stderr)
        return 1
    return 0 if web.started else 1
