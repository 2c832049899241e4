"""A shortcut from anywhere through the desktop's global-shortcuts portal
(`org.freedesktop.portal.GlobalShortcuts`, offered by KDE Plasma and recent GNOME): the
desktop asks the person for the key in its own dialog, remembers it, and tells the app when
it is pressed, on Wayland too, where no app may grab a key itself.

Where there is no such portal, a key bound to `trulymem --toggle` in the desktop's keyboard
settings does the same (the README says how). The portal's session lives as long as the
D-Bus connection, so one connection is kept open on a daemon thread that waits for the
`Activated` signal. Plain Python (`jeepney`), no Qt: the window turns the callback into a
queued Qt signal."""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)
PORTAL = "org.freedesktop.portal.Desktop"
PATH = "/org/freedesktop/portal/desktop"
INTERFACE = "org.freedesktop.portal.GlobalShortcuts"
SHORTCUT_ID = "toggle-window"
PREFERRED_TRIGGER = "CTRL+ALT+SPACE"  # a suggestion: the desktop's dialog decides
TIMEOUT_S = 5.0
CHOOSING_S = 300.0  # the person picks the key in the desktop's dialog: give them time


class PortalError(Exception):
    """No portal, or it refused or did not answer; the words say which."""


def _address(path: str = PATH, interface: str = INTERFACE) -> Any:
    from jeepney import DBusAddress  # noqa: PLC0415  (Linux only)

    return DBusAddress(path, bus_name=PORTAL, interface=interface)


def available() -> bool:
    """True when the session's portal offers global shortcuts."""
    try:
        from jeepney import Properties  # noqa: PLC0415
        from jeepney.io.blocking import open_dbus_connection  # noqa: PLC0415

        with open_dbus_connection(bus="SESSION") as connection:
            reply = connection.send_and_get_reply(Properties(_address()).get("version"),
                                                  timeout=TIMEOUT_S)
        return reply.header.message_type.name == "method_return"
    except Exception as error:  # no bus, no portal, no such interface
        log.info("no global-shortcuts portal: %s", error)
        return False


class ShortcutSession:
    """Binds the toggle shortcut and calls `pressed` (on its own thread) each time the
    desktop says it was pressed."""

    def __init__(self, description: str, pressed: Callable[[], None]) -> None:
        self.description = description
        self.pressed = pressed
        self.connection: Any = None
        self.session: str | None = None
        self.trigger = ""  # how the desktop describes the key chosen

    def bind(self) -> str:
        """Open the session and bind the shortcut (the desktop may ask the person); answers
        the trigger's description. Raises PortalError."""
        from jeepney import MatchRule, message_bus, new_method_call  # noqa: PLC0415
        from jeepney.io.blocking import Proxy, open_dbus_connection  # noqa: PLC0415

        try:
            self.connection = open_dbus_connection(bus="SESSION")
            Proxy(message_bus, self.connection).AddMatch(MatchRule(
                type="signal", interface=INTERFACE, member="Activated", path=PATH))
            token = "trulymem_" + secrets.token_hex(6)
            results = self._request(new_method_call(
                _address(), "CreateSession", "a{sv}",
                ({"handle_token": ("s", token), "session_handle_token": ("s", token)},)),
                token, TIMEOUT_S)
            self.session = results["session_handle"][1]
            token = "trulymem_" + secrets.token_hex(6)
            shortcut = (SHORTCUT_ID, {"description": ("s", self.description),
                                      "preferred_trigger": ("s", PREFERRED_TRIGGER)})
            results = self._request(new_method_call(
                _address(), "BindShortcuts", "oa(sa{sv})sa{sv}",
                (self.session, [shortcut], "", {"handle_token": ("s", token)})),
                token, CHOOSING_S)
        except PortalError:
            self.close()
            raise
        except Exception as error:
            self.close()
            raise PortalError(str(error) or type(error).__name__) from error
        bound = dict(results.get("shortcuts", ("", []))[1])
        trigger = bound.get(SHORTCUT_ID, {}).get("trigger_description", ("s", ""))[1]
        self.trigger = trigger
        threading.Thread(target=self._listen, name="shortcut-portal", daemon=True).start()
        return trigger

    def _request(self, call: Any, token: str, timeout: float) -> dict[str, Any]:
        """Send a portal call and wait for its Request's Response (whose path is known
        before the call, so no answer can come before the wait)."""
        from jeepney import MatchRule, message_bus  # noqa: PLC0415
        from jeepney.io.blocking import Proxy  # noqa: PLC0415

        sender = self.connection.unique_name.lstrip(":").replace(".", "_")
        path = f"{PATH}/request/{sender}/{token}"
        rule = MatchRule(type="signal", interface="org.freedesktop.portal.Request",
                         member="Response", path=path)
        Proxy(message_bus, self.connection).AddMatch(rule)
        with self.connection.filter(rule) as responses:
            reply = self.connection.send_and_get_reply(call, timeout=TIMEOUT_S)
            if reply.header.message_type.name != "method_return":
                raise PortalError(str(reply.body[0]) if reply.body else "refused")
            response = self.connection.recv_until_filtered(responses, timeout=timeout)
        code, results = response.body
        if code != 0:
            raise PortalError("cancelled" if code == 1 else "refused")
        return results

    def _listen(self) -> None:
        from jeepney import MatchRule  # noqa: PLC0415

        rule = MatchRule(type="signal", interface=INTERFACE, member="Activated", path=PATH)
        try:
            with self.connection.filter(rule) as activations:
                while self.connection is not None:
                    signal = self.connection.recv_until_filtered(activations)
                    session, shortcut = signal.body[0], signal.body[1]
                    if session == self.session and shortcut == SHORTCUT_ID:
                        self.pressed()
        except Exception as error:  # the connection closed: the session ended
            log.info("global shortcut session ended: %s", error)

    def close(self) -> None:
        connection, self.connection = self.connection, None
        if connection is not None:
            connection.close()
