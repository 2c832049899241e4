"""The one registry of tools: each tool is declared once, at its handler.

A declaration carries everything the rest of the program needs to know about a tool: its
name, description and JSON schema (for the model and for validation), its limit category,
whether it writes, whether and how it destroys rows (for the per-turn budget and the
approval card), who may call it, and which tool set offers it to the model. Schemas,
validation, limits and the executor all read this table; nothing else lists the tools.

Audiences: the model (in a turn), the person (the window, `--tool`), and other apps (the
MCP server, `core.share`). A tool offered to other apps carries a second description,
`for_apps`, written for an outside agent that has never heard of this program.

Tool sets (the `tool_set` setting names the same axis): every turn offers the CORE tools,
which an ordinary conversation needs; the FULL set adds the rest (archive, cleanup,
deleting tasks, clearing the persona…) only when the person's message asks for that kind
of work, since models ran them unprompted. A tool with
a `compact` form (a shorter description over a subset of its fields) is offered in that
form to local models, for which every prompt token is seconds of waiting.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.store import GraphStore
from core.tools.base import Outcome

Handler = Callable[[GraphStore, dict[str, Any]], Outcome]
Category = str | Callable[[dict[str, Any]], str]

MODEL, PERSON, APPS = "model", "person", "apps"
CORE, FULL = "core", "full"  # the tool sets of the `tool_set` setting
Prepare = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]
    handler: Handler
    category: Category  # the per-turn limit it counts against, or a function of the arguments
    writes: bool  # False: runs without taking the write lock
    destroys: str | None  # what it does to rows it takes away ("delete or supersede"), or None
    audience: frozenset[str]
    tool_set: str = CORE  # CORE: offered every turn; FULL: when the person asks for such work
    compact: tuple[str, dict[str, Any]] | None = None  # (description, parameters)
    prepare: Prepare | None = None  # maps old field names onto the schema's, before checks
    for_apps: str | None = None  # the description other apps' agents read (MCP)

    def category_for(self, arguments: dict[str, Any] | None) -> str:
        if callable(self.category):
            return self.category(arguments or {})
        return self.category


REGISTRY: dict[str, ToolSpec] = {}


def tool(name: str, description: str, parameters: dict[str, Any], *, category: Category,
         writes: bool = True, destroys: str | None = None,
         audience: tuple[str, ...] = (MODEL, PERSON), tool_set: str = CORE,
         compact: tuple[str, dict[str, Any]] | None = None,
         prepare: Prepare | None = None,
         for_apps: str | None = None) -> Callable[[Handler], Handler]:
    """Declare the decorated function as the handler of tool `name`; `for_apps` offers it
    to other apps too, with that description."""

    def register(handler: Handler) -> Handler:
        if name in REGISTRY:
            raise ValueError(f"tool {name} is declared twice")
        audiences = frozenset(audience) | ({APPS} if for_apps else set())
        REGISTRY[name] = ToolSpec(name, description, parameters, handler, category, writes,
                                  destroys, audiences, tool_set, compact, prepare, for_apps)
        return handler

    return register
