"""The global-shortcuts portal client against a portal on a real session bus (dbus-daemon):
Debian's own portals do not offer global shortcuts yet, so the portal here is a small one
that speaks the documented interface (CreateSession, BindShortcuts and their Request
Responses, the Activated signal), as KDE's and GNOME's do."""

from __future__ import annotations

import shutil
import subprocess
import threading

import pytest

pytest.importorskip("jeepney")
from jeepney import DBusAddress, MessageType, new_error, new_method_return, new_signal
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import Proxy, open_dbus_connection
from jeepney.low_level import HeaderFields

from app.desktop import shortcut_portal

pytestmark = pytest.mark.skipif(not shutil.which("dbus-daemon"), reason="needs dbus-daemon")
PATH = shortcut_portal.PATH


class Portal:
    """Answers like the desktop's portal: every shortcut is bound to Ctrl+Alt+Space, or,
    `refusing`, the person cancels the desktop's dialog."""

    def __init__(self, address: str, refusing: bool = False) -> None:
        self.connection = open_dbus_connection(address)
        Proxy(message_bus, self.connection).RequestName(shortcut_portal.PORTAL)
        self.refusing = refusing
        self.sessions: list[tuple[str, str]] = []  # (client, session handle)
        self.bound: list[dict] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _respond(self, message, path: str, code: int, results: dict) -> None:
        self.connection.send(new_method_return(message, "o", (path,)))
        signal = new_signal(DBusAddress(path, interface="org.freedesktop.portal.Request"),
                            "Response", "ua{sv}", (code, results))
        signal.header.fields[HeaderFields.destination] = message.header.fields[
            HeaderFields.sender]  # to the caller only, as a portal answers
        self.connection.send(signal)

    def _serve(self) -> None:
        while True:
            try:
                message = self.connection.receive()
            except Exception:
                return
            if message.header.message_type != MessageType.method_call:
                continue
            member = message.header.fields.get(HeaderFields.member)
            sender = message.header.fields[HeaderFields.sender].lstrip(":").replace(".", "_")
            if member == "Get":
                self.connection.send(new_method_return(message, "v", (("u", 1),)))
            elif member == "CreateSession":
                options = message.body[0]
                session = f"{PATH}/session/{sender}/{options['session_handle_token'][1]}"
                self.sessions.append((message.header.fields[HeaderFields.sender], session))
                self._respond(message, f"{PATH}/request/{sender}/{options['handle_token'][1]}",
                              0, {"session_handle": ("s", session)})
            elif member == "BindShortcuts":
                session, shortcuts, _parent, options = message.body
                self.bound.extend(shortcuts)
                path = f"{PATH}/request/{sender}/{options['handle_token'][1]}"
                if self.refusing:
                    self._respond(message, path, 1, {})
                    continue
                described = [(name, {"description": info["description"],
                                     "trigger_description": ("s", "Ctrl+Alt+Space")})
                             for name, info in shortcuts]
                self._respond(message, path, 0, {"shortcuts": ("a(sa{sv})", described)})
            else:
                self.connection.send(new_error(message, "org.freedesktop.DBus.Error."
                                               "UnknownMethod", "s", ("no such method",)))

    def press(self, shortcut: str) -> None:
        _client, session = self.sessions[-1]
        signal = new_signal(DBusAddress(PATH, interface=shortcut_portal.INTERFACE),
                            "Activated", "osta{sv}", (session, shortcut, 0, {}))
        self.connection.send(signal)

    def close(self) -> None:
        self.connection.close()


@pytest.fixture
def bus(monkeypatch):
    daemon = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"],
                              stdout=subprocess.PIPE, text=True)
    address = daemon.stdout.readline().strip()
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
    yield address
    daemon.terminate()
    daemon.wait(10)


def test_without_a_portal_the_shortcut_is_not_offered(bus):
    assert shortcut_portal.available() is False


def test_the_shortcut_is_bound_and_each_press_reaches_the_window(bus):
    portal = Portal(bus)
    presses = threading.Semaphore(0)
    session = shortcut_portal.ShortcutSession("Show or hide TrulyMEM", presses.release)
    try:
        assert shortcut_portal.available() is True
        assert session.bind() == "Ctrl+Alt+Space"
        [(name, options)] = portal.bound
        assert name == shortcut_portal.SHORTCUT_ID
        assert options["description"] == ("s", "Show or hide TrulyMEM")
        portal.press("something-else")  # another app's shortcut is not ours
        portal.press(shortcut_portal.SHORTCUT_ID)
        portal.press(shortcut_portal.SHORTCUT_ID)
        assert presses.acquire(timeout=10) and presses.acquire(timeout=10)
        assert not presses.acquire(timeout=0.5)
    finally:
        session.close()
        portal.close()


def test_a_cancelled_dialog_is_a_clear_refusal(bus):
    portal = Portal(bus, refusing=True)
    session = shortcut_portal.ShortcutSession("Show or hide TrulyMEM", lambda: None)
    try:
        with pytest.raises(shortcut_portal.PortalError, match="cancelled"):
            session.bind()
        assert session.connection is None
    finally:
        portal.close()
