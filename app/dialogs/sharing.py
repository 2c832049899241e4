"""The settings' "Other apps" page: share the memory over MCP, and what to paste where.

Off by default. When on, it shows, for the app and the program chosen, the exact block to
paste into that app's settings (see `core.share.snippets`), with a Copy button; the
token for HTTP clients is made by the backend when sharing is first turned on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QSize
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.looks.column import column
from app.looks.notes import quiet
from core import i18n
from core.i18n import N_, tr
from core.share import snippets
from core.share.tokens import new_token

PROGRAM_NAMES = {"installed": N_("Installed (pip)"), "standalone": N_("Standalone build")}


class Snippet(QPlainTextEdit):
    """The block to paste: asks for six lines, makes do with three on a small screen."""

    def __init__(self) -> None:
        super().__init__()
        frame = 2 * self.frameWidth() + 8
        self.setMinimumHeight(3 * self.fontMetrics().lineSpacing() + frame)
        self._wanted = 6 * self.fontMetrics().lineSpacing() + frame

    def sizeHint(self) -> QSize:
        return QSize(super().sizeHint().width(), self._wanted)


class SharingPage(QWidget):
    def __init__(self, config: dict[str, Any], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sharingPage")
        self.home = Path(config["home"]) if config.get("home") else None
        self.saved_token = config.get("share_token", "")
        self.token = self.saved_token or new_token()  # saved with OK, if sharing is on
        self.port = int(config.get("share_port", 8765))
        self.share = QCheckBox(tr("S&hare memory with other apps"))
        self.share.setChecked(bool(config.get("share_memory")))
        self.share.setToolTip(tr("Apps that speak MCP (the Model Context Protocol) can "
                                 "recall, save and correct memories here"))
        intro = QLabel(tr("Apps that speak MCP (Claude Desktop, Cursor, Cherry Studio…) can "
                          "then recall, save and correct your memories. Their changes wait in "
                          "Review under their name, for you to keep or undo."))
        intro.setToolTip(tr("What other apps may delete is limited to a few memories per "
                            "session and per hour; only you can do more, here."))
        intro.setWordWrap(True)
        quiet(intro)
        self.read_only = QCheckBox(tr("&Read only: apps may recall, not change anything"))
        self.read_only.setChecked(bool(config.get("share_read_only")))
        self.app = QComboBox()
        self.app.setAccessibleName(tr("App to connect"))
        for app in snippets.APPS:
            self.app.addItem(i18n.tr(app), app)
        self.program = QComboBox()
        self.program.setAccessibleName(tr("How TrulyMEM is installed"))
        for key in snippets.PROGRAMS:
            self.program.addItem(i18n.tr(PROGRAM_NAMES[key]), key)
        if QGuiApplication.instance() is not None and snippets.command("standalone") != \
                snippets.STANDALONE_GUESS:
            self.program.setCurrentIndex(1)  # running the standalone build now
        self.where = QLabel()
        self.where.setWordWrap(True)
        self.text = Snippet()
        self.text.setObjectName("shareSnippet")
        self.text.setAccessibleName(tr("What to paste into the app's settings"))
        self.text.setReadOnly(True)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.copy = QPushButton(tr("&Copy"))
        self.copy.setAccessibleName(tr("Copy what to paste"))
        self.copy.clicked.connect(self._copy)
        self.copied = QLabel()
        self.activity = QLabel()
        self.activity.setObjectName("appsActivity")
        self.activity.setWordWrap(True)
        self.activity.setAccessibleName(tr("What other apps did in the last hour"))
        quiet(self.activity)
        self._lay_out(intro)
        self.share.toggled.connect(self._update)
        self.app.currentIndexChanged.connect(self._update)
        self.program.currentIndexChanged.connect(self._update)
        self._update()

    def _lay_out(self, intro: QLabel) -> None:
        pick = QFormLayout()
        pick.addRow(tr("&App"), self.app)
        pick.addRow(tr("&Program"), self.program)
        copy_row = QHBoxLayout()
        copy_row.addWidget(self.copy)
        copy_row.addWidget(self.copied, 1)
        self.details = column(self.read_only, pick, self.where, (self.text, 1), copy_row)
        layout = QVBoxLayout(self)
        layout.addWidget(self.share)
        layout.addWidget(intro)
        layout.addWidget(self.activity)
        layout.addWidget(self.details, 1)

    def _update(self, *_args: object) -> None:
        on = self.share.isChecked()
        self.details.setEnabled(on)
        app = self.app.currentData()
        self.where.setText(i18n.tr(snippets.WHERE[app]) if on else
                           tr("Turn sharing on to see what to paste into each app."))
        self.text.setPlainText(snippets.snippet(app, self.program.currentData(), self.home,
                                                self.token, self.port) if on else "")
        self.copied.clear()

    def show_activity(self, hour: dict[str, Any]) -> None:
        """What other apps wrote and took away in the last hour, against the hour's
        budget (APPS_ACTIVITY's answer); past it their calls wait for you."""
        said = tr("Last hour: other apps added or changed {written} of {write_limit} "
                  "memories and removed {taken} of {take_limit}; past that their calls wait "
                  "for your Allow.",
                  written=f"{hour['written']:,}", write_limit=f"{hour['write_limit']:,}",
                  taken=f"{hour['taken']:,}", take_limit=f"{hour['take_limit']:,}")
        apps = [tr("{app}: {written} written, {taken} removed", app=a["name"],
                   written=f"{a['written']:,}", taken=f"{a['taken']:,}")
                for a in hour["apps"][:5]]
        self.activity.setText(said + ("\n" + "; ".join(apps) if apps else ""))
        self.activity.setToolTip("\n".join(f"{a['name']}: {a['via'] or '?'}"
                                           for a in hour["apps"]))

    def _copy(self) -> None:
        QGuiApplication.clipboard().setText(self.text.toPlainText())
        self.copied.setText(tr("Copied. Paste it where the line above says."))

    def values(self) -> dict[str, Any]:
        values = {"share_memory": self.share.isChecked(),
                  "share_read_only": self.read_only.isChecked()}
        if self.share.isChecked() and self.token != self.saved_token:
            values["share_token"] = self.token
        return values
