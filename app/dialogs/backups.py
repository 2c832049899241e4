"""Restore from backup (File menu): the automatic backups with their date, facts and size.

Restoring puts the chosen backup in place of the memory; the current file is kept aside
first, never deleted, so a restore can itself be taken back by hand.
"""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QMessageBox,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.backend_host import BackendHost
from app.sizes import chars
from core.i18n import tr
from core.protocol.packets import PacketType


def _size(count: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if count < 1024 or unit == "GB":
            return (tr("{count} bytes", count=f"{count:,.0f}") if unit == "bytes"
                    else f"{count:,.1f} {unit}")
        count /= 1024
    return tr("{count} bytes", count=count)


class BackupsDialog(QDialog):
    restored = Signal(object)  # the RESTORE_BACKUP answer

    def __init__(self, host: BackendHost, answer: dict[str, Any],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("backupsDialog")
        self.setWindowTitle(tr("Restore from backup"))
        self.host = host
        self.backups = answer["backups"]
        intro = QLabel(tr("Backups are made automatically, at most once an hour while you use "
                          "TrulyMEM and when you quit. They are kept in {folder}. "
                          "Restoring keeps the current memory file aside first.",
                          folder=answer["folder"]))
        intro.setWordWrap(True)
        intro.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.model = QStandardItemModel(0, 3, self)
        self.model.setHorizontalHeaderLabels([tr("Made"), tr("Facts"), tr("Size")])
        for backup in self.backups:
            made = time.strftime("%Y-%m-%d %H:%M", time.localtime(backup["created_at"]))
            facts = (f"{backup['facts']:,}" if backup["facts"] is not None
                     else tr("cannot be read"))
            cells = [QStandardItem(made), QStandardItem(facts),
                     QStandardItem(_size(backup["bytes"]))]
            for cell in cells[1:]:
                cell.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.model.appendRow(cells)
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

    def chosen(self) -> dict[str, Any] | None:
        rows = self.table.selectionModel().selectedRows()
        return self.backups[rows[0].row()] if rows else None

    def restore_selected(self, confirm: bool = True) -> None:
        backup = self.chosen()
        if backup is None:
            return
        made = time.strftime("%Y-%m-%d %H:%M", time.localtime(backup["created_at"]))
        if confirm and QMessageBox.question(
                self, tr("Restore from backup"),
                tr("Replace the memory with the backup of {made}? The current memory file "
                   "is kept aside, not deleted.", made=made),
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
                QMessageBox.StandardButton.Cancel) != QMessageBox.StandardButton.Yes:
            return
        self.restore_button.setEnabled(False)
        self.host.send(PacketType.RESTORE_BACKUP, {"name": backup["name"]}, self._restored)

    def _restored(self, answer: dict[str, Any]) -> None:
        self.restore_button.setEnabled(True)
        if not answer["success"]:
            self.error.setText(tr("Not restored: {error}", error=answer["error"]))
            return
        self.restored.emit(answer)
        self.accept()
