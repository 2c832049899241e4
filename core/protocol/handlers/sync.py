"""Sync: the state of this device's set, starting or joining one, and syncing now."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import ErrorCode
from core.events import Event
from core.i18n import N_
from core.protocol.handlers.table import NAME, TEXT, Refusal, handles
from core.protocol.packets import PacketType
from core.sync.service import DeviceSync

if TYPE_CHECKING:
    from core.protocol.backend_interface import HandlerBackend


def _sync(backend: HandlerBackend) -> DeviceSync:
    return DeviceSync(backend.need_store(), backend.folder)


@handles(PacketType.SYNC_STATUS, {"code": {"type": "boolean"}}, reads=True)
def sync_status(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    """This device's set, the others, the conflicts (newest first) and refused files."""
    sync = _sync(backend)
    status = sync.status()
    if status["joined"]:
        status["conflict_list"] = sync.conflicts()
        if body.get("code"):  # to pair one more device
            status["code"] = sync.pairing_code()
    return status


def _folder(body: dict[str, Any]) -> Path:
    folder = Path(body["folder"]).expanduser()
    if folder.exists() and not folder.is_dir():
        raise Refusal(N_("{folder} is not a folder"), ErrorCode.INVALID, folder=str(folder))
    return folder


@handles(PacketType.SYNC_START, {"type": "object", "required": ["folder"],
                                 "properties": {"folder": NAME, "name": TEXT}},
         long_running=True)
def sync_start(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    result = _sync(backend).start(_folder(body), body.get("name") or None)
    _renumbered(backend)
    return result


def _renumbered(backend: HandlerBackend) -> None:
    """The memory's rows moved into this device's range: the conversation shown is found
    again by use, and the window reads everything again (`renumbered`)."""
    backend.ids_moved()
    backend.events(Event.SYNC, {**backend.sync.state(backend.store), "renumbered": True})


@handles(PacketType.SYNC_JOIN, {"type": "object", "required": ["folder", "code"],
                                "properties": {"folder": NAME, "code": NAME, "name": TEXT}},
         long_running=True)
def sync_join(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    result = backend.sync.join(backend.need_store(), _folder(body), body["code"],
                               body.get("name") or None)
    _renumbered(backend)
    return result


@handles(PacketType.SYNC_NOW, {}, long_running=True)
def sync_now(backend: HandlerBackend, _body: dict[str, Any]) -> dict[str, Any]:
    """Sync now; what arrived is told as changes made elsewhere (`SyncSchedule.arrived`)."""
    return backend.sync.sync_now(backend.need_store(), backend.events)


@handles(PacketType.SYNC_LEAVE, {})
def sync_leave(backend: HandlerBackend, _body: dict[str, Any]) -> dict[str, Any]:
    result = _sync(backend).leave()
    backend.events(Event.SYNC, backend.sync.state(backend.store))
    return result
