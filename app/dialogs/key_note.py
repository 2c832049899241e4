"""Where the API key is kept, said under the key in the settings: in the system keychain,
or, where none answered, in a file only the person can read (and why)."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QLabel

from app.looks.notes import quiet
from core.i18n import tr


def key_note(config: dict[str, Any]) -> QLabel:
    """The note for GET_CONFIG's `key_store` and `key_store_reason`."""
    label = QLabel()
    label.setObjectName("keyStore")
    label.setWordWrap(True)
    quiet(label)
    store, reason = config.get("key_store"), config.get("key_store_reason") or ""
    if store == "keychain":
        label.setText(tr("Kept in the system keychain.") + (f" {reason}" if reason else ""))
    elif store == "file":
        label.setText(tr("Kept in a file only you can read: {reason}.",
                         reason=reason or tr("no system keychain is used")))
    label.setVisible(store in ("keychain", "file"))
    label.setAccessibleName(tr("Where the API key is kept"))
    return label
