"""TrulyMEM's backend: the graph store, the memory tools and their limits. Imports no Qt."""

from core.limits import DEFAULT_LIMITS, ToolLimiter
from core.store import GraphStore, StoreError
from core.tools import TOOL_NAMES, ToolExecutor, openai_tools

__all__ = [
    "DEFAULT_LIMITS",
    "TOOL_NAMES",
    "GraphStore",
    "StoreError",
    "ToolExecutor",
    "ToolLimiter",
    "openai_tools",
]
