"""One form for a fact, subject, relation and object: adding a fact to a node (the relation
first, with examples) and editing one (filled in, the object selected)."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QLineEdit, QWidget

from app.looks.sizes import chars, natural_size
from core.i18n import tr


class FactDialog(QDialog):
    def __init__(self, title: str, subject: str, relation: str = "", object_: str = "",
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.subject, self.relation, self.object = (QLineEdit(text) for text in
                                                    (subject, relation, object_))
        form = QFormLayout(self)
        for label, field in ((tr("&Subject"), self.subject), (tr("&Relation"), self.relation),
                             (tr("&Object"), self.object)):
            field.setMinimumWidth(chars(self, 40))
            form.addRow(label, field)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        natural_size(self)

    @classmethod
    def to_add(cls, subject: str, parent: QWidget | None = None) -> FactDialog:
        """A new fact about `subject`: the person types the relation first."""
        dialog = cls(tr("Add a fact"), subject, parent=parent)
        dialog.relation.setPlaceholderText(tr("e.g. likes, lives in, 喜欢"))
        dialog.object.setPlaceholderText(tr("e.g. green tea, Berlin, 上海"))
        dialog.relation.setFocus()
        return dialog

    @classmethod
    def to_edit(cls, subject: str, relation: str, object_: str,
                parent: QWidget | None = None) -> FactDialog:
        """A fact as it stands: most corrections change its object."""
        dialog = cls(tr("Edit fact"), subject, relation, object_, parent)
        dialog.object.setFocus()
        dialog.object.selectAll()
        return dialog

    def parts(self) -> dict[str, str]:
        return {"subject": self.subject.text().strip(),
                "relation": self.relation.text().strip(),
                "object": self.object.text().strip()}
