"""What the notice above the chat says about the backend's status: a store that could not
be opened, no API key yet, or another problem, each with the one button that helps."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.i18n import tr

PROBLEMS = ("store_error", "store_warning", "config_warning", "backup_warning")


@dataclass(frozen=True)
class Notice:
    text: str
    button: str
    restore: bool  # the button opens Restore from backup (else Settings)
    detail: str = ""
    on_this_computer: bool = False  # a second button: Settings with the own model chosen


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
                         problem=status["local_problem"]), tr("Open settings…"), False)
    if not status.get("client_initialized"):
        also = problems[0] if problems else status.get("store_notice")
        return Notice(
            tr("No API key yet. Add the key of DeepSeek, OpenAI or another OpenAI-compatible "
               "service, or the address of a local server (llama.cpp, Ollama, LM Studio), "
               "or chat with a model on this computer. Your memory can be browsed without "
               "one.")
            + (f"\n{also}" if also else ""), tr("Open settings…"), False,
            on_this_computer=True)
    if problems:
        return Notice(problems[0], tr("Open settings…"), False)
    if status.get("store_notice"):
        return Notice(status["store_notice"], "", False)
    return None
