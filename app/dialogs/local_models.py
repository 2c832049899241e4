"""The models this computer can run itself, as rows: what each is, whether it is here, a
download with its progress and Cancel, Use and Remove. Settings shows it under the
provider "On this computer"; the first start's "Chat on this computer" shows it with one
button that fetches the recommended model and chats with it. Every call goes through the
backend (LOCAL_MODELS, MODEL_GET, MODEL_CANCEL, MODEL_REMOVE); downloads run on their own
thread there and are told as `model_download` events."""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlsplit

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.backend_host import BackendHost
from app.looks.access import announce
from app.looks.notes import quiet
from core import i18n
from core.i18n import N_, tr
from core.models.download import size_words
from core.protocol.packets import PacketType

STEPS = 1000


def minutes_words(seconds: float) -> str:
    """"under a minute", "about 8 minutes", "about 2 hours"."""
    if seconds < 60:
        return tr("under a minute")
    if seconds < 5400:
        return tr("about {n} minutes", n=round(seconds / 60)) if seconds >= 90 \
            else tr("about a minute")
    return tr("about {n} hours", n=round(seconds / 3600))


def download_time_words(size: int) -> str:
    """How long a download takes on a fast and a slow line, before its speed is known."""
    return tr("{fast} at 200 Mbit/s, {slow} at 20 Mbit/s",
              fast=minutes_words(size * 8 / 200e6), slow=minutes_words(size * 8 / 20e6))


def plain_label() -> QLabel:
    label = QLabel()
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    return label


def progress_row(act) -> tuple[QProgressBar, QPushButton, QHBoxLayout]:
    """A progress bar (shown while the work runs) and the row's button, in a row where
    the button keeps its own width while the bar is hidden."""
    bar = QProgressBar()
    bar.setRange(0, STEPS)
    bar.setTextVisible(False)
    button = QPushButton()
    button.clicked.connect(act)
    row = QHBoxLayout()
    row.addWidget(bar, 1)
    row.addStretch(0)
    row.addWidget(button)
    return bar, button, row


