"""The 17 memory tools: schemas, validation, handlers and the executor that runs them."""

from core.tools.executor import ToolExecutor
from core.tools.schemas import TOOL_NAMES, openai_tools

__all__ = ["TOOL_NAMES", "ToolExecutor", "openai_tools"]
