"""The packet handlers, declared next to their code (see `table`), one module per thing
they serve: turns, memory, browsing, conversations, settings, backups, past
conversations, sync, the models this computer runs. `load()` imports
them all, which fills the table."""

from __future__ import annotations

from core.protocol.handlers.table import HANDLERS, Handler
from core.protocol.packets import PacketType


def load() -> dict[PacketType, Handler]:
    """Import every handler module once; answers the filled table."""
    from core.protocol.handlers import (  # noqa: F401, PLC0415
        backups,
        browsing,
        conversations,
        history_import,
        memory,
        models,
        settings,
        sync,
        turns,
    )

    return HANDLERS
