"""The config file: a typed schema with defaults, validation, versioning and atomic writes.

The file holds an API key, so it is written readable by its owner only, and the key never
appears in a repr, a log line or an error message.

Since version 2 the file holds only what the person changed: a setting left at its
default follows the program's default, so a better default in a new release reaches
everyone who never chose otherwise. Older files are migrated as they are read, one
version at a time (`MIGRATIONS`), and written back in the new form at the next save.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from core.errors import CodedError
from core.i18n import tr
from core.paths import aside_path
from core.tools.limits import DEFAULT_LIMITS, validate_limits

CONFIG_VERSION = 3
DEFAULT_BASE_URL = "https://api.deepseek.com"
# DeepSeek's current name (its Models & Pricing page, 2026-12): deepseek-flash, which is
# DeepSeek-V4.1-Flash; deepseek-v4-flash still answers, served by the same model. The old
# names deepseek-chat and deepseek-reasoner were retired on 2026-07-24; they had meant the
# flash model without thinking (deepseek-chat) and with it (deepseek-reasoner).
DEFAULT_MODEL = "deepseek-flash"
RETIRED_MODELS = {"deepseek-chat": (DEFAULT_MODEL, False),
                  "deepseek-reasoner": (DEFAULT_MODEL, True)}


class ConfigError(CodedError, ValueError):
    """A value that does not fit the schema; the message names the field."""


Check = Callable[[str, Any], Any]


def mask(key: str) -> str:
    return f"…{key[-4:]}" if len(key) >= 12 else ("set" if key else "")


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ConfigError(tr("{name} must be text", name=name))
    value = value.strip()
    if name == "base_url" and not value.startswith(("http://", "https://")) \
            and value.casefold() != "local":  # "local": the app's own runtime
        raise ConfigError(tr("base_url must start with http:// or https://, or be local "
                             "(a model this computer runs itself)"))
    if name == "model" and not value:
        raise ConfigError(tr("model must not be empty"))
    if name == "api_key" and any(not 33 <= ord(c) < 127 for c in value):
        raise ConfigError(tr("the API key has a character an HTTP header cannot carry (a "
                             "space, an accent, a symbol from another script or a control "
                             "character): copy it again from the provider's page"))
    return value


INSTRUCTIONS_MOST = 2000  # characters of the person's own instructions


def _instructions(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ConfigError(tr("{name} must be text", name=name))
    value = value.strip()
    if len(value) > INSTRUCTIONS_MOST:
        raise ConfigError(tr("{name} may be {most} characters at most ({length} given)",
                             name=name, most=INSTRUCTIONS_MOST, length=len(value)))
    return value


NAME_MOST = 60  # characters of a memory's own name


def _memory_name(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ConfigError(tr("{name} must be text", name=name))
    value = " ".join(value.split())  # one line: it names a tray icon and a window
    if len(value) > NAME_MOST:
        raise ConfigError(tr("{name} may be {most} characters at most ({length} given)",
                             name=name, most=NAME_MOST, length=len(value)))
    return value


def _seconds(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ConfigError(tr("{name} must be a positive number of seconds", name=name))
    return float(value)


def _temperature(name: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 2:
        raise ConfigError(tr("{name} must be a number from 0 to 2, or null for automatic",
                             name=name))
    return float(value)


def _tool_set(name: str, value: Any) -> str:
    if value not in ("auto", "core", "compact", "full"):
        raise ConfigError(tr("{name} must be auto, core, compact or full", name=name))
    return value


def _writer(name: str, value: Any) -> str:
    if value not in ("auto", "tools", "extract"):
        raise ConfigError(tr("{name} must be auto, tools or extract", name=name))
    return value


def _hours(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ConfigError(tr("{name} must be a positive number of hours", name=name))
    return float(value)


def _language(name: str, value: Any) -> str:
    if value not in ("system", "en", "zh_CN"):
        raise ConfigError(tr("{name} must be system, en or zh_CN", name=name))
    return value


def _token(name: str, value: Any) -> str:
    if not isinstance(value, str) or (value and (
            len(value) < 16 or not all(c.isascii() and (c.isalnum() or c in "-_")
                                       for c in value))):
        raise ConfigError(tr("{name} must be at least 16 letters, digits, - or _", name=name))
    return value


def _port(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1024 <= value <= 65535:
        raise ConfigError(tr("{name} must be a port number from 1024 to 65535", name=name))
    return value


def _flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(tr("{name} must be true or false", name=name))
    return value


def _count(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(tr("{name} must be a whole number of at least 1", name=name))
    return value


def _limits(name: str, value: Any) -> dict[str, int]:
    if not isinstance(value, dict):
        raise ConfigError(tr("{name} must be an object", name=name))
    try:
        return validate_limits(value)
    except ValueError as error:
        raise ConfigError(f"{name}: {error}") from None


def _keymap(name: str, value: Any) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ConfigError(tr("{name} must map action names to key sequences", name=name))
    return value


def setting(default: Any = None, check: Check = _flag, about: str = "", *,
            packets: str = "rw", most: float | None = None,
            factory: Callable[[], Any] | None = None) -> Any:
    """One setting, declared once: its default, its checker (which answers the value in
    its stored form), what it is for, whether the packets read ("r") and write ("w") it,
    and the largest value the window offers. The config file, GET_CONFIG and SET_CONFIG,
    and the settings dialog all read this."""
    meta = {"check": check, "about": about, "packets": packets, "most": most}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


@dataclass
class Config:
    version: int = setting(CONFIG_VERSION, _count, "the file's format", packets="")
    api_key: str = setting("", _text, "the endpoint's key; never shown in logs")
    base_url: str = setting(DEFAULT_BASE_URL, _text, "the OpenAI-compatible endpoint")
    model: str = setting(DEFAULT_MODEL, _text, "the model asked for")
    request_timeout: float = setting(60.0, _seconds, "seconds between two chunks of a reply",
                                     most=3600)
    turn_timeout: float = setting(300.0, _seconds, "seconds a whole turn may take",
                                  most=24 * 3600)
    first_token_timeout: float = setting(120.0, _seconds, "seconds to the first token "
                                         "(keep-alives do not count)", most=3600)
    temperature: float | None = setting(None, _temperature, "None: 0.3 for local servers, "
                                        "the server's own else")
    thinking: bool = setting(False, _flag, "DeepSeek's thinking mode (others ignore it)")
    instructions: str = setting("", _instructions, "the person's own words on how the "
                                "assistant answers: every turn's instructions end with them")
    memory_name: str = setting("", _memory_name, "what this memory is called in the tray and "
                               "the title bar (empty: its folder's name, where not the "
                               "default one)")
    tool_set: str = setting("auto", _tool_set, "auto (compact for local servers, else "
                            "core), core, compact or full")
    memory_writer: str = setting("auto", _writer, "who writes the memory: the model's tool "
                                 "calls, or a step after each answer (auto: the step for "
                                 "small local models)")
    max_round_trips: int = setting(12, _count, "model requests in one turn", most=50)
    trash_days: int = setting(30, _count, "deleted memories stay restorable this many days",
                              most=3650)
    recall_by_meaning: bool = setting(True, _flag, "rank recall by embeddings as well as "
                                      "by words")
    language: str = setting("system", _language, "the window's and the terminal's words: "
                            "system, en or zh_CN")
    share_memory: bool = setting(False, _flag, "other apps may use the memory over MCP")
    share_read_only: bool = setting(False, _flag, "…to read it only")
    share_token: str = setting("", _token, "what an app sends to `trulymem mcp --http`; "
                               "made when first shared")
    share_write_rows: int = setting(300, _count, "rows one app session may add or change "
                                    "(all apps together three times that an hour); past "
                                    "it a call waits for the person", most=100_000)
    share_port: int = setting(8765, _port, "where `trulymem mcp --http` listens, on "
                              "127.0.0.1 only", packets="r")
    backup_every_hours: float = setting(1.0, _hours, "at most one backup per this much "
                                        "time (and at exit)", packets="")
    backups_kept: int = setting(7, _count, "the newest backups kept…", packets="")
    weekly_backups_kept: int = setting(4, _count, "…plus the newest of each of this many "
                                       "past weeks", packets="")
    # setting() makes a dataclass field with a default_factory: no shared mutable default
    tool_limits: dict[str, int] = setting(  # noqa: RUF009
        check=_limits, about="per-turn caps on the memory tools (their own packets)",
        packets="", factory=lambda: dict(DEFAULT_LIMITS))
    shortcuts: dict[str, str] = setting(  # noqa: RUF009
        check=_keymap, about="the person's own key sequences, by action", factory=dict)

    def __repr__(self) -> str:
        shown = {**asdict(self), "api_key": mask(self.api_key),
                 "share_token": mask(self.share_token)}
        return f"Config({shown})"

    def public(self) -> dict[str, Any]:
        """The config as data, with the key masked: for status and logs."""
        return {**asdict(self), "api_key": mask(self.api_key),
                "share_token": mask(self.share_token)}


SETTINGS = {f.name: f for f in fields(Config)}
CHECKS: dict[str, Check] = {name: f.metadata["check"] for name, f in SETTINGS.items()}
READABLE = tuple(name for name, f in SETTINGS.items() if "r" in f.metadata["packets"])
SETTABLE = tuple(name for name, f in SETTINGS.items() if "w" in f.metadata["packets"])


def most(name: str) -> float | None:
    """The largest value the window offers for a number setting."""
    return SETTINGS[name].metadata["most"]


def _check(name: str, value: Any) -> Any:
    if name not in CHECKS:
        raise ConfigError(tr("unknown setting {name}", name=repr(name)))
    return CHECKS[name](name, value)


def updated(config: Config, **changes: Any) -> Config:
    """A copy of `config` with `changes` applied; ConfigError if any is invalid."""
    values = asdict(config)
    for name, value in changes.items():
        values[name] = _check(name, value)
    return Config(**values)


def from_dict(data: Any) -> Config:
    """The config in `data`; ConfigError at the first problem (see `salvage` to keep the
    good values of a file with bad ones)."""
    config, problems = salvage(data)
    if problems:
        raise ConfigError(problems[0])
    return config


# Version 1 wrote every setting, defaults included; these were its defaults.
V1_DEFAULTS: dict[str, Any] = {
    "base_url": DEFAULT_BASE_URL, "model": DEFAULT_MODEL, "request_timeout": 60.0,
    "turn_timeout": 300.0, "max_round_trips": 12, "trash_days": 30,
    "backup_every_hours": 1.0, "backups_kept": 7, "weekly_backups_kept": 4,
    "shortcuts": {}, "api_key": "",
    "tool_limits": {"persona_query_max": 1, "persona_update_max": 1, "task_query_max": 4,
                    "task_update_max": 2, "memory_query_max": 20, "memory_update_max": 10,
                    "destroyed_rows_max": 20},
}


def _changed_only(data: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """`data` without the values equal to `defaults` (limits compared one by one)."""
    kept = {}
    for name, value in data.items():
        default = defaults.get(name)
        if isinstance(value, dict) and isinstance(default, dict) and name == "tool_limits":
            changed = {k: v for k, v in value.items() if default.get(k) != v}
            if changed:
                kept[name] = changed
        elif name not in defaults or value != default:
            kept[name] = value
    return kept


def _v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1 wrote the defaults of its day; forget those, keep the person's choices.
    (A value the person set that equals the old default is indistinguishable from it and
    follows the new default.)"""
    return _changed_only(data, V1_DEFAULTS)


