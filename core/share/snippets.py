"""What a person pastes into another app's settings so that it uses this memory.

Claude Desktop, Cursor and Cherry Studio each read a JSON block naming the servers they
start; all three can start `trulymem mcp` over standard input and output. Apps that
only connect over HTTP get the address and the token of `trulymem mcp --http`.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from core.i18n import N_, tr

APPS = ("Claude Desktop", "Cursor", "Cherry Studio", N_("Another app, over HTTP"))
PROGRAMS = ("installed", "standalone")
SERVER_KEY = "trulymem"
WHERE = {
    "Claude Desktop": N_("In Claude Desktop: Settings › Developer › Edit Config; add this "
                         "to the file (merge \"mcpServers\"), save, restart Claude."),
    "Cursor": N_("In Cursor: Settings › MCP › Add new global MCP server; add this to "
                 "mcp.json (merge \"mcpServers\") and save."),
    "Cherry Studio": N_("In Cherry Studio: Settings › MCP Servers › Add › Import from JSON; "
                        "paste this and confirm."),
    "Another app, over HTTP": N_("Run the first line in a terminal and keep it running; give "
                                 "the app the address and the header."),
}
STANDALONE_GUESS = "/path/to/TrulyMEM/trulymem"  # shown when this is not the standalone build


def command(program: str) -> str:
    """The program to start: the installed `trulymem` command, or the standalone build's
    executable (this one, when running it)."""
    if program == "standalone":
        return sys.executable if getattr(sys, "frozen", False) else STANDALONE_GUESS
    if getattr(sys, "frozen", False):
        return shutil.which("trulymem") or "trulymem"
    return shutil.which("trulymem") or str(Path(sys.prefix, "bin", "trulymem"))


def arguments(home: Path | None, http: bool = False) -> list[str]:
    """`mcp`, and the data folder unless it is the default (an app starts the server
    without this program's environment, so $TRULYMEM_HOME would not reach it)."""
    args = ["mcp", *(["--http"] if http else [])]
    if home is not None and Path(home).expanduser() != Path.home() / ".trulymem":
        args += ["--home", str(home)]
    return args


def snippet(app: str, program: str, home: Path | None, token: str = "",
            port: int = 8765) -> str:
    """The exact text to paste into `app`'s settings."""
    start = {"command": command(program), "args": arguments(home)}
    if app == "Cherry Studio":
        block = {"mcpServers": {SERVER_KEY: {"name": "TrulyMEM", "type": "stdio", **start}}}
    elif app in ("Claude Desktop", "Cursor"):
        block = {"mcpServers": {SERVER_KEY: start}}
    else:
        line = " ".join([command(program), *arguments(home, http=True)])
        return (f"{line}\n\nAddress: http://127.0.0.1:{port}/mcp\n"
                f"Header:  Authorization: Bearer {token or tr('(turn sharing on first)')}")
    return json.dumps(block, indent=2, ensure_ascii=False)
