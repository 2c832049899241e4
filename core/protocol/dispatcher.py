"""Routes one packet to its handler and turns what happens into the answer.

The handlers live in `core.protocol.handlers`, one module per thing they serve, each
declared with `@handles(PacketType.X, schema)`; this module knows none of them by name.
What they work on is the backend (`core.backend.Backend`: the settings, the store, the
model session, the work between packets), seen through the members
`core.protocol.backend_interface.HandlerBackend` lists. This module knows nothing about
threads or life cycles: the host opens the backend, hands packets here from one thread,
and runs the backend's work between packets.
"""

from __future__ import annotations

import logging
import sqlite3
from typing import Any

from core.backend.backend import Progress, no_progress
from core.errors import CodedError, ErrorCode
from core.i18n import tr
from core.protocol import handlers
from core.protocol.backend_interface import HandlerBackend
from core.protocol.handlers.table import Refusal
from core.protocol.packets import Packet, PacketResponse, PacketType
from core.redaction import scrub
from core.store import describe_sqlite_error

log = logging.getLogger(__name__)

HANDLERS = handlers.load()


class Dispatcher:
    """The handler table in front of one backend."""

    def __init__(self, backend: Any) -> None:
        self.backend: Any = backend  # core.backend.Backend

    def handle(self, packet: Packet, progress: Progress = no_progress,
               reader: HandlerBackend | None = None) -> PacketResponse:
        """Answer one packet; never raises. The read lane passes its `Reader` (a backend
        with its own read-only store) and leaves the running packet's progress channel
        alone. No error it answers carries a known key, whoever put the words together."""
        if reader is not None:
            response = dispatch(reader, packet)
        else:
            backend = self.backend
            backend.progress = progress
            # what other programs (trulymem mcp, --tool) wrote is known before any
            # answer: the counts and events every client sees are the file's own
            backend.notice_outside_changes()
            try:
                response = dispatch(backend, packet)
            finally:
                backend.progress = no_progress
        if response.error:
            response.error = scrub(response.error)
        return response


def dispatch(backend: HandlerBackend, packet: Packet) -> PacketResponse:
    """The handler's answer to `packet`, or the refusal or failure it met."""
    if not isinstance(packet, Packet) or not isinstance(packet.type, PacketType):
        return PacketResponse.fail(getattr(packet, "id", "?"), tr("unknown packet type"))
    handler = HANDLERS.get(packet.type)
    if handler is None:
        return PacketResponse.fail(packet.id, tr("unknown packet type {type}",
                                                 type=packet.type.value))
    if not isinstance(packet.body, dict):
        return PacketResponse.fail(packet.id, tr("the packet body must be an object"))
    try:
        handler.check(packet.body)
        return PacketResponse.ok(packet.id, handler.run(backend, packet.body))
    except Refusal as refusal:
        return PacketResponse.refused(packet.id, refusal, refusal.data)
    except CodedError as error:
        return PacketResponse.refused(packet.id, error)
    except sqlite3.Error as error:
        return PacketResponse.fail(packet.id, describe_sqlite_error(error), ErrorCode.STORE)
    except Exception as error:  # a bug must not kill the backend thread
        log.exception("packet %s failed", packet.type.value)
        return PacketResponse.fail(packet.id, tr("internal error: {name}",
                                                 name=type(error).__name__),
                                   ErrorCode.INTERNAL)
