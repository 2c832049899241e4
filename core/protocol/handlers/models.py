"""The models this computer runs itself: the catalogue with what is here and what the
computer lacks, fetching one beside the chat (told as `model_download` events), stopping
a download, and removing a model."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING, Any

from core.errors import ErrorCode
from core.i18n import N_, tr
from core.models import catalogue, download, local, runtime_build
from core.protocol.handlers.table import NAME, Refusal, handles
from core.protocol.packets import PacketType

if TYPE_CHECKING:
    from core.protocol.backend_interface import HandlerBackend

MODEL = {"model": NAME}


@handles(PacketType.LOCAL_MODELS, {}, reads=True)
def local_models(backend: HandlerBackend, _body: dict[str, Any]) -> dict[str, Any]:
    """Each model of the catalogue: what it is, whether it is here (or part of it, or
    being fetched), what this computer lacks for it, and whether the chat uses it. It
    reads no memory and changes nothing, so the read lane answers it during a turn."""
    folder = catalogue.models_folder()
    fetching = backend.fetcher.running()
    config = backend.config
    chosen = config.model if local.is_own(config.base_url) else None
    rows = []
    for model in catalogue.CATALOGUE:
        here = download.state(model, folder)
        rows.append({
            "id": model.id, "name": model.name, "repo": model.repo, "file": model.file,
            "size": model.size, "ram_gb": model.ram_gb, "licence": model.licence,
            "languages": tr(model.languages), "tools": tr(model.tools),
            "measured": tr(model.measured) if model.measured else "",
            "default": model.id == catalogue.DEFAULT, "state": here["state"],
            "bytes": fetching.get(model.id, here)["have" if model.id in fetching
                                                  else "bytes"],
            "fetching": model.id in fetching, "chosen": model.id == chosen,
            "problems": local.machine_problems(model, runtime=False)})
    return {"folder": str(folder), "free_disk": _free_disk(folder),
            "free_memory_gb": local.free_memory_gb(), "models": rows,
            "source": catalogue.source(),
            "runtime": runtime_build.state(backend.runtime_builder)}


@handles(PacketType.BUILD_RUNTIME, {})
def build_runtime(backend: HandlerBackend, _body: dict[str, Any]) -> dict[str, Any]:
    """Start building the runtime (a source checkout has none until then); its progress
    and end are `runtime_build` events. Refused, saying what to install, where it cannot."""
    started = backend.runtime_builder.start()
    if not started["success"]:
        raise Refusal(N_("the runtime is not built: {error}"), ErrorCode.INVALID,
                      error=started["error"])
    return started["data"]


@handles(PacketType.STOP_RUNTIME_BUILD, {})
def stop_runtime_build(backend: HandlerBackend, _body: dict[str, Any]) -> dict[str, Any]:
    if not backend.runtime_builder.cancel():
        raise Refusal(N_("the runtime is not being built"), ErrorCode.NOTHING_TO_DO)
    return {"stopping": True}


@handles(PacketType.MODEL_GET, MODEL)
def model_get(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    """Start fetching a model beside the chat; its progress and end are `model_download`
    events. A model already here answers at once."""
    model = _model(body)
    if download.state(model, catalogue.models_folder())["state"] == "installed":
        return {"model": model.id, "have": model.size, "total": model.size,
                "installed": True}
    return {**backend.fetcher.start(model), "installed": False}


@handles(PacketType.MODEL_CANCEL, MODEL)
def model_cancel(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    """Stop a download; what came stays, and the next MODEL_GET goes on from there."""
    model = _model(body)
    if not backend.fetcher.cancel(model.id):
        raise Refusal(N_("{model} is not being fetched"), ErrorCode.NOTHING_TO_DO,
                      model=model.id)
    return {"model": model.id, "stopping": True}


@handles(PacketType.MODEL_REMOVE, MODEL)
def model_remove(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    """Delete a model's file (and any part of it). The model the chat runs on is kept
    until another is chosen: removing it would break the next message."""
    model = _model(body)
    config = backend.config
    if local.is_own(config.base_url) and config.model == model.id:
        raise Refusal(N_("{model} is the model the chat runs on: choose another one first"),
                      ErrorCode.INVALID, model=model.id)
    backend.fetcher.cancel(model.id)
    backend.fetcher.wait(5.0)
    local.stop(model.id)
    done = download.remove(model, catalogue.models_folder())
    if not done["success"]:
        raise Refusal(N_("{model} not removed: {error}"), ErrorCode.INVALID, model=model.id,
                      error=done["error"])
    return {"model": model.id, "freed": done["data"]["freed"]}


def _model(body: dict[str, Any]) -> catalogue.Model:
    model = catalogue.find(body.get("model") or "")
    if model is None:
        raise Refusal(N_("no local model named {name}; the ids are: {ids}"),
                      ErrorCode.NOT_FOUND, name=body.get("model") or "",
                      ids=", ".join(m.id for m in catalogue.CATALOGUE))
    return model


def _free_disk(folder) -> int | None:
    """Free bytes where the models go (its nearest existing parent: it may not exist)."""
    for place in (folder, *folder.parents):
        if place.exists():
            return shutil.disk_usage(place).free
    return None
