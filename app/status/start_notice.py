"""What the notice above the chat says about the backend's status: a store that could not
be opened, no API key yet, or another problem, each with the one button that helps."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.i18n import tr
from core.models import catalogue
from core.models.download import size_words

PROBLEMS = ("store_error", "store_warning", "config_warning", "backup_warning")


@dataclass(frozen=True)
class Notice:
    text: str
    button: str
    restore: bool  # the button opens Restore from backup (else Settings)
    detail: str = ""
    on_this_computer: bool = False  # a second button: "Chat on this computer…"
    local_first: bool = False  # …shown first (no model at all: the choice with no account)


def notice_for(status: dict[str, Any]) -> Notice | None:
    """The notice the status calls for, or None when all is well."""
    problems = [status[name] for name in PROBLEMS if status.get(name)]
    if status.get("store_error") or status.get("store_warning"):
        listed = "; ".join(problems)
        text = tr("The memory store could not be opened: {problems}.", problems=listed) \
            if status.get("store_error") \
            else tr("The memory store has a problem: {problems}.", problems=listed)
        return Notice(text, tr("Restore from backup…"), True, status.get("store_detail") or "")
    if status.get("local_problem"):  # the own runtime: no key is missing
        return Notice(tr("The model on this computer does not run: {problem}.",
                         problem=status["local_problem"]), tr("Open settings…"), False,
                      on_this_computer=True)
    if not status.get("client_initialized"):
        also = problems[0] if problems else status.get("store_notice")
        return Notice(
            tr("No model to chat with yet. TrulyMEM can run one on this computer (a {size} "
               "download; no account, and nothing you say leaves it), or use an API key: "
               "DeepSeek, OpenAI, any OpenAI-compatible service or a local server. Your "
               "memory can be browsed meanwhile.",
               size=size_words(catalogue.find(catalogue.DEFAULT).size))
            + (f"\n{also}" if also else ""), tr("Use an API key…"), False,
            on_this_computer=True, local_first=True)
    if problems:
        return Notice(problems[0], tr("Open settings…"), False)
    if status.get("store_notice"):
        return Notice(status["store_notice"], "", False)
    return None
