"""`trulymem import-history PATH`: bring past conversations in from a terminal.

The conversations are kept first (nothing is sent anywhere); then, unless
`--conversations-only`, the memory is built from them after saying what will be sent
and where. Progress goes to stderr; the last line on stdout is one summary a script can
read. Ctrl+C stops after the conversation being remembered (a second one at once); run
the command again to go on where it stopped.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from typing import Any, TextIO

from core.config import language_setting
from core.events import Event
from core.i18n import set_language, tr
from core.paths import add_home_option, data_home
from core.protocol.packets import Packet, PacketType
from core.protocol.server import BackendServer

# The phases a build ends with (see `core.history_import.building`).
BUILD_ENDS = ("built", "stopped", "failed")
# How long the end waits for a stopped build's piece to give up its model call.
STOP_SECONDS = 30.0


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="trulymem import-history",
        description=tr("Import past conversations (a ChatGPT or Claude export, LoCoMo "
                       "JSON, or a conversation exported from TrulyMEM as Markdown), then "
                       "build the memory from them."))
    parser.add_argument("path", help=tr("the export: a .zip, a .json or a .md file"))
    add_home_option(parser)
    parser.add_argument("--conversations-only", action="store_true",
                        help=tr("keep the conversations without building the memory "
                                "(nothing is sent to a model)"))
    parser.add_argument("--yes", action="store_true",
                        help=tr("build the memory without asking first"))
    parser.add_argument("--base-url", help=tr("OpenAI-compatible endpoint for this run"))
    parser.add_argument("--model", help=tr("model name for this run"))
    return parser.parse_args(argv)


def estimate_words(estimate: dict[str, Any]) -> str:
    return tr("Building the memory sends {conversations} conversations ({messages} "
              "messages, about {tokens} tokens) to {model} at {endpoint}.",
              conversations=estimate["conversations"], messages=estimate["messages"],
              tokens=f"{estimate['tokens']:,}", model=estimate["model"],
              endpoint=estimate["endpoint"])


class _Progress:
    """Progress lines on stderr, one per piece; `finished` is set when a build ends."""

    def __init__(self, err: TextIO) -> None:
        self.err = err
        self.last: dict[str, Any] = {}
        self.finished = threading.Event()

    def __call__(self, event: str, data: dict[str, Any]) -> None:
        if event != Event.HISTORY_IMPORT:
            return
        self.last = data
        if data["phase"] == "reading":
            self.err.write(tr("read {conversations} conversations…",
                              conversations=data["conversations"]) + "\n")
        elif data["phase"] == "failed":
            self.err.write(tr("the build stopped: {error}", error=data.get("error")) + "\n")
        elif data["phase"] == "building":
            left = data.get("seconds_left")
            self.err.write(tr("{pieces}/{total} pieces, {facts} facts, {left} left",
                              pieces=data["pieces"], total=data["total"],
                              facts=data["facts"],
                              left=_duration(left) if left is not None else "?") + "\n")
        if data["phase"] in BUILD_ENDS:
            self.finished.set()
        self.err.flush()


def _duration(seconds: float) -> str:
    minutes, seconds = divmod(int(seconds), 60)
    return f"{minutes} min {seconds:02d} s" if minutes else f"{seconds} s"


def run(argv: list[str], out: TextIO | None = None, err: TextIO | None = None,
        ask: Any = input) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    set_language(language_setting(argv))
    args = parse_args(argv)
    progress = _Progress(err)
    server = BackendServer(home=data_home(args.home), progress=progress)
    server.backend.resume_builds = False  # this command decides whether to build, below
    server.start(os.environ.get("TRULYMEM_API_KEY"), args.base_url, args.model)
    try:
        kept = server.send(Packet.make(PacketType.IMPORT_HISTORY, {"path": str(args.path)}))
        if not kept.success:
            err.write(f"trulymem: {kept.error}\n")
            return 1
        data = kept.data
        summary = tr("imported {conversations} conversations ({messages} messages, "
                     "{unchanged} already there)", conversations=data["conversations"],
                     messages=data["messages"], unchanged=data["unchanged"])
        if args.conversations_only:
            out.write(summary + "\n")
            return 0
        return _build(server, progress, args, summary, out=out, err=err, ask=ask)
    finally:
        server.shutdown(STOP_SECONDS)


def _build(server: BackendServer, progress: _Progress, args: argparse.Namespace,
           summary: str, *, out: TextIO, err: TextIO, ask: Any) -> int:
    listed = server.send(Packet.make(PacketType.LIST_IMPORTS)).data
    estimate = listed["estimate"] if listed else None
    if not estimate or not estimate["pieces"]:
        out.write(summary + "; " + tr("the memory holds them already") + "\n")
        return 0
    err.write(estimate_words(estimate) + "\n")
    if not args.yes and sys.stdin.isatty():
        answer = ask(tr("Build the memory now? [Y/n] ")).strip().casefold()
        if answer not in ("", "y", "yes", "是"):
            out.write(summary + "; " + tr("memory not built") + "\n")
            return 0
    started = server.send(Packet.make(PacketType.BUILD_MEMORY))
    if not started.success:
        err.write(f"trulymem: {started.error}\n")
        out.write(summary + "; " + tr("memory not built") + "\n")
        return 1
    interrupted = 0

    def stop(_signum: int, _frame: Any) -> None:
        nonlocal interrupted
        interrupted += 1
        if interrupted > 1:
            raise KeyboardInterrupt
        err.write(tr("stopping after this conversation (Ctrl+C again to stop now)") + "\n")
        # asked of the worker, which takes it between two pieces; not waited for here
        threading.Thread(target=server.send, args=(Packet.make(PacketType.STOP_BUILDING),),
                         daemon=True).start()

    previous = signal.signal(signal.SIGINT, stop)
    try:
        while server.running and not progress.finished.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGINT, previous)
    done = progress.last
    stopped = interrupted or done.get("phase") in ("stopped", "failed")
    standing = done.get("standing")
    out.write(summary + "; " + tr(
        "memory: {facts} facts written from {pieces} of {total} pieces in {seconds} s{more}",
        facts=done.get("facts", 0), pieces=done.get("pieces", 0),
        total=done.get("total", 0), seconds=done.get("seconds", 0),
        more=tr(" (stopped: run again to go on)") if stopped else "") + (
            tr(", {standing} of them in the memory now", standing=standing)
            if standing is not None and standing != done.get("facts") else "") + "\n")
    return 1 if done.get("phase") == "failed" else 0
