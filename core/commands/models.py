"""`trulymem models`: the models this computer can run itself, from a terminal.

    trulymem models                 the catalogue: each model, its size, what it needs,
                                    whether it is here
    trulymem models get ID          fetch it (resumed after a cut, checked before use);
                                    Ctrl+C stops and keeps what came
    trulymem models remove ID       delete its file

$TRULYMEM_MODELS_URL points the downloads at a mirror of the hub's file URLs;
$TRULYMEM_MODELS_DIR keeps the models elsewhere. Exit status 0 when it worked, 1 when not.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import TextIO

from core.config import language_setting
from core.i18n import set_language, tr
from core.models import download
from core.models.catalogue import CATALOGUE, DEFAULT, find, models_folder


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="trulymem models",
        description=tr("Models that run on this computer: nothing you say leaves it."))
    parser.add_argument("action", nargs="?", choices=("list", "get", "remove"),
                        default="list", help=tr("list (default), get or remove"))
    parser.add_argument("model", nargs="?", help=tr("the model's id, as the list shows it"))
    return parser.parse_args(argv)


def run(argv: list[str], out: TextIO | None = None, err: TextIO | None = None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    set_language(language_setting(argv))
    args = parse_args(argv)
    folder = models_folder()
    if args.action == "list":
        _list(out, folder)
        return 0
    model = find(args.model or "")
    if model is None:
        err.write("trulymem: " + tr("no model named {name}; the ids are: {ids}",
                                    name=args.model or "", ids=", ".join(
                                        m.id for m in CATALOGUE)) + "\n")
        return 2
    if args.action == "remove":
        done = download.remove(model, folder)
        if not done["success"]:
            err.write(f"trulymem: {done['error']}\n")
            return 1
        out.write(tr("Removed {model} ({size} freed).", model=model.id,
                     size=download.size_words(done["data"]["freed"])) + "\n")
        return 0
    return _get(model, folder, out, err)


def _list(out: TextIO, folder) -> None:
    out.write(tr("Models for this computer (kept in {folder}):", folder=folder) + "\n")
    for model in CATALOGUE:
        here = download.state(model, folder)
        said = {"installed": tr("installed"),
                "partial": tr("partly fetched ({have} of {total})",
                              have=download.size_words(here["bytes"]),
                              total=download.size_words(model.size)),
                "absent": tr("not fetched")}[here["state"]]
        mark = " " + tr("(default)") if model.id == DEFAULT else ""
        out.write(f"\n{model.id}{mark}: {said}\n")
        out.write("  " + tr("{name}, {size}, needs {ram} GB of free memory; {licence}; "
                            "{languages}", name=model.name, size=download.size_words(model.size),
                            ram=model.ram_gb, licence=model.licence,
                            languages=tr(model.languages)) + "\n")
        out.write("  " + tr("Memory: {tools}", tools=tr(model.tools)) + "\n")
        out.write("  " + (tr("Measured here: {what}", what=tr(model.measured)) if model.measured
                          else tr("Never measured with this app")) + "\n")


def _get(model, folder, out: TextIO, err: TextIO) -> int:
    started, shown = time.monotonic(), [0.0]

    def progress(have: int, total: int) -> None:
        now = time.monotonic()
        if now - shown[0] >= 0.5 or have == total:
            shown[0] = now
            speed = have / max(now - started, 1e-3)
            err.write("\r" + tr("{model}: {have} of {total} ({percent}%)", model=model.id,
                                have=download.size_words(have), total=download.size_words(total),
                                percent=have * 100 // total)
                      + f"  {speed / 1e6:.1f} MB/s   ")
            err.flush()

    try:
        done = download.download(model, folder, progress)
    except KeyboardInterrupt:
        err.write("\n" + tr("Stopped; what came is kept: run it again to go on.") + "\n")
        return 1
    err.write("\n")
    if not done["success"]:
        err.write(f"trulymem: {done['error']}\n")
        return 1
    out.write(tr("{model} is ready: {path}", model=model.id, path=done["data"]["path"]) + "\n")
    return 0
