"""Who an app is: the name it gives itself, and how it reached the memory, which it cannot
choose.

The change log's actor is "mcp:" and the app's declared name. A name is the app's own
word, so it is kept as said, but one that reads like the person's or the assistant's
("user", "you", "助手") is marked as an app's claim. Beside it the log keeps `via`: the
program that started a stdio server (its parent's command line), or, over HTTP, the
local program that holds the connection's other end, found from the kernel's socket
tables where the system shows them (Linux), else the connection's port.
"""

from __future__ import annotations

import contextlib
import os
import re
import unicodedata
from pathlib import Path

APPS_ACTOR = "mcp:"  # the change log's actor for an app is "mcp:" and its name
NAME_LIMIT = 60  # characters of a client's name kept in the change log
COMMAND_LIMIT = 160  # characters of a command line kept in `via`
# Names that would read as the person or the assistant wherever actors are shown.
RESERVED = {"user", "you", "me", "person", "the person", "model", "assistant", "trulymem",
            "system", "你", "我", "用户", "助手", "模型", "系统", "本人"}
# Words that, anywhere in a name, claim to be the person, the assistant or this app
# ("TrulyMEM (you)", "Your assistant"): such a name is shown as an app's claim.
CLAIM_WORDS = {"you", "your", "user", "person", "assistant", "trulymem"}
CLAIM_TEXT = ("trulymem", "你", "用户", "助手", "本人")


CLAIM = "unnamed app (says “{name}”)"  # how an app's claimed name is kept
_CLAIMED = re.compile("^" + re.escape(CLAIM).replace(re.escape("{name}"), "(.*)") + "$",
                      re.DOTALL)


def claimed_name(app: str) -> str | None:
    """The name an app claimed that was not its to take (the actor without "mcp:"), or
    None for a name kept as given."""
    found = _CLAIMED.match(app)
    return found.group(1) if found else None


def skeleton(name: str) -> str:
    """`name` as it reads: full-width and compatibility forms folded (NFKC: "ＵＳＥＲ"),
    and each letter that looks like a Latin one in Unicode's confusables table written as
    that one ("Uѕer" with a Cyrillic ѕ, "TrulyMΕM" with a Greek Ε)."""
    from confusable_homoglyphs import confusables  # noqa: PLC0415  (a 1 MB table)

    folded = unicodedata.normalize("NFKC", name)
    found = confusables.is_confusable(folded, greedy=True)
    for look_alike in found or []:
        if look_alike["character"].isascii():
            continue
        latin = [h["c"] for h in look_alike["homoglyphs"]
                 if h["c"].isascii() and h["c"].isalnum()]
        if latin:
            folded = folded.replace(look_alike["character"], latin[0])
    return folded


def _claims_to_be_us(name: str) -> bool:
    folded = skeleton(name).casefold()
    squashed = "".join(c for c in folded if c.isalnum())
    return (folded.strip(" .:-_\"'“”") in RESERVED
            or any(text in squashed for text in CLAIM_TEXT)
            or bool(set(re.findall(r"\w+", folded)) & CLAIM_WORDS))


def client_actor(name: str | None) -> str:
    """The change log's actor for an app: "mcp:" and its name as the app gave it, made
    safe to show (no control characters, bounded), and never the person's or the
    assistant's name."""
    clean = "".join(c for c in (name or "") if c.isprintable()).strip()[:NAME_LIMIT]
    if not clean:
        return APPS_ACTOR + "unknown app"
    if _claims_to_be_us(clean):
        return APPS_ACTOR + CLAIM.format(name=clean)
    return APPS_ACTOR + clean


def command_line(pid: int) -> str | None:
    """A process's command line, bounded, or None where the system does not show it."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    words = [w.decode("utf-8", "replace") for w in raw.split(b"\0") if w]
    text = " ".join(words)
    return text[:COMMAND_LIMIT] + ("…" if len(text) > COMMAND_LIMIT else "") if text else None


def stdio_via() -> str:
    """How a stdio server was reached: the program that started it."""
    parent = os.getppid()
    command = command_line(parent)
    return f"stdio, started by {command} (pid {parent})" if command else \
        f"stdio, started by process {parent}"


def _socket_inode(port: int, server_port: int) -> str | None:
    """The inode of the loopback TCP socket whose local port is `port` and whose peer
    is `server_port`: the client's end of a connection to this server."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                local, remote, inode = fields[1], fields[2], fields[9]
                if int(local.rsplit(":", 1)[1], 16) == port and \
                        int(remote.rsplit(":", 1)[1], 16) == server_port:
                    return inode
    return None


def _owner(inode: str) -> int | None:
    """The process holding socket `inode` (only the person's own processes are visible,
    which are the ones that matter: apps run as the person)."""
    wanted = f"socket:[{inode}]"
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            for fd in (entry / "fd").iterdir():
                with contextlib.suppress(OSError):
                    if os.readlink(fd) == wanted:
                        return int(entry.name)
    return None


def http_via(client: tuple[str, int] | None, server_port: int | None) -> str:
    """How an HTTP client reached the memory: the local program on the connection's other
    end when it can be found, else the connection's address."""
    if not client:
        return "HTTP"
    host, port = client[0], int(client[1])
    pid = None
    if server_port and Path("/proc/net/tcp").exists():
        inode = _socket_inode(port, server_port)
        pid = _owner(inode) if inode and inode != "0" else None
    command = command_line(pid) if pid else None
    if command:
        return f"HTTP from {command} (pid {pid})"
    return f"HTTP from {host}:{port}"
