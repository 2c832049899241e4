"""File › Import conversations…: bring past conversations in, then (if the person says
so) build the memory from them while chat goes on.

Reading the file sends nothing anywhere. Before anything goes to a model the person is
told how many conversations, messages and tokens, and to which endpoint; they may keep
the conversations only. The build runs on the backend a piece at a time between
packets; its progress, time left and a Stop button sit in the status bar; Memory › Undo
import takes every fact of an import back as one change.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressDialog,
    QPushButton,
    QWidget,
)

from app.backend_host import BackendHost
from app.status.status_parts import count_of
from core.errors import ErrorCode
from core.i18n import tr
from core.protocol.packets import PacketType

FILTER_FORMATS = "*.zip *.json *.md *.markdown"


def duration_words(seconds: float | None) -> str:
    if seconds is None:
        return tr("working out the time left")
    minutes = round(seconds / 60)
    if minutes < 1:
        return tr("under a minute left")
    if minutes < 90:
        return tr("about {n} min left", n=minutes)
    return tr("about {n} h left", n=round(minutes / 60, 1))


def estimate_words(estimate: dict[str, Any]) -> str:
    return tr("Building the memory sends {conversations} ({messages}, about {tokens} "
              "tokens) to {model} at {endpoint}, a few exchanges at a time. Chat works "
              "meanwhile; you can stop it and go on later.",
              conversations=count_of(estimate["conversations"], tr("1 conversation"),
                                     tr("{n} conversations")),
              messages=count_of(estimate["messages"], tr("1 message"), tr("{n} messages")),
              tokens=f"{estimate['tokens']:,}", model=estimate["model"] or "?",
              endpoint=estimate["endpoint"])


class BuildStatus(QWidget):
    """The build's progress in the status bar, with Stop."""

    stop_requested = Signal()
    shown = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("memoryBuild")
        self.label = QLabel()
        self.stop = QPushButton(tr("Stop"))
        self.stop.setToolTip(tr("Stop after the conversation being remembered; what is "
                                "done stays, and Import conversations… goes on later"))
        self.stop.clicked.connect(self.stop_requested)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.stop)
        layout.addStretch(1)
        self.hide()

    def setVisible(self, visible: bool) -> None:  # Qt's name: every show and hide
        changed = visible != self.isVisible()
        super().setVisible(visible)
        if changed:
            self.shown.emit(visible)

    def show_progress(self, data: dict[str, Any]) -> None:
        done = round(100 * data["pieces"] / data["total"]) if data["total"] else 0
        self.label.setText(tr("Building memory: {percent}% · {left}", percent=done,
                              left=duration_words(data.get("seconds_left"))))
        self.label.setToolTip(tr(
            "Remembering the imported conversations, a few exchanges at a time: {done} of "
            "{total} parts, {facts} so far. Chat works meanwhile.", done=data["pieces"],
            total=data["total"], facts=count_of(data["facts"], tr("1 fact"),
                                                tr("{n} facts"))))
        self.setVisible(True)


