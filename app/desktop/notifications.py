"""Desktop notifications through the freedesktop notifications service (the one GNOME,
KDE, dunst, mako and xfce4-notifyd all serve), for a long job that ended while the person
looked elsewhere.

The call goes over D-Bus with `jeepney` (pure Python, already there for the keychain) on a
worker thread: a notification daemon that hangs must not stall the window. Where there is
no such service (Windows, macOS, a bare X session), the tray's balloon says it instead, and
where there is no tray either, nothing is shown: the window itself has the news."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

log = logging.getLogger(__name__)
APP_NAME = "TrulyMEM"
TIMEOUT_S = 5.0
BODY_CHARS = 300  # a notification is a glance: the reply itself is in the window


def shortened(text: str, most: int = BODY_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= most else text[:most - 1].rstrip() + "…"


def send_freedesktop(summary: str, body: str, icon: str) -> int:
    """Show one notification; its id from the service. Raises when no service answers."""
    from jeepney import DBusAddress, new_method_call  # noqa: PLC0415  (Linux only)
    from jeepney.io.blocking import open_dbus_connection  # noqa: PLC0415

    service = DBusAddress("/org/freedesktop/Notifications",
                          bus_name="org.freedesktop.Notifications",
                          interface="org.freedesktop.Notifications")
    # Notify(app_name, replaces_id, app_icon, summary, body, actions, hints, expire_timeout)
    call = new_method_call(service, "Notify", "susssasa{sv}i",
                           (APP_NAME, 0, icon, summary, body, [], {}, -1))
    with open_dbus_connection(bus="SESSION") as connection:
        reply = connection.send_and_get_reply(call, timeout=TIMEOUT_S)
    return int(reply.body[0])


class Notifier:
    """Sends notifications one at a time off the GUI thread; `fallback` (the tray's
    balloon) takes those the desktop's service cannot."""

    def __init__(self, icon: Path, fallback: Callable[[str, str], bool] | None = None) -> None:
        self.icon = str(icon)
        self.fallback = fallback
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="notify")
        self.service_missing = not sys.platform.startswith("linux")
        self.sent: list[tuple[str, str]] = []  # what was shown, and how, for the curious

    def notify(self, summary: str, body: str) -> Future[str]:
        """Show `summary` and `body`; the future answers how ("desktop", "tray", "none")."""
        body = shortened(body)
        return self.pool.submit(self._send, summary, body)

    def _send(self, summary: str, body: str) -> str:
        if not self.service_missing:
            try:
                send_freedesktop(summary, body, self.icon)
                self.sent.append(("desktop", summary))
                return "desktop"
            except Exception as error:  # no bus, no daemon, a timeout: all mean "not here"
                log.info("no desktop notification service: %s", error)
                self.service_missing = True  # not asked again in this run
        if self.fallback is not None and self.fallback(summary, body):
            self.sent.append(("tray", summary))
            return "tray"
        return "none"

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
