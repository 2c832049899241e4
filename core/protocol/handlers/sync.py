"""Sync: the state of this device's set, starting or joining one, and syncing now."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import ErrorCode
from core.i18n import N_
from core.protocol.handlers.table import NAME, TEXT, Refusal, handles
from core.protocol.packets import PacketType
from core.sync.service import DeviceSync

if TYPE_CHECKING:
    from core.protocol.dispatcher import Dispatcher


def _sync(backend: Dispatcher) -> DeviceSync:
    return DeviceSync(backend.need_store(), Path(backend.home or backend.db_path.parent))


@handles(PacketType.SYNC_STATUS, {}, reads=True)
def sync_status(backend: Dispatcher, _body: dict[str, Any]) -> dict[str, Any]:
    return _sync(backend).status()


def _folder(body: dict[str, Any]) -> Path:
    folder = Path(body["folder"]).expanduser()
    if folder.exists() and not folder.is_dir():
        raise Refusal(N_("{folder} is not a folder"), ErrorCode.INVALID, folder=str(folder))
    return folder


@handles(PacketType.SYNC_START, {"type": "object", "required": ["folder"],
                                 "properties": {"folder": NAME, "name": TEXT}},
         long_running=True)
def sync_start(backend: Dispatcher, body: dict[str, Any]) -> dict[str, Any]:
    return _sync(backend).start(_folder(body), body.get("name") or None)


@handles(PacketType.SYNC_JOIN, {"type": "object", "required": ["folder", "code"],
                                "properties": {"folder": NAME, "code": NAME, "name": TEXT}},
         long_running=True)
def sync_join(backend: Dispatcher, body: dict[str, Any]) -> dict[str, Any]:
    return _sync(backend).join(_folder(body), body["code"], body.get("name") or None)


@handles(PacketType.SYNC_NOW, {}, long_running=True)
def sync_now(backend: Dispatcher, _body: dict[str, Any]) -> dict[str, Any]:
    return _sync(backend).sync_now()
