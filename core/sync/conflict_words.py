"""A sync conflict as one line a person reads: what it was about, the value kept and the
one not, each with the device that wrote it and when ("User · lives in: kept “Bergen”
(laptop, 2026-12-05 14:02), not “Trondheim” (desktop, 2026-12-05 14:05)")."""

from __future__ import annotations

import time
from typing import Any

from core.i18n import N_, tr

# The columns a conflict is about, in words (others are shown as they are)
COLUMN_WORDS = {"description": N_("description"), "name": N_("name"),
                "status": N_("status"), "relation": N_("relation"), "title": N_("title"),
                "content": N_("text"), "type": N_("type"), "state": N_("state"),
                "summary": N_("summary"), "deleted_at": N_("deleted"),
                "archived_at": N_("archived"), "source_id": N_("subject"),
                "target_id": N_("object")}


def column_word(column: str) -> str:
    return tr(COLUMN_WORDS[column]) if column in COLUMN_WORDS else column


def _when(moment: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(moment)) if moment else "?"


def in_words(item: dict[str, Any], names: dict[str, str]) -> str:
    """`item`, a row of `DeviceSync.conflicts`, in words; `names`: device id → name."""
    about = item.get("about") or ""
    if item["col"] != "slot":  # a one-value slot's about says it already
        about = f"{about} · {column_word(item['col'])}" if about else column_word(item["col"])

    def device(key: str) -> str:
        return names.get(item.get(key) or "", item.get(key) or "?")

    return tr("{about}: kept “{kept}” ({kept_device}, {kept_at}), not “{lost}” "
              "({lost_device}, {lost_at})", about=about, kept=item["kept"] or "—",
              lost=item["lost"] or "—", kept_device=device("kept_device"),
              kept_at=_when(item.get("kept_at")), lost_device=device("lost_device"),
              lost_at=_when(item.get("lost_at")))
