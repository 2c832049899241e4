"""The progress of a memory import, with Cancel; it does not block the window.

A small file finishes before the dialog would show (`minimumDuration`), so it never
flashes; a file of millions of rows shows what is happening and can be stopped, and the
memory is then left exactly as it was.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QProgressDialog, QWidget

from core import i18n
from core.i18n import N_, tr

STEPS = 1000
PHASES = {
    "reading": N_("Reading and checking {name}…"),
    "checking": N_("Checking that every fact points at a known name…"),
    "writing": N_("Adding the memories (one change: Undo takes it all back)…"),
    "done": N_("Finishing…"),
}


class ImportProgress(QProgressDialog):
    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(i18n.tr(PHASES["reading"], name=name), tr("Cancel"), 0, STEPS,
                         parent)
        self.name = name
        self.setWindowTitle(tr("Import memory"))
        self.setWindowModality(Qt.WindowModality.NonModal)
        self.setMinimumDuration(500)
        self.setAutoClose(False)
        self.setAutoReset(False)
        self.setMinimumWidth(420)

    def show_progress(self, data: dict[str, Any]) -> None:
        """One "import" progress event from the backend: `phase` and `done` (0 to 1)."""
        phase = PHASES.get(data.get("phase"))
        self.setLabelText(i18n.tr(phase, name=self.name) if phase else tr("Importing…"))
        self.setValue(int(float(data.get("done") or 0) * STEPS))
        if data.get("phase") == "done":
            self.setCancelButton(None)  # the change is committed: too late to cancel