def _v2_to_v3(data: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """DeepSeek retired its old model names: a saved one becomes the model it meant, with
    thinking as it was, and the person is told once."""
    retired = data.get("model")
    if retired in RETIRED_MODELS:
        data = dict(data)
        data["model"], thinking = RETIRED_MODELS[retired]
        if thinking:
            data["thinking"] = True
        notes.append(tr("DeepSeek retired the model name {old}; TrulyMEM now asks for {new}"
                        "{mode}, the model it stood for", old=retired, new=data["model"],
                        mode=tr(" with thinking") if thinking else ""))
    return data


# From version N to N + 1; a migration that changes what the person chose says so in notes.
MIGRATIONS = {1: lambda data, _notes: _v1_to_v2(data), 2: _v2_to_v3}


def _file_version(data: dict[str, Any]) -> int:
    version = data.get("version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ConfigError(tr("version must be a whole number from 1, not {version}",
                              version=repr(version)))
    if version > CONFIG_VERSION:
        raise ConfigError(tr("version {version} is newer than this program understands",
                              version=version))
    return version


def migrate(data: dict[str, Any], notes: list[str] | None = None) -> dict[str, Any]:
    """`data` brought up to CONFIG_VERSION; ConfigError for a version it cannot read.
    What the person should hear about the migration is added to `notes`."""
    version = _file_version(data)
    data = {k: v for k, v in data.items() if k != "version"}
    notes = [] if notes is None else notes
    while version < CONFIG_VERSION:
        data = MIGRATIONS[version](data, notes)
        version += 1
    return data


