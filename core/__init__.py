"""TrulyMEM's backend: packets, server and client, the graph store, the memory tools and
their limits. Imports no Qt."""

from core.client import BackendClient
from core.limits import DEFAULT_LIMITS, ToolLimiter
from core.packets import Packet, PacketResponse, PacketType
from core.server import BackendServer
from core.store import GraphStore, StoreError
from core.tools import TOOL_NAMES, ToolExecutor, openai_tools

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