class ModelRow(QFrame):
    """One model: its name and what it needs, where it stands, and what can be done."""

    def __init__(self, panel: LocalModels, row: dict[str, Any]) -> None:
        super().__init__()
        self.setObjectName(f"model-{row['id']}")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.panel, self.row = panel, row
        self.failure = ""  # why the last download failed: said until the next try
        self.title = QLabel()
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.about = QLabel()
        self.about.setWordWrap(True)
        quiet(self.about)
        self.state = plain_label()
        self.bar, self.action, buttons = progress_row(self._act)
        self.remove = QPushButton(tr("Remove"))
        self.remove.clicked.connect(self._remove)
        buttons.addWidget(self.remove)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.about)
        layout.addWidget(self.state)
        layout.addLayout(buttons)
        self.show_row(row)

    def show_row(self, row: dict[str, Any]) -> None:
        self.row = row
        name, size = row["name"], size_words(row["size"])
        self.title.setText(name + ("  ·  " + tr("recommended") if row["default"] else ""))
        self.about.setText(" ".join([
            tr("{size} download; needs {ram} GB of free memory; {licence}; {languages}.",
               size=size, ram=row["ram_gb"], licence=row["licence"],
               languages=row["languages"]),
            tr("Measured here: {what}.", what=row["measured"]) if row["measured"]
            else tr("Never measured with this app: how well it keeps your memory is not "
                    "known.")]))
        self.bar.setVisible(row["fetching"])
        self.bar.setValue(int(row["bytes"] * STEPS / max(row["size"], 1)))
        self.bar.setAccessibleName(tr("Download of {model}", model=name))
        self._say_state()
        starting = self.panel.starting
        here = row["state"] == "installed"
        if row["fetching"]:
            self.action.setText(tr("Cancel download"))
        elif here:
            self.action.setText(tr("Chat with it") if starting else tr("Use"))
        else:
            left = size_words(row["size"] - row["bytes"])
            self.action.setText(
                tr("Go on downloading ({left} left)", left=left) if row["state"] == "partial"
                else tr("Download and chat ({size})", size=size) if starting
                else tr("Download ({size})", size=size))
        self.action.setVisible(not (here and row["chosen"] and not starting))
        self.action.setAccessibleName(f"{self.action.text()}: {name}")
        self.remove.setVisible(here and not starting)
        self.remove.setEnabled(not row["chosen"])
        self.remove.setToolTip(tr("The chat runs on it: choose another model first")
                               if row["chosen"] else "")
        self.remove.setAccessibleName(tr("Remove {model}", model=name))

    def _say_state(self, speed: float | None = None, left: float | None = None) -> None:
        row = self.row
        have, size = size_words(row["bytes"]), size_words(row["size"])
        if row["fetching"]:
            said = tr("Downloading: {have} of {total} ({percent}%)", have=have, total=size,
                      percent=row["bytes"] * 100 // max(row["size"], 1))
            if speed:
                said += " · " + tr("{speed} MB/s", speed=f"{speed / 1e6:.1f}")
            if left is not None:
                said += " · " + tr("{time} left", time=minutes_words(left))
        elif row["state"] == "installed":
            said = tr("On this computer; the chat runs on it.") if row["chosen"] \
                else tr("On this computer.")
        elif row["state"] == "partial":
            said = tr("{have} of {total} downloaded; the rest comes when you go on.",
                      have=have, total=size)
        else:
            said = tr("Not downloaded: {time}.", time=download_time_words(row["size"]))
        problems = row.get("problems") or []
        if problems:
            said += "\n" + tr("Before it runs: {missing}.", missing="; ".join(problems))
        if self.failure and not row["fetching"]:
            said = self.failure + "\n" + said
        self.state.setText(said)

    def told(self, data: dict[str, Any]) -> None:
        """A `model_download` event about this row's model."""
        phase = data["phase"]
        self.row = {**self.row, "bytes": data.get("have", self.row["bytes"]),
                    "fetching": phase == "fetching"}
        if phase == "fetching":
            self.bar.setVisible(True)
            self.bar.setValue(int(self.row["bytes"] * STEPS / max(self.row["size"], 1)))
            self.action.setText(tr("Cancel download"))
            left = data.get("seconds_left")
            speed = None if not left else (self.row["size"] - self.row["bytes"]) / left
            self._say_state(speed, left)
            return
        if phase == "failed":
            self.failure = tr("The download failed: {error}", error=data.get("error"))
            announce(self, self.failure, urgent=True)
        here = "installed" if phase == "done" else "partial" if self.row["bytes"] else "absent"
        self.show_row({**self.row, "state": here})  # at once; the list follows
        self.panel.refresh()

    def _act(self) -> None:
        row, self.failure = self.row, ""
        if row["fetching"]:
            self.panel.host.send(PacketType.MODEL_CANCEL, {"model": row["id"]})
        elif row["state"] == "installed":
            self.panel.use.emit(row["id"])
        else:
            self.panel.fetch(row["id"])

    def _remove(self) -> None:
        row = self.row
        sure = QMessageBox.question(
            self, tr("Remove a model"),
            tr("Remove {model} from this computer? {size} are freed; using it again means "
               "downloading it again.", model=row["name"], size=size_words(row["size"])))
        if sure == QMessageBox.StandardButton.Yes:
            self.panel.host.send(PacketType.MODEL_REMOVE, {"model": row["id"]},
                                 self.panel.removed)


BUILD_PHASES = {"fetching": N_("fetching llama.cpp's source"),
                "configuring": N_("configuring"), "building": N_("compiling"),
                "installing": N_("installing")}


class RuntimeRow(QFrame):
    """The runtime, where it is not here (a source checkout): what building it takes, a
    button, its progress and Stop. Hidden where the runtime is."""

    def __init__(self, panel: LocalModels) -> None:
        super().__init__()
        self.setObjectName("runtimeRow")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.panel = panel
        self.state: dict[str, Any] = {}
        self.words = plain_label()
        self.bar, self.action, row = progress_row(self._act)
        self.bar.setAccessibleName(tr("Build of the runtime"))
        layout = QVBoxLayout(self)
        layout.addWidget(self.words)
        layout.addLayout(row)
        self.hide()

    @property
    def here(self) -> bool:
        return bool(self.state.get("here"))

    @property
    def can_build(self) -> bool:
        return bool(self.state.get("buildable")) and not self.state.get("missing")

    def show_state(self, state: dict[str, Any]) -> None:
        self.state = state
        self.setVisible(not state["here"])
        if state["here"]:
            return
        building = state.get("building")
        self.bar.setVisible(bool(building))
        # the first start's one button builds it too: no second first step there
        self.action.setVisible(self.can_build and not self.panel.starting)
        if building:
            self.told(building)
            return
        took = minutes_words(state["estimate_s"])
        if not state["buildable"]:
            said = tr("The runtime that runs these models (llama.cpp's server) is not in "
                      "this copy of TrulyMEM; the packaged program and the .deb ship it.")
        elif state["missing"]:
            said = tr("The runtime that runs these models (llama.cpp's server) is built "
                      "once on this computer; that needs {tools} first: `sudo apt-get "
                      "install {tools}`, or `{command}` in a terminal.",
                      tools=" ".join(state["missing"]), command=state["command"])
        elif self.panel.starting:
            said = tr("The first time, the runtime that runs the model (llama.cpp's server) "
                      "is built on this computer too, beside the download: {time} (measured "
                      "with 2 cores; this one has {cores}).", time=took,
                      cores=os.cpu_count() or 1)
        else:
            said = tr("The runtime that runs these models (llama.cpp's server) is built "
                      "once on this computer: {time} (measured with 2 cores; this one has "
                      "{cores}). It also builds with `{command}`.", time=took,
                      cores=os.cpu_count() or 1, command=state["command"])
        self.words.setText(said)
        self.action.setText(tr("Build it ({time})", time=took))
        self.action.setAccessibleName(tr("Build the runtime ({time})", time=took))

    def told(self, data: dict[str, Any]) -> None:
        """A `runtime_build` event."""
        phase = data["phase"]
        if phase in BUILD_PHASES:
            self.state = {**self.state, "building": data}
            self.bar.setVisible(True)
            self.bar.setValue(int(float(data.get("done") or 0) * STEPS))
            left = data.get("seconds_left")
            self.words.setText(tr("Building the runtime: {phase}, {percent}%", phase=i18n.tr(
                BUILD_PHASES[phase]), percent=int(float(data.get("done") or 0) * 100))
                + ("" if left is None else " · " + tr("{time} left",
                                                       time=minutes_words(left))))
            self.action.setText(tr("Stop the build"))
            self.action.setAccessibleName(self.action.text())
            self.action.setVisible(True)
            return
        self.state = {**self.state, "building": None}
        self.panel.refresh()
        if phase == "failed":
            self.panel.said.emit(tr("The runtime was not built: {error}",
                                    error=data.get("error")))
        elif phase == "done":
            announce(self, tr("The runtime is built."))

    def build(self) -> None:
        if not self.state.get("building"):
            self.panel.host.send(PacketType.BUILD_RUNTIME, {}, self.panel.build_started)

    def _act(self) -> None:
        if self.state.get("building"):
            self.panel.host.send(PacketType.STOP_RUNTIME_BUILD, {})
        else:
            self.build()


class LocalModels(QWidget):
    """The catalogue's rows. `starting`: the first start's rows, whose one button fetches
    a model and chats with it (`use` is said once it is here)."""

    use = Signal(str)  # chat with this model (it is on this computer)
    said = Signal(str)  # something to tell the person (a removal, a failure)
    listed = Signal()  # the rows are shown (a dialog sizes itself to them)

    def __init__(self, host: BackendHost, starting: bool = False,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("localModels")
        self.host, self.starting = host, starting
        self.rows: dict[str, ModelRow] = {}
        self.fetched_here: set[str] = set()  # downloads this panel started
        self.where = QLabel()
        self.where.setWordWrap(True)
        quiet(self.where)
        self.layout_ = QVBoxLayout(self)
        self.layout_.setContentsMargins(0, 0, 0, 0)
        self.layout_.addWidget(self.where)
        self.runtime = RuntimeRow(self)
        self.layout_.addWidget(self.runtime)
        # the first start shows the recommended model; the others on request
        self.others = QPushButton()
        self.others.setObjectName("otherModels")
        self.others.setCheckable(True)
        self.others.setFlat(True)
        self.others.toggled.connect(self._show_others)
        self.others.hide()
        host.events.model_download.connect(self._told)
        host.events.runtime_build.connect(self.runtime.told)
        host.events.runtime_build.connect(self._runtime_told)
        self.refresh()

    def refresh(self) -> None:
        self.host.send(PacketType.LOCAL_MODELS, {}, self._listed)

    def _listed(self, answer: dict[str, Any]) -> None:
        if not answer["success"]:
            self.where.setText(tr("The models are not listed: {error}",
                                  error=answer["error"]))
            return
        data = answer["data"]
        free = data.get("free_disk")
        source = urlsplit(data["source"]).netloc or data["source"]
        self.where.setText(tr("Kept in {folder} ({free} free there), fetched from {source}.",
                              folder=data["folder"], source=source,
                              free=size_words(free) if free is not None else "?"))
        self.where.setToolTip(data["source"])
        self.runtime.show_state(data["runtime"])
        for row in data["models"]:
            if row["id"] in self.rows:
                self.rows[row["id"]].show_row(row)
            else:
                self.rows[row["id"]] = ModelRow(self, row)
                self.layout_.addWidget(self.rows[row["id"]])
        others = [r["id"] for r in data["models"] if not r["default"]]
        if self.starting and others and self.others.parent() is None:
            self.layout_.insertWidget(self.layout_.indexOf(
                self.rows[others[0]]), self.others)
            self._show_others(False)
        self.listed.emit()

    def _show_others(self, shown: bool) -> None:
        others = [row for row in self.rows.values() if not row.row["default"]]
        self.others.setVisible(bool(others))
        self.others.setText(tr("Fewer models") if shown else tr("Other models ({n})…",
                                                                  n=len(others)))
        for row in others:
            row.setVisible(shown)
        self.listed.emit()

    def fetch(self, model_id: str) -> None:
        """Fetch a model; the first start builds the runtime meanwhile when it is not
        here (the download waits on the network, the build on the processor)."""
        self.fetched_here.add(model_id)
        self.host.send(PacketType.MODEL_GET, {"model": model_id}, self._started)
        if self.starting and not self.runtime.here and self.runtime.can_build:
            self.runtime.build()

    def build_started(self, answer: dict[str, Any]) -> None:
        if not answer["success"]:
            self.said.emit(answer["error"])
        self.refresh()

    def _runtime_told(self, data: dict[str, Any]) -> None:
        if data["phase"] == "done":
            self.runtime.state = {**self.runtime.state, "here": True}
            for model_id in self.fetched_here:
                if self.rows[model_id].row["state"] == "installed":
                    self._here(model_id)

    def _started(self, answer: dict[str, Any]) -> None:
        if not answer["success"]:
            self.said.emit(tr("The download did not start: {error}", error=answer["error"]))
            return
        data = answer["data"]
        if data.get("installed"):
            self._here(data["model"])
        else:
            self.refresh()

    def _told(self, data: dict[str, Any]) -> None:
        row = self.rows.get(data.get("model", ""))
        if row is None:
            return
        row.told(data)
        if data["phase"] == "done":
            announce(self, tr("{model} is downloaded.", model=row.row["name"]))
            self._here(data["model"])

    def _here(self, model_id: str) -> None:
        """A model this panel fetched is here: the first start chats with it at once, or
        once the runtime is built."""
        built_first = not self.runtime.here and self.runtime.can_build  # fetch() began it
        if self.starting and model_id in self.fetched_here and not built_first:
            self.use.emit(model_id)

    def removed(self, answer: dict[str, Any]) -> None:
        if not answer["success"]:
            self.said.emit(answer["error"])
        else:
            self.said.emit(tr("Removed: {size} freed.",
                              size=size_words(answer["data"]["freed"])))
        self.refresh()
