"""Fetching a model file so that a cut, a full disk or a wrong byte never leaves a broken
model in use.

The file grows as `<file>.part` beside where it will live; after a cut the next attempt
asks for the rest (HTTP Range) and goes on from there, and a server that ignores the
range sends the whole file again, which is taken from the start. Only when the whole file
has the catalogue's size and sha256 is it renamed to its own name: a model file that is
there is a model that was checked. Free disk space is checked before a byte is asked for.
Every answer is `{"success": ..., "error": ...}`, never an exception."""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import shutil
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from core.i18n import tr
from core.models.catalogue import Model

try:
    import fcntl
except ImportError:  # Windows: one program fetches at a time, unchecked
    fcntl = None  # type: ignore[assignment]

CHUNK = 1 << 20
SPARE = 256 << 20  # bytes left free on the disk after the file: the system needs room too
TRIES = 5  # connections lost in a row before giving up (each goes on where it stopped)
Progress = Callable[[int, int], None]  # bytes there, bytes in all


def part_of(model: Model, folder: Path) -> Path:
    return folder / f"{model.file}.part"


def lock_of(model: Model, folder: Path) -> Path:
    """The empty file whose lock says a program is fetching the model (hidden, and kept:
    deleting a lock file another program may be opening would let two hold it)."""
    return folder / f".{model.file}.lock"


def state(model: Model, folder: Path) -> dict[str, Any]:
    """"installed" (the checked file is there), "partial" (so many bytes of it) or
    "absent"."""
    whole, part = folder / model.file, part_of(model, folder)
    if whole.is_file() and whole.stat().st_size == model.size:
        return {"state": "installed", "bytes": model.size}
    if part.is_file():
        return {"state": "partial", "bytes": part.stat().st_size}
    return {"state": "absent", "bytes": 0}


def remove(model: Model, folder: Path) -> dict[str, Any]:
    """The model's file and any part of it, gone."""
    removed = 0
    for path in (folder / model.file, part_of(model, folder), lock_of(model, folder)):
        try:
            removed += path.stat().st_size
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError as error:
            return {"success": False, "error": tr("cannot remove {path}: {error}",
                                                  path=path, error=error.strerror)}
    return {"success": True, "data": {"freed": removed}}


def download(model: Model, folder: Path, progress: Progress | None = None,
             cancelled: Callable[[], bool] | None = None,
             base_url: str | None = None) -> dict[str, Any]:
    """Fetch `model` into `folder` (see above); `progress(have, total)` as it grows,
    `cancelled()` asked between chunks (the part stays, to go on later). One download of
    a file at a time, across programs: the models folder is shared by every memory, and
    two writers of one part would spoil it."""
    whole = folder / model.file
    if state(model, folder)["state"] == "installed":
        return {"success": True, "data": {"path": str(whole), "fetched": 0}}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with _only_one(lock_of(model, folder)) as alone:
            if not alone:
                return {"success": False, "error": tr(
                    "another TrulyMEM is fetching {model} now; it is here when that ends",
                    model=model.id)}
            return _download(model, folder, progress or (lambda _have, _total: None),
                             cancelled or (lambda: False), base_url)
    except OSError as error:
        return {"success": False, "error": tr("cannot write in {folder}: {error}",
                                              folder=folder, error=_said(error))}


