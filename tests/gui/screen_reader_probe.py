"""Reads the running window as Orca does, over the AT-SPI bus, with pyatspi (the system's
python3-pyatspi; run by /usr/bin/python3, not the project's interpreter).

It finds the application named on the command line, walks what a screen reader sees,
writes a message into the field named "Message", presses the button named "Send message"
through AT-SPI actions, and listens for the announcements the window makes. It prints one
JSON object: the names of what it can act on, the unnamed ones, and what was announced."""

from __future__ import annotations

import json
import sys
import time

import pyatspi
from gi.repository import GLib

APP, MESSAGE, WAIT_S = sys.argv[1], sys.argv[2], float(sys.argv[3])
ACTS_ON = {pyatspi.ROLE_PUSH_BUTTON, pyatspi.ROLE_TOGGLE_BUTTON, pyatspi.ROLE_CHECK_BOX,
           pyatspi.ROLE_RADIO_BUTTON, pyatspi.ROLE_COMBO_BOX, pyatspi.ROLE_ENTRY,
           pyatspi.ROLE_TEXT, pyatspi.ROLE_SPIN_BUTTON, pyatspi.ROLE_PAGE_TAB,
           pyatspi.ROLE_LIST, pyatspi.ROLE_TABLE, pyatspi.ROLE_TREE_TABLE,
           pyatspi.ROLE_TREE, pyatspi.ROLE_SLIDER, pyatspi.ROLE_LINK}
found: dict = {"names": [], "unnamed": [], "announced": [], "sent": False}


def application():
    desktop = pyatspi.Registry.getDesktop(0)
    for index in range(desktop.childCount):
        app = desktop.getChildAtIndex(index)
        if app is not None and app.name == APP:
            return app
    return None


def walk(node, depth: int = 0) -> None:
    if node is None or depth > 40:
        return
    states = node.getState()
    if not states.contains(pyatspi.STATE_SHOWING):
        return
    role = node.getRole()
    if role in ACTS_ON:
        (found["names"] if node.name.strip() else found["unnamed"]).append(
            f"{node.getRoleName()}: {node.name}")
    for index in range(min(node.childCount, 200)):
        walk(node.getChildAtIndex(index), depth + 1)


def named(node, role: int, name: str, depth: int = 0):
    if node is None or depth > 40:
        return None
    if node.getRole() == role and node.name == name:
        return node
    for index in range(min(node.childCount, 200)):
        hit = named(node.getChildAtIndex(index), role, name, depth + 1)
        if hit is not None:
            return hit
    return None


def heard(event) -> None:
    found["announced"].append(str(event.any_data))


def send(app) -> None:
    field = named(app, pyatspi.ROLE_TEXT, "Message") or named(app, pyatspi.ROLE_ENTRY,
                                                              "Message")
    button = named(app, pyatspi.ROLE_PUSH_BUTTON, "Send message")
    if field is None or button is None:
        return
    field.queryEditableText().setTextContents(MESSAGE)
    action = button.queryAction()
    for index in range(action.nActions):
        if action.getName(index) in ("Press", "press", "click"):
            action.doAction(index)
            found["sent"] = True
            return
    action.doAction(0)
    found["sent"] = True


def main() -> None:
    deadline = time.monotonic() + WAIT_S
    app = None
    while app is None and time.monotonic() < deadline:
        app = application()
        if app is None:
            time.sleep(0.2)
    if app is None:
        print(json.dumps({"error": f"no application named {APP} on the bus"}))
        return
    time.sleep(1.0)  # the window's first layout
    walk(app)
    pyatspi.Registry.registerEventListener(heard, "object:announcement")
    GLib.timeout_add(200, lambda: (send(app), False)[1])

    def done() -> bool:
        if any("replied" in a for a in found["announced"]) or time.monotonic() > deadline:
            pyatspi.Registry.stop()
            return False
        return True

    GLib.timeout_add(100, done)
    pyatspi.Registry.start()
    print(json.dumps(found, ensure_ascii=False))


main()