def salvage(data: Any, notes: list[str] | None = None) -> tuple[Config, list[str]]:
    """Every known, valid value of `data` over the defaults, and what was left out and
    why. Raises ConfigError only when `data` is not a config at all. What a migration
    changed is added to `notes`."""
    if not isinstance(data, dict):
        raise ConfigError(tr("the file does not hold a JSON object"))
    data = migrate(data, notes)
    known = {f.name for f in fields(Config)} - {"version"}
    unknown = sorted(set(data) - known)
    problems = [tr("unknown setting(s) ignored: {names}", names=", ".join(unknown))] \
        if unknown else []
    config = Config()
    for name in sorted(known & set(data)):
        try:
            config = updated(config, **{name: data[name]})
        except ConfigError as error:
            problems.append(tr("{problem} (the default is used)", problem=error))
    return config, problems


def to_file(config: Config) -> dict[str, Any]:
    """What the file holds for `config`: its version and the settings not at default."""
    return {"version": CONFIG_VERSION,
            **_changed_only({k: v for k, v in asdict(config).items() if k != "version"},
                            asdict(Config()))}


def load_config(path: Path, look_only: bool = False) -> tuple[Config, str | None]:
    """The config at `path` and a warning, if any. Never raises.

    A missing file means defaults. A file with unknown settings or bad values keeps every
    good value; a copy of it is kept aside, since the next save leaves the rest out. A file
    that is not a config at all is moved aside (kept, not deleted) and defaults are used.
    The warning says what happened and where the copy is.

    `look_only` reads the file and touches nothing (no copy kept, nothing moved, no
    warning): for choosing the language before the warnings can be told in it.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Config(), None
    except (OSError, UnicodeDecodeError) as error:
        return Config(), None if look_only else tr(
            "could not read {path} ({error}); using defaults", path=path, error=error)
    notes: list[str] = []
    try:
        config, problems = salvage(json.loads(text), notes)
    except (ValueError, TypeError) as error:
        if look_only:
            return Config(), None
        aside = aside_path(path, "invalid")
        try:
            path.replace(aside)
            where = tr("it was kept as {name}", name=aside.name)
        except OSError:
            where = tr("it could not be moved aside")
        reason = str(error).replace(text, "…") if text else str(error)
        return Config(), tr("the config file was invalid ({reason}); {where}; using defaults",
                            reason=reason[:200], where=where)
    if look_only:
        return config, None
    told = _migrated(path, config, notes) if notes and not problems else None
    if not problems:
        return config, told
    kept = _same_copy(path, text)
    try:
        if kept is None:
            kept = aside_path(path, "invalid")
            shutil.copy2(path, kept)
            os.chmod(kept, 0o600)
        where = tr("a copy of the file was kept as {name}", name=kept.name)
    except OSError:
        where = tr("no copy could be kept")
    return config, "; ".join([*notes, tr(
        "the config file has problems: {problems}; every other setting was kept, and "
        "{where}", problems="; ".join(problems)[:300], where=where)])


def _same_copy(path: Path, text: str) -> Path | None:
    """A copy already kept of this very file: the same bad file read at every start left
    another copy each time."""
    for copy in sorted(path.parent.glob(f"{path.name}.invalid-*")):
        with contextlib.suppress(OSError, UnicodeDecodeError):
            if copy.read_text(encoding="utf-8") == text:
                return copy
    return None


def _migrated(path: Path, config: Config, notes: list[str]) -> str:
    """A migration that changed the person's choice is saved at once, so that its note is
    told at this start only."""
    with contextlib.suppress(OSError):
        save_config(path, config)
    return "; ".join(notes)


def save_config(path: Path, config: Config) -> None:
    """Write atomically: a crash leaves the old file or the new one, never half of one."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    data = json.dumps(to_file(config), indent=2, ensure_ascii=False) + "\n"
    # mkstemp creates the file readable and writable by its owner only (0600).
    descriptor, temporary = tempfile.mkstemp(prefix=".config-", dir=path.parent)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable where possible
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)


def language_setting(argv: list[str]) -> str:
    """The saved language for a command line's data folder (`--home`), read before the
    arguments are parsed for good so that `--help` speaks it too; touches nothing."""
    import argparse  # noqa: PLC0415  (only command lines ask)

    from core.paths import config_path, data_home  # noqa: PLC0415

    early = argparse.ArgumentParser(add_help=False)
    early.add_argument("--home")
    known, _rest = early.parse_known_args(argv)
    return load_config(config_path(data_home(known.home)), look_only=True)[0].language
