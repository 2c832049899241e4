"""TrulyMEM's backend: packets, server and client, the graph store, the memory tools and
their limits. Imports no Qt.

The seed's names (`from core import BackendServer, BackendClient, Packet, PacketType,
PacketResponse`) are loaded on first use, so that `import core.store` or `core.tools`
does not pay for the LLM client: a child process that only writes to the store is ready
in a fraction of the time.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "BackendClient": "core.protocol.client",
    "BackendServer": "core.protocol.server",
    "Packet": "core.protocol.packets",
    "PacketResponse": "core.protocol.packets",
    "PacketType": "core.protocol.packets",
    "GraphStore": "core.store",
    "StoreError": "core.store",
    "DEFAULT_LIMITS": "core.tools.limits",
    "ToolLimiter": "core.tools.limits",
    "TOOL_NAMES": "core.tools",
    "ToolExecutor": "core.tools",
    "openai_tools": "core.tools",
}

__all__ = [
    "DEFAULT_LIMITS",
    "TOOL_NAMES",
    "BackendClient",
    "BackendServer",
    "GraphStore",
    "Packet",
    "PacketResponse",
    "PacketType",
    "StoreError",
    "ToolExecutor",
    "ToolLimiter",
    "openai_tools",
]

if TYPE_CHECKING:
    from core.protocol.client import BackendClient
    from core.protocol.packets import Packet, PacketResponse, PacketType
    from core.protocol.server import BackendServer
    from core.store import GraphStore, StoreError
    from core.tools import TOOL_NAMES, ToolExecutor, openai_tools
    from core.tools.limits import DEFAULT_LIMITS, ToolLimiter


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'core' has no attribute {name!r}")
    value = getattr(import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value