class HistoryImport(QObject):
    said = Signal(str, int)
    finished = Signal(str)  # building the memory ended (built, stopped or failed)

    def __init__(self, host: BackendHost, window: QMainWindow, state_label: QWidget) -> None:
        """The build's progress takes the place of `state_label` ("Ready") at the left of
        the window's status bar while it runs."""
        super().__init__(window)
        self.host, self.window = host, window
        self.status = BuildStatus()
        self.status.stop_requested.connect(self.stop)
        window.statusBar().insertWidget(1, self.status, 2)
        self.status.shown.connect(lambda shown: state_label.setVisible(not shown))
        self.reading: QProgressDialog | None = None
        host.events.history_import.connect(self._progressed)

    def handlers(self) -> dict[str, Any]:
        """The window's actions this serves."""
        return {"history.import": self.choose, "memory.undo_import": self.undo}

    def choose(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self.window, tr("Import conversations"), str(Path.home()),
            tr("ChatGPT, Claude, LoCoMo or TrulyMEM exports ({patterns})",
               patterns=FILTER_FORMATS))
        if path:
            self.import_file(path)

    def import_file(self, path: str) -> None:
        reading = QProgressDialog(tr("Reading {file}…", file=Path(path).name), tr("Cancel"),
                                  0, 0, self.window)
        reading.setWindowTitle(tr("Import conversations"))
        reading.setWindowModality(Qt.WindowModality.NonModal)
        reading.setMinimumDuration(500)
        reading.canceled.connect(self.host.cancel)
        self.reading = reading

        def done(answer: dict[str, Any]) -> None:
            self.reading = None
            reading.close()
            reading.deleteLater()
            if answer["code"] == ErrorCode.CANCELLED:
                self.said.emit(tr("Import cancelled; nothing was kept."), 8000)
            elif not answer["success"]:
                QMessageBox.warning(self.window, tr("Import conversations"),
                                    tr("Nothing was imported: {error}",
                                       error=answer["error"]))
            else:
                self._kept(answer["data"])

        self.host.send(PacketType.IMPORT_HISTORY, {"path": path}, done)

    def _kept(self, kept: dict[str, Any]) -> None:
        added = kept["conversations"] + kept["grown"]
        estimate = kept.get("estimate")
        left = bool(estimate and estimate["pieces"])
        if not added and not left:
            QMessageBox.information(self.window, tr("Import conversations"), tr(
                "Nothing new: these conversations are here already."))
            return
        self.window.conversations.refresh()
        words = tr("Imported {conversations} ({messages}); they are in the sidebar, marked "
                   "as imported.", conversations=count_of(added, tr("1 conversation"),
                                                          tr("{n} conversations")),
                   messages=count_of(kept["messages"], tr("1 message"), tr("{n} messages"))
                   ) if added else tr("These conversations are here already, but the "
                                      "memory is not built from all of them yet.")
        if kept.get("undated"):
            words += "\n" + tr("{n} had no dates: they carry today's.", n=kept["undated"])
        if not left:
            self.said.emit(words, 10000)
            return
        box = QMessageBox(QMessageBox.Icon.Question, tr("Build the memory?"), words,
                          parent=self.window)
        box.setInformativeText(estimate_words(estimate))
        build = box.addButton(tr("Build memory"), QMessageBox.ButtonRole.AcceptRole)
        box.addButton(tr("Conversations only"), QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(build)
        box.exec()
        if box.clickedButton() is build:
            self.build(kept["import_id"])
        else:
            self.said.emit(tr("Kept the conversations only; nothing was sent."), 8000)

    def build(self, import_id: int | None = None) -> None:
        def started(answer: dict[str, Any]) -> None:
            if not answer["success"]:
                QMessageBox.warning(self.window, tr("Build the memory"), answer["error"])
                return
            self.status.show_progress({"pieces": 0, "total": answer["data"]["pieces"],
                                       "facts": 0, "seconds_left": None})

        self.host.send(PacketType.BUILD_MEMORY,
                       {"import_id": import_id} if import_id else {}, started)

    def stop(self) -> None:
        self.status.stop.setEnabled(False)
        self.host.send(PacketType.STOP_BUILDING, None, lambda _answer: None)

    def _progressed(self, data: dict[str, Any]) -> None:
        phase = data.get("phase")
        if phase == "reading":
            if self.reading is not None:
                self.reading.setLabelText(tr("Read {n} conversations…",
                                             n=f"{data['conversations']:,}"))
            return
        if phase == "building":
            self.status.show_progress(data)
            return
        self.status.hide()
        self.status.stop.setEnabled(True)
        self.window.conversations.refresh()
        if phase == "failed":
            text = tr("Building the memory stopped: {error}\nWhat is done stays; it goes on "
                      "from there when the app starts again, or from Import conversations….",
                      error=data.get("error") or "")
            self.finished.emit(text)
            QMessageBox.warning(self.window, tr("Build the memory"), text)
            return
        if phase == "built" and not data["facts"]:
            text = tr("The memory is built: the imported conversations held nothing new to "
                      "remember.")
        elif phase == "built":
            text = tr("The memory is built from the imported conversations: {written}. "
                      "Memory › Undo import takes them back.", written=_written(data))
        else:
            text = tr("Stopped: {written} so far. Import conversations… again goes on where "
                      "it stopped.", written=_written(data))
        self.finished.emit(text)
        self.said.emit(text, 12000)

    # -- taking an import back ------------------------------------------------------------

    def undo(self) -> None:
        self.host.send(PacketType.LIST_IMPORTS, None, self._choose_undo)

    def _choose_undo(self, answer: dict[str, Any]) -> None:
        imports = [i for i in (answer["data"] or {}).get("imports", [])
                   if not i["undone_at"]] if answer["success"] else []
        if not imports:
            QMessageBox.information(self.window, tr("Undo import"),
                                    tr("No import has facts left to take back."))
            return
        names = [tr("{file}, imported {when}: {conversations}", file=i["file_name"],
                    when=time.strftime("%Y-%m-%d %H:%M", time.localtime(i["created_at"])),
                    conversations=count_of(i["conversations"], tr("1 conversation"),
                                           tr("{n} conversations")))
                 for i in imports]
        dialog = QInputDialog(self.window)
        dialog.setWindowTitle(tr("Undo import"))
        dialog.setLabelText(tr("Take back every fact this import put in the memory (the "
                               "conversations stay):"))
        dialog.setComboBoxItems(names)
        dialog.setOkButtonText(tr("Undo import"))
        if dialog.exec():
            import_id = imports[names.index(dialog.textValue())]["id"]
            self.host.send(PacketType.UNDO_IMPORT, {"import_id": import_id}, self._undone)

    def _undone(self, answer: dict[str, Any]) -> None:
        if not answer["success"]:
            QMessageBox.information(self.window, tr("Undo import"), answer["error"])
            return
        self.status.hide()
        facts = answer["data"].get("facts")
        self.said.emit(tr("Took back the import: {facts} it wrote left the memory.",
                          facts=count_of(facts, tr("the 1 fact"), tr("the {n} facts")))
                       if facts else tr("Took back the import."), 10000)


def _written(data: dict[str, Any]) -> str:
    """The facts a build wrote, and how many of them stand, in the words the status bar
    and Undo import use: "13 facts written, 8 in the memory now (5 replaced or merged
    since)"."""
    written = count_of(data["facts"], tr("1 fact written"), tr("{n} facts written"))
    standing = data.get("standing")
    if standing is None or standing >= data["facts"]:
        return written
    return tr("{written}, {standing} in the memory now ({gone} replaced or merged since)",
              written=written, standing=standing, gone=data["facts"] - standing)