@contextlib.contextmanager
def _only_one(lock_path: Path) -> Iterator[bool]:
    """Whether this program holds the file's lock (an advisory lock: it goes with the
    program, however it ends); True where locks do not exist."""
    with lock_path.open("a") as lock:
        if fcntl is None:
            yield True
            return
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _download(model: Model, folder: Path, progress: Progress,
              cancelled: Callable[[], bool], base_url: str | None) -> dict[str, Any]:
    whole, part = folder / model.file, part_of(model, folder)
    have = part.stat().st_size if part.is_file() else 0
    if have > model.size:  # not this file's beginning: start again
        part.unlink()
        have = 0
    free = shutil.disk_usage(folder).free
    if free < model.size - have + SPARE:
        return {"success": False, "error": tr(
            "not enough disk space in {folder}: {model} needs {need} more, {free} is free",
            folder=folder, model=model.name, need=size_words(model.size - have + SPARE),
            free=size_words(free))}
    digest = _hashed(part, have)
    url = model.url(base_url)
    fetched, lost = 0, 0
    while have < model.size:
        try:
            have, digest, got = _fetch_rest(url, part, have, digest, total=model.size,
                                            progress=progress, cancelled=cancelled)
            fetched += got
            lost = 0 if got else lost + 1
            if lost >= TRIES:
                raise _Refused(tr("{url} stops sending before the end of the file",
                                  url=url))
        except _Cancelled:
            return {"success": False, "error": tr(
                "cancelled: {have} of {total} kept, fetched again from there next time",
                have=size_words(have), total=size_words(model.size)), "code": "cancelled"}
        except _Refused as refused:
            return {"success": False, "error": str(refused)}
        except ValueError as error:  # not an address at all ($TRULYMEM_MODELS_URL)
            return {"success": False, "error": tr("cannot fetch {url}: {error}", url=url,
                                                  error=_said(error))}
        except (OSError, http.client.HTTPException) as error:
            lost += 1
            have = part.stat().st_size if part.is_file() else 0
            digest = _hashed(part, have)
            if lost >= TRIES and not have:
                return {"success": False, "error": tr(
                    "the download did not start ({error}); nothing was fetched",
                    error=_said(error))}
            if lost >= TRIES:
                return {"success": False, "error": tr(
                    "the download stopped ({error}); {have} of {total} are kept and the "
                    "next attempt goes on from there", error=_said(error),
                    have=size_words(have), total=size_words(model.size))}
            time.sleep(min(2 ** lost, 30) / 10)
    if have != model.size or digest.hexdigest() != model.sha256:
        part.unlink(missing_ok=True)
        return {"success": False, "error": tr(
            "the downloaded file of {model} is not the one the catalogue names (its "
            "checksum differs); it was deleted, nothing was used", model=model.name)}
    part.replace(whole)
    return {"success": True, "data": {"path": str(whole), "fetched": fetched}}


class _Cancelled(Exception):
    pass


class _Refused(Exception):
    """The server said no in a way another try will not change."""


def _fetch_rest(url: str, part: Path, have: int, digest: Any, *, total: int,
                progress: Progress, cancelled: Callable[[], bool]) -> tuple[int, Any, int]:
    """One connection: the bytes from `have` on, appended; answers (have, digest, got).
    Redirects (the hub's to its file store) are followed with the range kept."""
    headers = {"User-Agent": "TrulyMEM", **({"Range": f"bytes={have}-"} if have else {})}
    try:
        answer = urllib.request.urlopen(urllib.request.Request(url, headers=headers),
                                        timeout=60)
    except urllib.error.HTTPError as error:
        if error.code == 416 and have:  # nothing after `have`: the part is whole
            return have, digest, 0
        if error.code in (401, 403, 404):
            raise _Refused(tr("{url} answered {status}: the file is not there (check "
                              "$TRULYMEM_MODELS_URL, or the model's name)", url=url,
                              status=error.code)) from None
        raise
    got = 0
    with answer:
        if have and answer.status != 206:  # the range was ignored: from the start
            have, digest = 0, hashlib.sha256()
        with part.open("ab" if have else "wb") as out:
            while chunk := answer.read(CHUNK):
                if cancelled():
                    raise _Cancelled
                if have + len(chunk) > total:
                    raise _Refused(tr("{url} sends more than the catalogue's {total} bytes",
                                      url=url, total=f"{total:,}"))
                out.write(chunk)
                digest.update(chunk)
                have += len(chunk)
                got += len(chunk)
                progress(have, total)
    return have, digest, got


def _hashed(part: Path, length: int) -> Any:
    """The sha256 of the part already there, read again (it may be days old)."""
    digest = hashlib.sha256()
    if length:
        with part.open("rb") as kept:
            while block := kept.read(CHUNK):
                digest.update(block)
    return digest


def size_words(count: int) -> str:
    """A size as a person reads it: "1.12 GB", "491 MB", "3.1 MB", never broken across
    lines (a no-break space)."""
    if count >= 1e9:
        return f"{count / 1e9:.2f}\u00a0GB"
    return f"{count / 1e6:.0f}\u00a0MB" if count >= 1e8 else f"{count / 1e6:.1f}\u00a0MB"


def _said(error: BaseException) -> str:
    return str(error) or type(error).__name__
