"""The settings' "Sync" page: the same memory on this device and the person's others.

Before: a folder the person's syncing app already shares, this device's name, and either
"Start" (this device is the first; the page then shows the pairing code) or a code typed
from another device and "Join". After: the devices, the last sync, Sync now, the pairing
code for one more device, the conflicts the rule decided and the files that were refused.
Each button sends its packet at once: the page has nothing to save with OK.
"""

from __future__ import annotations

import socket
import time
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.backend_host import BackendHost
from app.looks.column import column
from app.looks.notes import quiet
from app.status.status_parts import as_sentence, count_of, synced_words
from core.i18n import tr
from core.protocol.packets import PacketType


def when(moment: float | None) -> str:
    if not moment:
        return tr("never")
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(moment))


class SyncPage(QWidget):
    def __init__(self, host: BackendHost, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("syncPage")
        self.host = host
        intro = QLabel(tr("Keep this memory the same on your other computers through a "
                          "folder your syncing app (Syncthing, Nextcloud, Dropbox, a network "
                          "share) already keeps the same on each. TrulyMEM writes its "
                          "changes there encrypted: whoever stores the folder cannot read "
                          "them. The settings and the API key stay on each device."))
        intro.setWordWrap(True)
        quiet(intro)
        self._make_join_fields()
        self._make_joined_fields()
        self.result = QLabel()
        self.result.setObjectName("syncResult")
        self.result.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.before)
        layout.addWidget(self.after, 1)
        layout.addWidget(self.result)
        self.after.hide()
        self.refresh()

    def _make_join_fields(self) -> None:
        self.folder = QLineEdit()
        self.folder.setObjectName("syncFolder")
        self.folder.setPlaceholderText(tr("e.g. ~/Sync/TrulyMEM"))
        choose = QPushButton(tr("C&hoose…"))
        choose.clicked.connect(self._choose_folder)
        self.device_name = QLineEdit(socket.gethostname())
        self.device_name.setObjectName("syncDeviceName")
        self.start_button = QPushButton(tr("&Start syncing through this folder"))
        self.start_button.setObjectName("syncStart")
        self.start_button.clicked.connect(self.start)
        self.code = QLineEdit()
        self.code.setObjectName("syncCode")
        self.code.setPlaceholderText("·····-·····-·····-·····-·····-·")  # its shape
        self.code.returnPressed.connect(self.join)
        self.join_button = QPushButton(tr("&Join"))
        self.join_button.setObjectName("syncJoin")
        self.join_button.clicked.connect(self.join)
        folder_row = QHBoxLayout()
        folder_row.addWidget(self.folder, 1)
        folder_row.addWidget(choose)
        join_row = QHBoxLayout()
        join_row.addWidget(self.code, 1)
        join_row.addWidget(self.join_button)
        form = QFormLayout()
        form.addRow(self._label(tr("Shared &folder"), self.folder), folder_row)
        form.addRow(self._label(tr("This device's &name"), self.device_name),
                    self.device_name)
        form.addRow("", self.start_button)
        form.addRow(self._label(tr("Or join with a &code"), self.code), join_row)
        note = QLabel(tr("On the first device, start; on each other device, choose its copy "
                         "of the same folder and type the code the first one shows."))
        note.setWordWrap(True)
        quiet(note)
        form.addRow("", note)
        self.before = QWidget()
        self.before.setLayout(form)

    def _make_joined_fields(self) -> None:
        self.summary = QLabel()
        self.summary.setObjectName("syncSummary")
        self.summary.setWordWrap(True)
        self.sync_button = QPushButton(tr("Sync &now"))
        self.sync_button.setObjectName("syncNow")
        self.sync_button.clicked.connect(self.sync_now)
        self.show_code = QPushButton(tr("Show the pairing &code"))
        self.show_code.setObjectName("syncShowCode")
        self.show_code.clicked.connect(lambda: self.refresh(with_code=True))
        self.leave_button = QPushButton(tr("Stop syncing on this device…"))
        self.leave_button.setObjectName("syncLeave")
        self.leave_button.clicked.connect(self.leave)
        self._make_code_row()
        self.devices = QListWidget()
        self.devices.setObjectName("syncDevices")
        self.devices.setAccessibleName(tr("Devices in this sync set"))
        self.conflicts = QListWidget()
        self.conflicts.setObjectName("syncConflicts")
        self.conflicts.setAccessibleName(tr("Conflicts"))
        for listing in (self.devices, self.conflicts):  # whole lines, wrapped, no sideways
            listing.setWordWrap(True)
            listing.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
            listing.setResizeMode(QListWidget.ResizeMode.Adjust)
        # a few devices at most: their list stays short, the conflicts get the room
        self.devices.setMaximumHeight(5 * self.devices.fontMetrics().lineSpacing() + 12)
        self.conflicts_label = QLabel()
        buttons = QHBoxLayout()
        buttons.addWidget(self.sync_button)
        buttons.addWidget(self.show_code)
        buttons.addStretch(1)
        buttons.addWidget(self.leave_button)
        self.after = column(self.summary, buttons, self.code_row, QLabel(tr("Other devices")),
                            self.devices, self.conflicts_label, (self.conflicts, 1))

    def _make_code_row(self) -> None:
        """The pairing code, shown on request, to copy or read out to another device."""
        self.shown_code = QLineEdit()
        self.shown_code.setObjectName("syncShownCode")
        self.shown_code.setReadOnly(True)
        self.shown_code.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.shown_code.setAccessibleName(tr("Pairing code"))
        self.copy_code = QPushButton(tr("Cop&y"))
        self.copy_code.clicked.connect(
            lambda: QGuiApplication.clipboard().setText(self.shown_code.text()))
        self.code_row = QWidget()
        code_layout = QHBoxLayout(self.code_row)
        code_layout.setContentsMargins(0, 0, 0, 0)
        code_layout.addWidget(QLabel(tr("Type this code on your other devices:")))
        code_layout.addWidget(self.shown_code, 1)
        code_layout.addWidget(self.copy_code)
        self.code_row.hide()

    def _label(self, text: str, buddy: QWidget) -> QLabel:
        label = QLabel(text)
        label.setBuddy(buddy)
        return label

    def _choose_folder(self) -> None:
        chosen = QFileDialog.getExistingDirectory(self, tr("The shared folder"),
                                                  self.folder.text())
        if chosen:
            self.folder.setText(chosen)

    # -- packets -------------------------------------------------------------------------

    def refresh(self, with_code: bool = False) -> None:
        self.host.send(PacketType.SYNC_STATUS, {"code": with_code}, self._show)

    def start(self) -> None:
        if not self.folder.text().strip():
            self.result.setText(tr("Choose the shared folder first."))
            self.folder.setFocus()
            return
        self._busy(tr("Starting…"))
        self.host.send(PacketType.SYNC_START, {"folder": self.folder.text().strip(),
                                               "name": self.device_name.text().strip()},
                       self._started)

    def join(self) -> None:
        if not self.folder.text().strip() or not self.code.text().strip():
            self.result.setText(tr("Choose the shared folder and type the code shown on "
                                   "the first device."))
            return
        self._busy(tr("Joining…"))
        self.host.send(PacketType.SYNC_JOIN, {"folder": self.folder.text().strip(),
                                              "code": self.code.text().strip(),
                                              "name": self.device_name.text().strip()},
                       self._done)

    def leave(self) -> None:
        """Asks first: the other devices go on without this one."""
        answer = QMessageBox.question(
            self, tr("Stop syncing"),
            tr("Stop syncing this memory with your other devices? It stays here as it is, "
               "and the others keep theirs; to sync again, join with the code."))
        if answer != QMessageBox.StandardButton.Yes:
            return
        self.host.send(PacketType.SYNC_LEAVE, {}, self._left)

    def _left(self, answer: dict[str, Any]) -> None:
        self.result.setText(tr("This device no longer syncs.") if answer["success"]
                            else tr("Sync failed: {error}", error=answer["error"]))
        self.shown_code.clear()
        self.code_row.hide()
        self.refresh()

    def sync_now(self) -> None:
        self._busy(tr("Syncing…"))
        self.host.send(PacketType.SYNC_NOW, {}, self._done)

    def _busy(self, words: str) -> None:
        self.result.setText(words)
        for button in (self.start_button, self.join_button, self.sync_button):
            button.setEnabled(False)

    def _started(self, answer: dict[str, Any]) -> None:
        self._done(answer)
        if answer["success"]:
            self.refresh(with_code=True)

    def _done(self, answer: dict[str, Any]) -> None:
        for button in (self.start_button, self.join_button, self.sync_button):
            button.setEnabled(True)
        if not answer["success"]:
            self.result.setText(tr("Sync failed: {error}", error=answer["error"]))
            return
        data = answer["data"]
        words = as_sentence(synced_words(data))
        refused = data.get("refused") or []
        if refused:
            words += " " + tr("Refused {count} files: {first}", count=len(refused),
                              first=f"{refused[0]['file']}: {refused[0]['reason']}")
        self.result.setText(words)
        self.refresh()

    def _show(self, answer: dict[str, Any]) -> None:
        if not answer["success"]:
            self.result.setText(answer["error"])
            return
        state = answer["data"]
        self.before.setVisible(not state["joined"])
        self.after.setVisible(state["joined"])
        if not state["joined"]:
            return
        self.summary.setText(tr("This device is “{name}” in the sync set in {folder}. Last "
                                "sync: {last}.", name=state["name"], folder=state["folder"],
                                last=when(state["last_sync"])))
        if state.get("code"):
            self.shown_code.setText(state["code"])
            self.code_row.show()
        self.devices.clear()
        for device in state["devices"]:
            self.devices.addItem(tr("{name}: {files}, the last at {last}",
                                    name=device["name"] or device["device"],
                                    files=count_of(device["seq"], tr("1 file applied"),
                                                   tr("{n} files applied")),
                                    last=when(device["last_seen"])))
        if not state["devices"]:
            self.devices.addItem(tr("No other device has written here yet."))
        self.conflicts_label.setText(tr("Conflicts ({count}): the later write was kept",
                                        count=state["conflicts"]))
        self.conflicts.clear()
        for item in state.get("conflict_list") or []:
            self.conflicts.addItem(item["words"])
        for refused in state.get("refused") or []:
            self.conflicts.addItem(tr("Refused {file}: {reason}", file=refused["file"],
                                      reason=refused["reason"]))
