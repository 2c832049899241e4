"""TrulyMEM's backend: packets, server and client, the graph store, the memory tools and
their limits. Imports no Qt."""

from core.protocol.client import BackendClient
from core.protocol.packets import Packet, PacketResponse, PacketType
from core.protocol.server import BackendServer
from core.store import GraphStore, StoreError
from core.tools import TOOL_NAMES, ToolExecutor, openai_tools
from core.tools.limits import DEFAULT_LIMITS, ToolLimiter

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
