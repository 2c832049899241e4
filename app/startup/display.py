"""Whether the window has a display to open on, asked before Qt is loaded.

Without one, Qt's xcb plugin aborts the process (rc 134, a core dump) with a message about
libxcb-cursor0 even when it is installed. `no_display` says it in one line instead and
points to the terminal chat. It imports no Qt and answers in a few milliseconds: a local X
server is one socket connect, a remote one a connect with a short timeout.
"""

from __future__ import annotations

import os
import re
import socket
import sys
from collections.abc import Mapping

from core.i18n import tr

# [protocol/]host:display[.screen]; host empty or "unix" for the local socket, or a
# socket's path (launchd's); "host:0" is TCP port 6000, IPv6 hosts written in brackets
_X_DISPLAY = re.compile(r"^(?:(?P<protocol>tcp|inet6?|unix|local)/)?(?P<host>.*?)"
                        r":(?P<number>\d+)(?:\.\d+)?$")
TCP_TIMEOUT = 1.0  # seconds: an X server on the network answers well within it


def _reaches(family: int, address: str | tuple[str, int], timeout: float) -> bool:
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(address)
    except OSError:
        return False
    return True


def x_server_reachable(display: str, timeout: float = TCP_TIMEOUT) -> bool | None:
    """True or False when `display` names an X server that does or does not answer a
    connect; None when the name is one this check does not know (Qt then decides)."""
    found = _X_DISPLAY.match(display)
    if found is None:  # a name without ":number" is no display Xlib opens either
        return None if ":" in display else False
    host, number = found["host"], int(found["number"])
    if host.startswith("/"):
        return _reaches(socket.AF_UNIX, f"{host}:{number}", timeout)
    if host in ("", "unix") or found["protocol"] in ("unix", "local"):
        path = f"/tmp/.X11-unix/X{number}"
        # Xlib tries the abstract socket first (a container may share only that), then the file
        return _reaches(socket.AF_UNIX, "\0" + path, timeout) or _reaches(
            socket.AF_UNIX, path, timeout)
    try:
        return _reaches(socket.AF_INET6 if ":" in host else socket.AF_INET,
                        (host.strip("[]"), 6000 + number), timeout)
    except (OSError, UnicodeError):
        return False


def no_display(env: Mapping[str, str] | None = None, platform: str = sys.platform) -> str | None:
    """The one line to print when the window cannot open on this machine, or None."""
    env = os.environ if env is None else env
    if not platform.startswith("linux"):
        return None
    chosen = env.get("QT_QPA_PLATFORM", "").strip()
    if chosen and not chosen.startswith("xcb"):
        return None  # offscreen, vnc, wayland, eglfs…: Qt is told where to draw
    if env.get("WAYLAND_DISPLAY") and not chosen:
        return None
    display = env.get("DISPLAY", "")
    if not display:
        return tr("trulymem: no display to open the window on (DISPLAY and WAYLAND_DISPLAY "
                  "are unset); chat in the terminal with `trulymem --cli`")
    if x_server_reachable(display) is False:
        return tr("trulymem: the display {display} does not answer, so the window cannot "
                  "open; chat in the terminal with `trulymem --cli`").format(display=display)
    return None
