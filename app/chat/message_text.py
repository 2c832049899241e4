"""Selectable text over one painted message: the chat is painted by a delegate (2,000
messages cost no widgets), and the message under the mouse, or the one Enter opens, gets
this read-only text view on top of its body, with the same document, so any part of it
can be selected with the mouse or the keyboard and copied."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QMimeData, QPoint, QRect, Qt
from PySide6.QtGui import QGuiApplication, QPalette, QTextDocument
from PySide6.QtWidgets import QFrame, QTextBrowser, QWidget

from app.looks.text_marks import plain
from core.i18n import tr


class MessageText(QTextBrowser):
    def __init__(self, document: QTextDocument, copies: list[tuple[QRect, str]],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messageText")
        self.setAccessibleName(tr("Message text"))
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setOpenExternalLinks(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction
                                     | Qt.TextInteractionFlag.TextSelectableByKeyboard)
        palette = self.palette()
        palette.setColor(QPalette.ColorRole.Base, Qt.GlobalColor.transparent)
        self.setPalette(palette)
        self.viewport().setAutoFillBackground(False)
        self.setContentsMargins(0, 0, 0, 0)
        self.setViewportMargins(0, 0, 0, 0)
        copy = document.clone(self)
        copy.setDocumentMargin(0)
        self.setDocument(copy)
        self.copies = copies  # (rect relative to this widget, code) for Copy labels
        self.code_copied: Callable[[str], None] | None = None
        self.menu_requested: Callable[[QPoint, str], None] | None = None

    def mousePressEvent(self, event) -> None:
        for rect, code in self.copies:
            if rect.contains(event.position().toPoint()):
                QGuiApplication.clipboard().setText(code)
                if self.code_copied:
                    self.code_copied(code)
                return
        super().mousePressEvent(event)

    def createMimeDataFromSelection(self) -> QMimeData:
        """The selection as written: without the marks added for the layout."""
        data = super().createMimeDataFromSelection()
        data.setText(plain(data.text()))
        if data.hasHtml():
            data.setHtml(plain(data.html()))
        return data

    def wheelEvent(self, event) -> None:
        event.ignore()  # the conversation scrolls, not this one message

    def contextMenuEvent(self, event) -> None:
        if self.menu_requested:
            self.menu_requested(event.globalPos(), plain(self.textCursor().selectedText()
                                                         .replace("\u2029", "\n")))
