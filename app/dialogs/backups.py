"""Restore from backup (File menu): the automatic backups with their date, facts and size.

Restoring puts the chosen backup in place of the memory and the conversations alike; the
question says exactly what is replaced (facts and conversations, now and in the backup,
with their dates), and the current file is kept aside first, never deleted, so the
answer offers "Undo restore".
"""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.backend_host import BackendHost
from app.dialogs.host_dialog import HostDialog
from app.looks.sizes import chars
from core.i18n import tr
from core.protocol.packets import PacketType


def _day(moment: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(moment)) if moment else "–"


def holds(described: dict[str, Any] | None) -> str:
    """"1,204 facts, 12 conversations (last message 2026-12-01 18:02)": what one file
    holds, as LIST_BACKUPS describes it."""
    if not described or described.get("facts") is None:
        return tr("nothing that can be read")
    chats = described.get("conversations") or 0
    said = (tr("{facts} facts, 1 conversation", facts=f"{described['facts']:,}")
            if chats == 1 else
            tr("{facts} facts, {conversations} conversations",
               facts=f"{described['facts']:,}", conversations=f"{chats:,}"))
    if described.get("last_message_at"):
        said = tr("{holds} (last message {when})", holds=said,
                  when=_day(described["last_message_at"]))
    return said


def _size(count: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if count < 1024 or unit == "GB":
            return (tr("{count} bytes", count=f"{count:,.0f}") if unit == "bytes"
                    else f"{count:,.1f} {unit}")
        count /= 1024
    return tr("{count} bytes", count=count)


class BackupsDialog(HostDialog):
    restored = Signal(object)  # the RESTORE_BACKUP answer

    def __init__(self, host: BackendHost, answer: dict[str, Any],
                 parent: QWidget | None = None) -> None:
        super().__init__(host, "backupsDialog", tr("Restore from backup"), parent)
        # the copies restores kept aside come after the backups, and come back the same way
        self.backups = answer["backups"] + [{**copy, "kept_aside": True}
                                            for copy in answer.get("kept_aside") or []]
        self.current = answer.get("current")
        intro = QLabel(tr("Backups are made automatically, at most once an hour while you use "
                          "TrulyMEM and when you quit. They are kept in {folder}. "
                          "Restoring replaces the memory and the conversations; what you "
                          "have now is kept aside first, and the restore can be undone.",
                          folder=answer["folder"]))
        intro.setWordWrap(True)
        intro.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.model = self._listed()
        self.table = QTableView()
        self.table.setObjectName("backupList")
        self.table.setAccessibleName(tr("Backups, newest first"))
        self.table.setModel(self.model)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.ResizeToContents)
        self.table.doubleClicked.connect(lambda _index: self.restore_selected())
        self.empty = QLabel(tr("No backups yet: the first is made after your first change."))
        self.empty.setVisible(not self.backups)
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.restore_button = self.buttons.addButton(
            tr("&Restore…"), QDialogButtonBox.ButtonRole.ActionRole)
        self.restore_button.setEnabled(bool(self.backups))
        self.restore_button.clicked.connect(self.restore_selected)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.table)
        layout.addWidget(self.empty)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)
        metrics = self.fontMetrics()
        self.resize(chars(metrics, 60), 22 * metrics.height())
        if self.backups:
            self.table.selectRow(0)
        self.table.setFocus()

    def _listed(self) -> QStandardItemModel:
        model = QStandardItemModel(0, 4, self)
        model.setHorizontalHeaderLabels([tr("Made"), tr("Facts"), tr("Conversations"),
                                         tr("Size")])
        for backup in self.backups:
            readable = backup["facts"] is not None
            facts = f"{backup['facts']:,}" if readable else tr("cannot be read")
            chats = f"{backup.get('conversations') or 0:,}" if readable else ""
            made = _day(backup["created_at"])
            if backup.get("kept_aside"):
                made = tr("{when}, kept aside by a restore", when=made)
            cells = [QStandardItem(made), QStandardItem(facts),
                     QStandardItem(chats), QStandardItem(_size(backup["bytes"]))]
            for cell in cells[1:]:
                cell.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            model.appendRow(cells)
        return model

    def chosen(self) -> dict[str, Any] | None:
        rows = self.table.selectionModel().selectedRows()
        return self.backups[rows[0].row()] if rows else None

    def question(self, backup: dict[str, Any]) -> QMessageBox:
        """Asked once before restoring: exactly what is replaced, now and in the backup."""
        box = QMessageBox(QMessageBox.Icon.Warning, tr("Restore from backup"),
                          tr("Replace your memory and your conversations with the backup "
                             "of {made}?", made=_day(backup["created_at"])),
                          QMessageBox.StandardButton.Cancel, self)
        box.setObjectName("restoreQuestion")
        box.setInformativeText(tr(
            "Now: {now}.\nThe backup: {then}.\n\nEverything you have now is kept aside, "
            "not deleted, and you can undo the restore right after.",
            now=holds(self.current), then=holds(backup)))
        restore = box.addButton(tr("Replace with the backup"),
                                QMessageBox.ButtonRole.DestructiveRole)
        restore.setObjectName("restoreConfirm")
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        return box

    def restore_selected(self, confirm: bool = True) -> None:
        backup = self.chosen()
        if backup is None:
            return
        if confirm:
            box = self.question(backup)
            box.exec()
            if box.clickedButton() is not box.findChild(QPushButton, "restoreConfirm"):
                return
        self.restore_button.setEnabled(False)
        if backup.get("kept_aside"):
            self.host.send(PacketType.UNDO_RESTORE, {"kept_aside": backup["name"]},
                           self._restored)
        else:
            self.host.send(PacketType.RESTORE_BACKUP, {"name": backup["name"]}, self._restored)

    def _restored(self, answer: dict[str, Any]) -> None:
        self.restore_button.setEnabled(True)
        if not answer["success"]:
            self.error.setText(tr("Not restored: {error}", error=answer["error"]))
            return
        self.restored.emit(answer)
        self.accept()
