"""Settings and status: the config (declared once, in `core.config`), the tool limits,
and the endpoint's models and connection."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core import desktop_files
from core.config import READABLE, SETTABLE, updated
from core.endpoint import connection as endpoint
from core.endpoint import profiles
from core.errors import ErrorCode
from core.i18n import N_, tr
from core.models import local
from core.models.catalogue import CATALOGUE
from core.protocol.handlers.table import Refusal, handles
from core.protocol.packets import PacketType
from core.share.budget import apps_hour
from core.share.tokens import new_token
from core.tools.limits import validate_limits
from core.turn.run import NO_KEY

if TYPE_CHECKING:
    from core.protocol.backend_interface import HandlerBackend

# Whether TrulyMEM starts at login: read and set with the config, kept as an XDG autostart
# entry (core.desktop_files), written on the backend thread, since a home folder on a
# network mount can stall a write.
START_AT_LOGIN = "start_at_login"
UNSAVED = {"api_key": {"type": "string"}, "base_url": {"type": "string"},
           "model": {"type": "string"}}


@handles(PacketType.GET_STATUS, {}, reads=True)
def get_status(backend: HandlerBackend, _body: dict[str, Any]) -> dict[str, Any]:
    return backend.status()


@handles(PacketType.GET_CONFIG, {}, reads=True)
def get_config(backend: HandlerBackend, _body: dict[str, Any]) -> dict[str, Any]:
    config = backend.config
    return {**{name: getattr(config, name) for name in READABLE},
            "shortcuts": dict(config.shortcuts), "meaning": backend.meaning_status(),
            START_AT_LOGIN: desktop_files.starts_at_login(),
            "home": str(backend.folder),
            **backend.settings.key_place.public()}  # where the key is kept: keychain or file


@handles(PacketType.SET_CONFIG, {"type": "object",
                                 "propertyNames": {"enum": [*SETTABLE, START_AT_LOGIN]}})
def set_config(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    changes = {k: v for k, v in body.items() if v is not None}
    login = changes.pop(START_AT_LOGIN, None)
    if changes.get("share_memory") is True and not backend.settings.saved.share_token:
        changes["share_token"] = new_token()  # what HTTP clients send; see core.share
    if changes or login is None:
        backend.save_config(changes)
        backend.make_session()
    if login is not None:  # not in the config file: the autostart entry is the setting
        done = desktop_files.set_start_at_login(bool(login),
                                                backend.folder)
        if not done["success"]:
            raise Refusal(N_("starting at login not changed: {error}"), ErrorCode.STORE,
                          error=done["error"])
    return {"status": "config_updated"}


@handles(PacketType.APPS_ACTIVITY, {}, reads=True)
def apps_activity(backend: HandlerBackend, _body: dict[str, Any]) -> dict[str, Any]:
    """What other apps wrote and took away in the last hour, against their budgets."""
    config = backend.config
    return apps_hour(backend.need_store(), config.tool_limits["destroyed_rows_max"],
                     config.share_write_rows)


@handles(PacketType.GET_TOOL_LIMITS, {}, reads=True)
def get_tool_limits(backend: HandlerBackend, _body: dict[str, Any]) -> dict[str, Any]:
    return dict(backend.limiter.limits)


@handles(PacketType.SET_TOOL_LIMITS)
def set_tool_limits(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    """Limits take effect only once they are saved: a refused write changes nothing."""
    try:
        limits = validate_limits(body, backend.limiter.limits)
    except ValueError as error:
        raise Refusal(str(error)) from None
    backend.save_config({"tool_limits": limits})
    backend.limiter.limits = dict(limits)
    return {"status": "tool_limits_updated", "limits": dict(backend.limiter.limits)}


def _unsaved(backend: HandlerBackend, body: dict[str, Any], names: tuple[str, ...]) -> Any:
    """The config with the dialog's unsaved values (a key, an address) over it."""
    config = updated(backend.config, **{k: body[k] for k in names if body.get(k)})
    if local.is_own(config.base_url):  # the app's own runtime: its server, no key
        served = local.serve(config.model, backend.folder / "logs")
        if not served["success"]:
            raise Refusal(served["error"])
        return updated(config, base_url=served["data"]["base_url"],
                       api_key=config.api_key or local.LOCAL)
    if not config.api_key:
        raise Refusal(NO_KEY, ErrorCode.NO_KEY)
    return config


@handles(PacketType.TEST_CONNECTION, UNSAVED, long_running=True)
def test_connection(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    """List the endpoint's models with the given (unsaved) settings: this checks the
    address and the key without spending tokens, then whether the model exists."""
    config = _unsaved(backend, body, ("api_key", "base_url", "model"))
    models, elapsed_ms = endpoint.list_models(config)
    found = config.model in models
    # llama-server lists the one model it loaded and answers to any name.
    serves_any = profiles.is_local(config.base_url) and len(models) == 1
    if found:
        verdict = tr("The model {model} is available.", model=config.model)
    elif serves_any:
        verdict = tr("The server runs {model}, which answers whatever model name is set.",
                     model=models[0])
    else:
        listed = (", ".join(models[:8]) or tr("none")) + (" …" if len(models) > 8 else "")
        verdict = tr("The server does not list the model {model}; it lists {models}.",
                     model=config.model, models=listed)
    message = tr("Connected to {url} in {ms} ms. {verdict}", url=config.base_url,
                 ms=f"{elapsed_ms:.0f}", verdict=verdict)
    return {"message": message, "model_found": found or serves_any, "models": list(models),
            "elapsed_ms": elapsed_ms, "shutdowns": models.shutdowns}


@handles(PacketType.LIST_MODELS, {**UNSAVED, "refresh": {}}, long_running=True)
def list_models(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    """The endpoint's models, for the model picker: kept for the session per address,
    fetched again with `refresh`. `base_url` and `api_key` may name unsaved settings."""
    config = updated(backend.config, **{k: body[k] for k in ("api_key", "base_url")
                                        if body.get(k)})
    if local.is_own(config.base_url):  # the catalogue, whatever runs now
        return {"models": [m.id for m in CATALOGUE], "current": config.model,
                "shutdowns": {}}
    key = (config.base_url, config.api_key)
    if body.get("refresh") or key not in backend.models:
        backend.models[key] = endpoint.list_models(
            _unsaved(backend, body, ("api_key", "base_url")))[0]
    listed = backend.models[key]
    # the shutdown dates the endpoint announces ("YYYY-MM-DD"), for the models that have one
    return {"models": list(listed), "current": config.model,
            "shutdowns": dict(getattr(listed, "shutdowns", {}))}


