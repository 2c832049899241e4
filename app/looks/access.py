"""What a screen reader hears beyond the widgets' own names: the parts Qt makes itself
(a search field's clear button, a toolbar's overflow arrow, a drop-down's list), named once
for the whole application, and announcements of what happened where the person is not
looking (a finished reply, an error, a job's end).

Announcements go out as Qt's accessibility announcement events, which AT-SPI carries to
Orca and UI Automation to NVDA; `heard` keeps the last few so a test can read what was
said without a screen reader running."""

from __future__ import annotations

from collections import deque

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QAccessible, QAccessibleAnnouncementEvent
from PySide6.QtWidgets import QComboBox, QLineEdit, QToolBar, QToolButton, QWidget

from core.i18n import tr

heard: deque[str] = deque(maxlen=50)


def announce(widget: QWidget, text: str, urgent: bool = False) -> None:
    """Say `text` to a screen reader, from `widget` (whose window it belongs to): politely
    after what it is reading, or at once when `urgent` (an error)."""
    text = " ".join(text.split())
    if not text:
        return
    heard.append(text)
    event = QAccessibleAnnouncementEvent(widget, text)
    event.setPoliteness(QAccessible.AnnouncementPoliteness.Assertive if urgent
                        else QAccessible.AnnouncementPoliteness.Polite)
    QAccessible.updateAccessibility(event)


class QtPartsNamer(QObject):
    """Installed on the application: when a widget is first polished (before it is shown),
    the parts Qt added to it get names in the person's language."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Polish:
            name_parts(watched)
        return False


def name_parts(widget: QObject) -> None:
    if isinstance(widget, QLineEdit):
        for button in widget.findChildren(QToolButton):
            if not button.accessibleName():
                button.setAccessibleName(tr("Clear"))
    elif isinstance(widget, QToolBar):
        for button in widget.findChildren(QToolButton, "qt_toolbar_ext_button"):
            button.setAccessibleName(tr("More commands"))
    elif isinstance(widget, QComboBox) and not widget.view().accessibleName():
        widget.view().setAccessibleName(widget.accessibleName() or tr("Choices"))
