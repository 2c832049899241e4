"""The API key in the system's keychain (the Secret Service on Linux, the Keychain on
macOS, the Credential Manager on Windows) through `keyring`, rather than in the config file.

One entry per data folder: the service is "TrulyMEM" and the user name is the folder's
resolved path. Each folder has its own config, so its own endpoint and key; resolving the
path makes `~/notes`, a relative path and a symlink to the same folder find one entry.

Where no keychain answers (a server without a desktop session, a keychain that is locked
and nobody unlocks, a daemon that died), the key stays in the config file, written readable
by its owner only, as before; the start never waits on a keychain for more than `WAIT`
seconds and never fails because of one. Every call answers {"success": ...} and never
raises.

The MCP token (`share_token`) stays in the file: it is copied by design into the other
apps' settings in clear, it only opens 127.0.0.1, and `trulymem mcp --http` often runs where
no keychain answers (a service, an SSH session), where a token it could not read would be
replaced by a new one and lock out every app that has the old one.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.config import Config, ConfigError, load_config, save_config, updated
from core.i18n import tr
from core.redaction import remember, scrub

log = logging.getLogger(__name__)

SERVICE = "TrulyMEM"
WAIT = 8.0  # seconds a keychain may take: a locked one may be showing an unlock prompt


class NoKeychain(Exception):
    """No keychain exists here (as opposed to one that exists and failed)."""


def account(home: Path) -> str:
    """The entry's user name for a data folder: its resolved path."""
    return str(Path(home).expanduser().resolve())


_idle = threading.Lock()  # one keychain call at a time; held while one hangs
_found: Any = None  # the backend keyring chose; chosen again while it is none


def _none_here(backend: Any) -> bool:
    from keyring.backends import chainer, fail, null  # noqa: PLC0415  (D-Bus only when asked)

    return isinstance(backend, (fail.Keyring, null.Keyring)) or (
        isinstance(backend, chainer.ChainerBackend) and not backend.backends)


def _why_none() -> str:
    chosen = os.environ.get("PYTHON_KEYRING_BACKEND")
    if chosen:
        return f"PYTHON_KEYRING_BACKEND={chosen}"
    if sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        try:
            from keyring.backends import SecretService  # noqa: PLC0415

            SecretService.Keyring.priority  # noqa: B018  (raises why it is unusable)
        except Exception as error:  # any failure is the reason to show
            return str(error) or type(error).__name__
    return "keyring found no usable backend"


def _backend() -> Any:
    """keyring's backend; NoKeychain when there is none. A missing keychain is looked for
    again at the next call (it may have started since), a found one is kept."""
    global _found  # noqa: PLW0603  (keyring itself keeps one backend per process)
    import keyring  # noqa: PLC0415

    if _found is None or _none_here(_found):
        keyring.core.init_backend()
        _found = keyring.get_keyring()
    if _none_here(_found):
        raise NoKeychain(_why_none())
    return _found


def _guarded(work: Callable[[Any], Any]) -> dict[str, Any]:
    """`work(backend)` on a thread of its own, given `WAIT` seconds: a keychain that hangs
    (an unlock prompt nobody answers, a bus that never replies) leaves that thread behind,
    not the caller; until it ends, later calls are answered at once that it is busy."""
    if not _idle.acquire(blocking=False):
        return {"success": False, "none": False,
                "error": tr("the system keychain has not answered an earlier request")}
    answer: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            answer.update(success=True, value=work(_backend()))
        except NoKeychain as error:
            answer.update(success=False, none=True, error=tr(
                "no system keychain answered ({reason})", reason=scrub(str(error))[:300]))
        except Exception as error:  # a keychain's failure is an answer
            said = scrub(str(error))[:300] or type(error).__name__
            answer.update(success=False, none=False, error=tr(
                "the system keychain failed ({reason})", reason=said))
        finally:
            _idle.release()
            done.set()

    threading.Thread(target=run, name="keychain", daemon=True).start()
    if not done.wait(WAIT):
        return {"success": False, "none": False, "error": tr(
            "the system keychain did not answer within {seconds} s (it may be locked)",
            seconds=f"{WAIT:g}")}
    return answer


def read(home: Path) -> dict[str, Any]:
    """The folder's key in the keychain: {"success": True, "key": "" when none}."""
    name = account(home)
    answer = _guarded(lambda backend: backend.get_password(SERVICE, name) or "")
    if answer["success"]:
        answer["key"] = answer.pop("value")
        remember(answer["key"])
    return answer


def write(home: Path, key: str) -> dict[str, Any]:
    """Keep `key` for the folder, read back to be sure it is there; an empty key removes
    the entry."""
    name = account(home)

    def keep(backend: Any) -> None:
        from keyring.errors import PasswordDeleteError  # noqa: PLC0415

        if key:
            backend.set_password(SERVICE, name, key)
        else:
            with contextlib.suppress(PasswordDeleteError):  # none kept: nothing to remove
                backend.delete_password(SERVICE, name)
        if (backend.get_password(SERVICE, name) or "") != key:
            raise RuntimeError("the keychain did not keep what was written")

    return _guarded(keep)


@dataclass(frozen=True)
class Place:
    """Where the folder's key is kept: "keychain" or "file", and why the file."""

    store: str
    reason: str = ""
    failed: bool = False  # a keychain exists and failed (not: there is none)

    def public(self) -> dict[str, Any]:
        return {"key_store": self.store, "key_store_reason": self.reason}


FILE = Place("file")  # where no keychain is wanted (an eval's throwaway folder)


def _file_place(answer: dict[str, Any]) -> Place:
    return Place("file", answer["error"], failed=not answer.get("none"))


def load_key(config_file: Path, config: Config) -> tuple[Config, Place]:
    """At start: the key from the keychain, where one answers. A key still in the file
    moves in once (written, read back, then the file rewritten without it); where no
    keychain answers, the file's key is used as before."""
    home = config_file.parent
    if config.api_key:
        wrote = write(home, config.api_key)
        if not wrote["success"]:
            return config, _file_place(wrote)
        fresh, _warning = load_config(config_file, look_only=True)
        if fresh.api_key == config.api_key:  # not changed meanwhile by another program
            try:
                save_config(config_file, updated(fresh, api_key=""))
            except OSError as error:  # kept in both: moved again at the next start
                log.warning("the key is in the keychain but the config file kept it (%s)",
                            error.strerror)
        return config, Place("keychain")
    found = read(home)
    if not found["success"]:
        return config, _file_place(found)
    try:
        return updated(config, api_key=found["key"]), Place("keychain")
    except ConfigError as error:
        return config, Place("keychain", tr("the key in the system keychain was not used: "
                                            "{error}", error=error.said()), failed=True)


def keep_key(home: Path, key: str) -> tuple[Place, str | None]:
    """Settings saved a new key (or cleared it): into the keychain where one answers.
    Answers the place and, when a cleared key could not be removed from a keychain that
    exists, why (the caller saves nothing then: the old key would come back at the next
    start)."""
    wrote = write(home, key)
    if wrote["success"]:
        return Place("keychain"), None
    if not key and not wrote.get("none"):
        return _file_place(wrote), wrote["error"]
    return _file_place(wrote), None


def with_warning(warning: str | None, place: Place) -> str | None:
    """The start's config warning, with the keychain's failure when one exists and failed
    (no keychain at all is no news: the file is where the key lives then)."""
    if not place.failed:
        return warning
    said = tr("API key: {reason}", reason=place.reason)
    return f"{warning}; {said}" if warning else said
