"""System prompt templates, loaded as package data so they are found in the frozen build."""

from __future__ import annotations

import time
from importlib.resources import files


def system_prompt(snapshot: str) -> str:
    template = files(__package__).joinpath("system.md").read_text(encoding="utf-8")
    return template.replace("{today}", time.strftime("%Y-%m-%d")).replace(
        "{snapshot}", snapshot)
