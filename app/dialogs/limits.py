"""Tool limits: how many memory tools of each kind the model may call in one turn, and how
many memories its calls may take away."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.backend_host import BackendHost
from app.dialogs.host_dialog import SavingDialog
from app.looks.sizes import chars, natural_size
from core import i18n
from core.i18n import N_, tr
from core.protocol.packets import PacketType
from core.tools.limits import DEFAULT_LIMITS

LABELS = {
    "persona_query_max": N_("Persona queries"),
    "persona_update_max": N_("Persona updates"),
    "task_query_max": N_("Task queries"),
    "task_update_max": N_("Task updates"),
    "memory_query_max": N_("Memory queries"),
    "memory_update_max": N_("Memory updates"),
    "destroyed_rows_max": N_("Memories it may remove"),
}
TOOLTIPS = {
    "destroyed_rows_max": N_("Facts and nodes the model may delete, supersede or archive in "
                             "one turn, over all its calls. A call that would go past it waits "
                             "for your Allow in the chat; the model's own confirm never lifts "
                             "it."),
}
MAX_LIMIT = 1000


class LimitsDialog(SavingDialog):
    packet = PacketType.SET_TOOL_LIMITS

    def __init__(self, host: BackendHost, limits: dict[str, int],
                 parent: QWidget | None = None) -> None:
        super().__init__(host, limits, "limitsDialog", tr("Tool limits per turn"), parent)
        intro = QLabel(tr("The most calls of each kind the model may make in one turn, and the "
                          "most memories those calls may remove. Calls past a limit are "
                          "refused and listed in the tool trace; a removal past it waits for "
                          "your Allow. Your own corrections are never limited."))
        intro.setWordWrap(True)
        form = QFormLayout()
        self.boxes: dict[str, QSpinBox] = {}
        for name, english in LABELS.items():
            label = i18n.tr(english)
            box = QSpinBox()
            box.setObjectName(name)
            box.setRange(1, MAX_LIMIT)
            box.setValue(int(limits.get(name, DEFAULT_LIMITS[name])))
            box.setAccessibleName(label)
            box.setToolTip(i18n.tr(TOOLTIPS[name]) if name in TOOLTIPS else "")
            form.addRow(label, box)
            self.boxes[name] = box
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel
                                        | QDialogButtonBox.StandardButton.RestoreDefaults)
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        self.buttons.button(QDialogButtonBox.StandardButton.RestoreDefaults).clicked.connect(
            self.restore_defaults)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)
        self.setMinimumWidth(chars(self, 40))
        natural_size(self)

    def values(self) -> dict[str, int]:
        return {name: box.value() for name, box in self.boxes.items()}

    def restore_defaults(self) -> None:
        for name, box in self.boxes.items():
            box.setValue(DEFAULT_LIMITS[name])

    def changes(self) -> dict[str, int]:
        """Every limit, when one changed: the backend keeps them as one set."""
        return {} if self.values() == self.original else self.values()

    def refused(self, words: str) -> None:
        self.error.setText(words)
        natural_size(self)  # taller by the error's lines
