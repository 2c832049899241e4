"""A shortcut from anywhere: the commands to bind in the desktop's keyboard settings, how
on GNOME, KDE and openbox, and, where the desktop offers the global-shortcuts portal, one
button that lets the desktop set the key itself."""

from __future__ import annotations

import shlex
import threading
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QGridLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.desktop import shortcut_portal
from app.looks.sizes import chars
from core.desktop_files import home_arguments, program_command
from core.i18n import tr


def commands(home: Path) -> dict[str, str]:
    """The two commands, as a shell would take them, for this installation and folder."""
    start = [*program_command(), *home_arguments(home)]
    return {"toggle": shlex.join([*start, "--toggle"]),
            "ask": shlex.join([*start, "--ask", ""]).removesuffix("''") + '"…"'}


def in_background(work: Callable[[], object], done: Callable[[object], None],
                  parent: QObject) -> None:
    """Run `work` on a thread (a D-Bus call may wait on the desktop) and hand its result,
    or the exception, to `done` on the GUI thread."""
    relay = _Relay(parent)
    relay.finished.connect(done)

    def run() -> None:
        try:
            result = work()
        except Exception as error:  # handed over whole: done() says it to the person
            result = error
        relay.finished.emit(result)

    threading.Thread(target=run, daemon=True).start()


def unbroken(text: str) -> str:
    """`text` whose commands and paths never break at a hyphen or a slash (a line that
    ends in "openbox --" reads as another command): a word joiner after each, and a
    no-break space before an option. For reading only: these words are not copied."""
    joiner = "\u2060"
    return (text.replace(" --", "\u00a0--").replace("-", "-" + joiner)
            .replace("/", "/" + joiner))


class _Relay(QObject):
    finished = Signal(object)


class GlobalShortcutDialog(QDialog):
    bound = Signal(object)  # the portal session, bound: the window keeps it

    def __init__(self, home: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("globalShortcutDialog")
        self.setWindowTitle(tr("Shortcut from anywhere"))
        layout = QVBoxLayout(self)
        intro = QLabel(tr("Bind a key to one of these commands in your desktop's keyboard "
                          "settings. The first shows TrulyMEM, or hides it when it is in "
                          "front; the second opens it with your words in the message box."))
        intro.setWordWrap(True)
        layout.addWidget(intro)
        grid = QGridLayout()
        self.fields: dict[str, QLineEdit] = {}
        for row, (name, command) in enumerate(commands(home).items()):
            field = QLineEdit(command)
            field.setReadOnly(True)
            field.setCursorPosition(0)
            field.setMinimumWidth(min(self.fontMetrics().horizontalAdvance(command)
                                      + 2 * self.fontMetrics().height(),
                                      chars(self.fontMetrics(), 110)))
            field.setObjectName(f"command_{name}")
            field.setAccessibleName(tr("Command"))
            copy = QPushButton(tr("Copy"))
            copy.clicked.connect(lambda _=False, f=field: self._copy(f))
            grid.addWidget(field, row, 0)
            grid.addWidget(copy, row, 1)
            self.fields[name] = field
        layout.addLayout(grid)
        how = QLabel(unbroken(tr(
            "GNOME: Settings › Keyboard › View and Customize Shortcuts › Custom Shortcuts.\n"
            "KDE Plasma: System Settings › Shortcuts › Add New › Command or Script.\n"
            "openbox: a <keybind> with an Execute action in ~/.config/openbox/rc.xml, then "
            "openbox --reconfigure.")))
        how.setWordWrap(True)
        layout.addWidget(how)
        self.portal_button = QPushButton(tr("Let the desktop set the key…"))
        self.portal_button.setObjectName("portalShortcut")
        self.portal_button.setVisible(False)
        self.portal_button.clicked.connect(self._bind_with_portal)
        self.portal_note = QLabel(tr("Looking for the desktop's shortcut service…"))
        self.portal_note.setWordWrap(True)
        layout.addWidget(self.portal_button)
        layout.addWidget(self.portal_note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.setMinimumWidth(chars(self.fontMetrics(), 72))
        in_background(shortcut_portal.available, self._portal_found, self)

    def _copy(self, field: QLineEdit) -> None:
        QGuiApplication.clipboard().setText(field.text())
        self.portal_note.setText(tr("Copied: {command}", command=field.text()))

    def _portal_found(self, found: object) -> None:
        self.portal_button.setVisible(found is True)
        self.portal_note.setText(
            tr("Your desktop can set a shortcut for TrulyMEM itself.") if found is True else
            tr("This desktop has no shortcut service for apps: use its keyboard settings."))

    def _bind_with_portal(self) -> None:
        self.portal_button.setEnabled(False)
        self.portal_note.setText(tr("Choose the key in your desktop's window…"))
        session = shortcut_portal.ShortcutSession(tr("Show or hide TrulyMEM"), lambda: None)
        in_background(session.bind, lambda result: self._portal_bound(session, result),
                      self)

    def _portal_bound(self, session: shortcut_portal.ShortcutSession, result: object) -> None:
        self.portal_button.setEnabled(True)
        if isinstance(result, Exception):
            self.portal_note.setText(tr("The desktop did not set a shortcut: {why}",
                                        why=str(result)))
            return
        self.portal_note.setText(tr("Set: {keys} shows or hides TrulyMEM.",
                                    keys=result or tr("the key you chose")))
        self.bound.emit(session)
