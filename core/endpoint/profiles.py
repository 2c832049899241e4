"""What a turn offers the model: which tool set, and at what temperature.

Local servers (llama.cpp, Ollama, LM Studio) run small models on the person's own
machine, where every prompt token costs time and sampling at the server's default (0.8 in
llama-server) makes tool-call JSON erratic: they get the compact tool set and a low
temperature unless the settings say otherwise. Everyone gets the extra tools (archive,
cleanup, deleting tasks…) only in a turn whose message asks for that kind of work.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any
from urllib.parse import urlsplit

LOCAL_TEMPERATURE = 0.3
# llama-server and llama-cpp-python generate until the context is full unless told when to
# stop; a small model that starts repeating itself then runs for minutes.
LOCAL_MAX_TOKENS = 2048
_LOCAL_NAMES = ("localhost", "host.docker.internal")
# Words that ask for maintenance; a turn whose message has one offers every tool.
_MAINTENANCE = re.compile(
    r"\b(archiv\w*|clean ?up|tidy|trash|wipe|reset|clear (the|your|my|all|everything)|"
    r"delet\w*|remov\w*|persona)\b"
    r"|归档|存档|清理|整理|清空|删除|删掉|移除|重置|统计|人设",
    re.IGNORECASE)


def is_local(base_url: str) -> bool:
    """The endpoint runs on this machine or the local network ("local": the app's own
    runtime)."""
    if base_url.strip().casefold() == "local":
        return True
    host = (urlsplit(base_url).hostname or "").lower()
    if host in _LOCAL_NAMES or host.endswith((".local", ".lan", ".localhost")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


def tool_set(setting: str, base_url: str, message: str) -> str:
    """"full", "core" or "compact" for this turn; `setting` is the config's `tool_set`
    ("auto" or one of those)."""
    if _MAINTENANCE.search(message):
        return "full"
    if setting in ("core", "full", "compact"):
        return setting
    return "compact" if is_local(base_url) else "core"


def max_tokens(base_url: str) -> int | None:
    """A cap on one reply for local servers; cloud services have their own."""
    return LOCAL_MAX_TOKENS if is_local(base_url) else None


# Two rounds of tool calls, then the answer: the 1.5B model otherwise went on calling
# for all twelve round trips (10 of 15 turns without an answer).
LOCAL_TOOL_ROUNDS = 2
# Seconds to the first token, between chunks and for the whole turn. A small model on a
# laptop reads a long prompt for minutes; the settings' presets set these too, and an
# address typed by hand gets them as well.
CLOUD_TIMEOUTS = (120.0, 60.0, 300.0)
LOCAL_TIMEOUTS = (600.0, 120.0, 1800.0)


def timeouts(config: Any) -> tuple[float, float, float]:
    """(first token, between chunks, whole turn) for `config`: a local server left at the
    cloud defaults gets the local ones; a value the person chose stays."""
    chosen = (config.first_token_timeout, config.request_timeout, config.turn_timeout)
    if not is_local(config.base_url):
        return chosen
    return tuple(local if value == cloud else value  # type: ignore[return-value]
                 for value, cloud, local in zip(chosen, CLOUD_TIMEOUTS, LOCAL_TIMEOUTS,
                                                strict=True))


SMALL_MODEL_BILLIONS = 8.0
_SIZE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*b(?![a-z])", re.IGNORECASE)
# The names the presets suggest for servers that serve whatever model they loaded.
_UNNAMED = {"local", "local-model", "default", ""}


def memory_writer(setting: str, base_url: str, model: str = "") -> str:
    """"tools" (the model's calls write the memory) or "extract" (a step after the answer
    does): `setting` is the config's memory_writer. Measured on Qwen2.5-Coder-1.5B under
    llama-server, tool calls stored 2 of 7 facts and answered 0 of 6 questions, so "auto"
    extracts for a local server whose model is small by its name ("qwen2.5:1.5b",
    "phi-3-mini-3.8b") or unnamed (llama-server's "local-model")."""
    if setting in ("tools", "extract"):
        return setting
    if not is_local(base_url):
        return "tools"
    name = model.strip().casefold()
    sizes = [float(n) for n in _SIZE.findall(name)]
    small = name in _UNNAMED or (bool(sizes) and max(sizes) <= SMALL_MODEL_BILLIONS)
    return "extract" if small else "tools"


def is_deepseek(base_url: str) -> bool:
    """DeepSeek's own API (where its thinking mode applies)."""
    host = (urlsplit(base_url).hostname or "").lower()
    return host == "deepseek.com" or host.endswith(".deepseek.com")


def request_options(thinking: bool, base_url: str) -> dict[str, Any]:
    """Provider options sent in the request body. DeepSeek documents thinking mode as
    `{"thinking": {"type": "enabled" | "disabled"}}` and enables it when it is not sent,
    so it is always sent there; other servers may refuse a field they do not know."""
    if is_deepseek(base_url):
        return {"thinking": {"type": "enabled" if thinking else "disabled"}}
    return {}


def temperature(setting: float | None, base_url: str) -> float | None:
    """The temperature to send, or None to leave the server's default."""
    if setting is not None:
        return setting
    return LOCAL_TEMPERATURE if is_local(base_url) else None


def answer_temperature(setting: float | None) -> float:
    """A question of fact answered from the memory: the most likely words, every time,
    unless the person set a temperature (LoCoMo conv-43 on the 1.5B model: token F1 0.246
    at 0.3 in a chat, 0.287 at 0 with the same prompt)."""
    return setting if setting is not None else 0.0
