"""Starts the desktop app: QApplication, the backend thread, the main window."""

from __future__ import annotations

import contextlib
import gc
import signal
import socket
import sys
from pathlib import Path

from PySide6.QtCore import QLibraryInfo, QSocketNotifier, Qt, QTranslator
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QPalette
from PySide6.QtWidgets import QApplication, QDialog

from app.backend_host import BackendHost
from app.desktop import summon
from app.desktop.single_instance import SingleInstance
from app.looks.access import QtPartsNamer
from app.looks.contrast import readable
from app.looks.sizes import interface_font
from app.main_window import MainWindow
from core import i18n
from resources import resource_path

SCHEMES = {"light": Qt.ColorScheme.Light, "dark": Qt.ColorScheme.Dark}


def make_application(argv: list[str] | None = None, scheme: str = "system") -> QApplication:
    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv[:1])
    app.setApplicationName("TrulyMEM")
    app.setOrganizationName("TrulyMEM")
    app.setDesktopFileName("trulymem")
    app.setWindowIcon(QIcon(str(resource_path("trulymem.svg"))))
    if scheme in SCHEMES:
        apply_color_scheme(app, SCHEMES[scheme])
    app.setPalette(readable(app.palette()))
    # Emoji come from Qt's emoji fallback, in colour at text size. Naming the emoji font
    # among the interface's families made Qt settle on it ("Sans Serif" is only an alias):
    # every glyph 2,550 px wide and a window 32,767 px wide.
    font = interface_font(app.font())
    if font != app.font():
        app.setFont(font)
    if app.property("partsNamed") is None:  # once, however often this is called
        app.setProperty("partsNamed", True)
        _NAMERS.append(QtPartsNamer(app))
        app.installEventFilter(_NAMERS[-1])
    return app


_NAMERS: list[QtPartsNamer] = []  # held here: an event filter Python let go of does nothing


def apply_color_scheme(app: QApplication, scheme: Qt.ColorScheme) -> None:
    """Ask the platform for a light or dark look; where it cannot switch (no desktop theme,
    as under Xvfb), derive the palette from the style's own by flipping lightness."""
    QGuiApplication.styleHints().setColorScheme(scheme)
    app.processEvents()
    if QGuiApplication.styleHints().colorScheme() == scheme:
        return
    palette = app.style().standardPalette()
    if scheme == Qt.ColorScheme.Dark:
        palette = flipped_lightness(palette)
    app.setPalette(palette)


def flipped_lightness(palette: QPalette) -> QPalette:
    """The same hues with light and dark swapped: a dark palette made from a light one.
    Links keep a readable lightness instead of being inverted, the selection is a deep
    shade of its hue, and text drawn on it keeps its own."""
    accents = {QPalette.ColorRole.Highlight, QPalette.ColorRole.Link,
               QPalette.ColorRole.LinkVisited}
    dark = QPalette(palette)
    for group in (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive,
                  QPalette.ColorGroup.Disabled):
        for role in QPalette.ColorRole:
            if role == QPalette.ColorRole.NColorRoles:
                continue
            color = palette.color(group, role)
            hue, saturation, lightness, alpha = color.getHslF()
            if role == QPalette.ColorRole.Highlight:
                lightness = 0.36  # white text on it reads at about 5:1 (0.6 gave 2.6:1)
            elif role in accents:
                lightness = max(lightness, 0.6)
            elif role != QPalette.ColorRole.HighlightedText:
                lightness = 0.08 + 0.84 * (1 - lightness)
            dark.setColor(group, role, QColor.fromHslF(max(hue, 0), saturation, lightness,
                                                       alpha))
    return dark


def open_window(home: Path) -> MainWindow:
    """The window with its backend thread started; the caller shows it.

    Once the history is on screen, everything alive so far (Qt wrappers, a long history's
    messages) is moved out of the garbage collector's reach with `gc.freeze()`: a full
    collection over them took 60 ms, a visible stall, and none of it is garbage."""
    home.mkdir(parents=True, exist_ok=True)
    host = BackendHost(home)
    window = MainWindow(host, home)
    host.setParent(window)
    window.usable.connect(gc.freeze)
    host.start()
    return window


_qt_words: QTranslator | None = None  # Qt's own dialogs' words, in the chosen language


def use_language(choice: str | None) -> str:
    """Our words and Qt's own (file dialogs, context menus, standard buttons) in `choice`
    ("system" follows the locale); answers the language. Set before the window is made:
    a language chosen in the settings applies at the next start."""
    global _qt_words  # noqa: PLW0603  (one language per application)
    chosen = i18n.set_language(choice)
    app = QApplication.instance()
    if app is None:
        return chosen
    if _qt_words is not None:
        app.removeTranslator(_qt_words)
        _qt_words = None
    if chosen != i18n.ENGLISH:
        words = QTranslator(app)
        folder = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
        if words.load(f"qtbase_{chosen}", folder):
            app.installTranslator(words)
            _qt_words = words
    return chosen


def quit_on_signals(window: MainWindow) -> None:
    """SIGTERM (a session logout, `kill`) and SIGINT (Ctrl+C in a terminal) quit as the
    window's Quit does: dialogs closed, window state saved, backend stopped, last backup.

    Python runs a signal handler only between bytecodes, and Qt's event loop runs in C++,
    so the signal is written to a socket (`set_wakeup_fd`) that Qt watches."""
    reader, writer = socket.socketpair()
    for end in (reader, writer):
        end.setblocking(False)
    signal.set_wakeup_fd(writer.fileno())
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, lambda *_args: None)  # the wakeup byte does the work
    notifier = QSocketNotifier(reader.fileno(), QSocketNotifier.Type.Read, window)

    def quit_now() -> None:
        with contextlib.suppress(OSError):
            reader.recv(64)
        for widget in QApplication.topLevelWidgets():
            if isinstance(widget, QDialog) and widget.isVisible():
                widget.reject()
        window.desktop.quit()  # quits even when closing would keep it in the tray
        QApplication.quit()

    notifier.activated.connect(quit_now)
    window._signal_sockets = (reader, writer, notifier)  # kept alive with the window


def run(home: Path, scheme: str = "system", *, exit_when_ready: bool = False,
        say_when_ready: bool = False, wish: dict[str, str] | None = None) -> int:
    """`exit_when_ready` prints "ready" and quits once the window is usable (history shown):
    benchmarks time the start with it. `say_when_ready` prints it and stays (tests then
    stop the program as a desktop would). `wish` is what `trulymem --ask` asked for."""
    app = make_application(scheme=scheme)
    home.mkdir(parents=True, exist_ok=True)
    instance = SingleInstance(home)
    if not instance.claim():
        # another window holds this memory and is still starting: it gets the wish
        return 0 if summon.send(home, wish or summon.wish("show"), wait=20) else 1
    # `trulymem` chose the language from this folder's config before parsing its options;
    # here Qt's own words follow it.
    use_language(i18n.language())
    window = open_window(home)
    instance.wished.connect(window.desktop.wished)
    if wish and wish.get("action") == "ask":
        window.desktop.put_in_input(wish.get("text") or "")
    if exit_when_ready:
        window.usable.connect(lambda: (print("ready", flush=True), window.desktop.quit()))
    elif say_when_ready:
        window.usable.connect(lambda: print("ready", flush=True))
    quit_on_signals(window)
    window.show()
    try:
        return app.exec()
    finally:
        instance.close()
