"""What the person does to the memory from the menus and the chat: decide approvals, undo
a turn, empty the trash, restore a backup, export and import. Each asks the backend and
says what happened; the lists and counts follow the memory's own events."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from app.backend_host import BackendHost, shown_or_warned
from app.chat.approval import ApprovalCard
from app.dialogs.backups import BackupsDialog, holds
from app.dialogs.import_progress import ImportProgress
from app.status.status_parts import as_sentence, count_of, first_upper
from core.errors import ErrorCode
from core.i18n import tr
from core.protocol.packets import PacketType


class MemoryActions(QObject):
    said = Signal(str, int)  # a confirmation to show for that many ms
    state_changed = Signal(str)
    restored = Signal()  # a backup replaced the memory: read everything again

    def __init__(self, host: BackendHost, window: QWidget, approvals: ApprovalCard,
                 selected_turn: Callable[[], str | None]) -> None:
        """`selected_turn()` answers the turn the person has selected, if any."""
        super().__init__(window)
        self.host, self.window, self.approvals = host, window, approvals
        self.selected_turn = selected_turn
        self.import_progress: ImportProgress | None = None
        approvals.decided.connect(self.decide_approval)
        host.events.import_progress.connect(self._import_progressed)

    # -- approvals and turns --------------------------------------------------------------

    def load_approvals(self) -> None:
        self.host.send(PacketType.LIST_APPROVALS, None, self._approvals_loaded)

    def _approvals_loaded(self, answer: dict[str, Any]) -> None:
        if answer["success"]:
            self.approvals.set_pending(answer["data"]["approvals"])

    def decide_approval(self, approval_id: int, allow: bool) -> None:
        self.host.send(PacketType.DECIDE_APPROVAL, {"approval_id": approval_id, "allow": allow},
                       lambda answer: self._approval_decided(approval_id, answer))

    def _approval_decided(self, approval_id: int, answer: dict[str, Any]) -> None:
        self.approvals.remove(approval_id)
        if not answer["success"]:
            QMessageBox.warning(self.window, tr("Not changed"), answer["error"])
            return
        decided = answer["data"]["approval"]
        self.approvals.settle(decided)
        if decided["state"] == "allowed":
            self.said.emit(tr("Allowed: {outcome}", outcome=decided["outcome"]), 10000)
        elif decided["state"] == "denied":
            self.said.emit(tr("Denied: nothing was removed."), 8000)
        else:
            QMessageBox.information(self.window, tr("Nothing removed"), decided["outcome"])

    def undo_turn(self, turn_id: str | None = None) -> None:
        """Take back every memory change of a turn: the one asked for, else the selected
        one, else the newest turn that has changes left."""
        turn_id = turn_id or self.selected_turn()
        self.host.send(PacketType.UNDO_TURN, {"turn_id": turn_id} if turn_id else {},
                       self._turn_undone)

    def _turn_undone(self, answer: dict[str, Any]) -> None:
        if not answer["success"]:
            QMessageBox.information(self.window, tr("Undo this turn"), answer["error"])
            return
        count = len(answer["data"]["undone"])
        said = tr("Took back {changes} of that turn.", changes=count_of(
            count, tr("1 memory change"), tr("{n} memory changes")))
        kept = answer["data"].get("kept_message")
        self.said.emit(f"{said} {kept}" if kept else said, 15000 if kept else 10000)
        if answer["data"].get("expired_approvals"):
            self.load_approvals()

    # -- backups and the trash -------------------------------------------------------------

    def open_backups(self) -> None:
        self.host.send(PacketType.LIST_BACKUPS, None, shown_or_warned(
            self.window, tr("Restore from backup"), self._show_backups))

    def _show_backups(self, listed: dict[str, Any]) -> None:
        dialog = BackupsDialog(self.host, listed, self.window)
        dialog.restored.connect(self._backup_restored)
        dialog.exec()

    def _backup_restored(self, answer: dict[str, Any]) -> None:
        """Told what came back, with "Undo restore" one click away."""
        self.restored.emit()
        box = QMessageBox(QMessageBox.Icon.Information, tr("Restored"), tr(
            "Restored the backup {backup}: {holds}. What you had is kept as {kept}.",
            backup=answer["restored"], holds=holds(answer), kept=answer["kept_aside"]),
            QMessageBox.StandardButton.Ok, self.window)
        undo = box.addButton(tr("&Undo restore"), QMessageBox.ButtonRole.ActionRole)
        undo.setObjectName("undoRestore")
        box.exec()
        if box.clickedButton() is undo:
            self.host.send(PacketType.UNDO_RESTORE, {"kept_aside": answer["kept_aside"]},
                           self._restore_undone)

    def _restore_undone(self, answer: dict[str, Any]) -> None:
        if not answer["success"]:
            QMessageBox.warning(self.window, tr("Undo restore"), answer["error"])
            return
        self.restored.emit()
        self.said.emit(tr("Restore undone: {holds} are back.", holds=holds(answer["data"])),
                       10000)

    def empty_trash(self) -> None:
        self.host.send(PacketType.TRASH_STATUS, None, shown_or_warned(
            self.window, tr("Empty trash"), self._confirm_empty_trash))

    def _confirm_empty_trash(self, trash: dict[str, Any]) -> None:
        facts, nodes = trash["edges"], trash["nodes"]
        if not facts and not nodes:
            self.said.emit(tr("The trash is empty."), 5000)
            return
        facts_text = count_of(facts, tr("1 deleted fact"), tr("{n} deleted facts"))
        nodes_text = count_of(nodes, tr("1 deleted node"), tr("{n} deleted nodes"))
        what = (tr("{facts} and {nodes}", facts=facts_text, nodes=nodes_text)
                if facts and nodes else facts_text if facts else nodes_text)
        sure = QMessageBox.question(
            self.window, tr("Empty trash"),
            tr("Empty the trash ({what})? They can no longer be restored from the trash; "
               "Undo (Ctrl+Z) right after still brings them back. The assistant can never "
               "empty the trash.", what=what),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel)
        if sure == QMessageBox.StandardButton.Yes:
            self.host.send(PacketType.EMPTY_TRASH, {}, shown_or_warned(
                self.window, tr("Empty trash"),
                lambda emptied: self.said.emit(as_sentence(emptied["summary"]), 8000)))

    # -- export and import ----------------------------------------------------------------

    def choose_export(self, kind: str) -> None:
        suffix = tr("JSON (*.json)") if kind == "json" else tr("GraphML (*.graphml)")
        path, _ = QFileDialog.getSaveFileName(self.window, tr("Export memory"),
                                              str(Path.home() / f"trulymem-memory.{kind}"),
                                              suffix)
        if path:
            self.export_memory(path, kind)

    def export_memory(self, path: str, kind: str) -> None:
        self.host.send(PacketType.EXPORT_MEMORY, {"path": path, "format": kind},
                       lambda answer: self._report(
                           tr("Export"), answer,
                           tr("{summary}, to {path}", path=path, summary=first_upper(
                               (answer["data"] or {}).get("summary") or ""))))

    def choose_import(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window, tr("Import memory"),
                                              str(Path.home()), tr("JSON (*.json)"))
        if path:
            self.import_memory(path)

    def import_memory(self, path: str) -> None:
        """Runs on the backend thread with a progress dialog; a chat message sent
        meanwhile waits for the import to end."""
        progress = ImportProgress(Path(path).name, self.window)
        progress.canceled.connect(self.host.cancel)
        self.import_progress = progress
        self.state_changed.emit(tr("Importing {file}…", file=Path(path).name))

        def done(answer: dict[str, Any]) -> None:
            self.import_progress = None
            progress.close()
            progress.deleteLater()
            self.state_changed.emit(tr("Ready"))
            if answer["code"] == ErrorCode.CANCELLED:
                self.said.emit(tr("Import cancelled; the memory is unchanged."), 10000)
                return
            self._report(tr("Import"), answer,
                         tr("{summary}. Undo (Ctrl+Z) takes the whole import back.",
                            summary=first_upper((answer["data"] or {}).get("summary") or "")))

        self.host.send(PacketType.IMPORT_MEMORY, {"path": path}, done)

    def _import_progressed(self, data: dict[str, Any]) -> None:
        if self.import_progress is not None:
            self.import_progress.show_progress(data)

    def _report(self, title: str, answer: dict[str, Any], success: str) -> None:
        if answer["success"]:
            self.said.emit(success, 10000)
        else:
            QMessageBox.warning(self.window, title, tr("{title} failed: {error}", title=title,
                                                       error=answer["error"]))
