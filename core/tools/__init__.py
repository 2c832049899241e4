"""The memory tools: declared once each in the registry, at their handlers (in
`memory`, `persona` and `tasks`); schemas, validation, limits and the executor read it."""

from core.tools import memory, persona, tasks  # declares the tools first
from core.tools.executor import ToolExecutor
from core.tools.registry import REGISTRY, ToolSpec
from core.tools.schemas import TOOL_NAMES, openai_tools

__all__ = ["REGISTRY", "TOOL_NAMES", "ToolExecutor", "ToolSpec", "memory", "openai_tools",
           "persona", "tasks"]
