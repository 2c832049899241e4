"""`trulymem sync`: the same memory on every device, from a terminal or a script.

    trulymem sync --folder DIR               start a set; the pairing code is the last line
    trulymem sync --folder DIR --code CODE   join the set in DIR
    trulymem sync                            sync now: what was written and applied
    trulymem sync --status                   this device, the others, conflicts, refusals
    trulymem sync --leave                    stop syncing here (the memory stays)

Each takes `--home`, like the other modes. Exit status 0 when it worked, 1 when not (the
reason on stderr).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, TextIO

from core.config import language_setting
from core.i18n import set_language, tr
from core.paths import add_home_option, data_home
from core.protocol.packets import Packet, PacketType
from core.protocol.server import BackendServer

# How long a sync may take before the command stops waiting (a folder of many files).
SYNC_SECONDS = 600.0


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="trulymem sync",
        description=tr("Keep this memory the same on every device through a folder your "
                       "syncing app already shares (Syncthing, Nextcloud, Dropbox, a "
                       "network share). Without options: sync now."))
    parser.add_argument("--folder", help=tr("the shared folder: start a set there, or "
                                            "join one with --code"))
    parser.add_argument("--code", help=tr("the pairing code shown on a device already in "
                                          "the set"))
    parser.add_argument("--name", help=tr("this device's name (default: the host name)"))
    parser.add_argument("--leave", action="store_true",
                        help=tr("stop syncing on this device (its memory stays as it is)"))
    parser.add_argument("--status", action="store_true",
                        help=tr("show this device's sync state and change nothing"))
    add_home_option(parser)
    return parser.parse_args(argv)


def run(argv: list[str], out: TextIO | None = None, err: TextIO | None = None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    set_language(language_setting(argv))
    args = parse_args(argv)
    if args.code and not args.folder:
        err.write("trulymem: " + tr("--code needs --folder (the folder the set is in)")
                  + "\n")
        return 2
    server = BackendServer(home=data_home(args.home))
    server.start(os.environ.get("TRULYMEM_API_KEY"))
    try:
        if args.status:
            packet = Packet.make(PacketType.SYNC_STATUS)
        elif args.leave:
            packet = Packet.make(PacketType.SYNC_LEAVE)
        elif args.folder and args.code:
            packet = Packet.make(PacketType.SYNC_JOIN, {"folder": args.folder,
                                                        "code": args.code,
                                                        "name": args.name or ""})
        elif args.folder:
            packet = Packet.make(PacketType.SYNC_START, {"folder": args.folder,
                                                         "name": args.name or ""})
        else:
            packet = Packet.make(PacketType.SYNC_NOW)
        answer = server.send(packet, timeout=SYNC_SECONDS)
        if not answer.success:
            err.write(f"trulymem: {answer.error}\n")
            return 1
        _report(packet.type, answer.data, out)
        return 0
    finally:
        server.shutdown()


def _report(kind: PacketType, data: dict[str, Any], out: TextIO) -> None:
    if kind == PacketType.SYNC_LEAVE:
        out.write(tr("this device no longer syncs through {folder}; its memory stays",
                     folder=data["left"]) + "\n")
        return
    for line in _refusals(data):
        out.write(line + "\n")
    if kind == PacketType.SYNC_STATUS:
        if not data["joined"]:
            out.write(tr("this memory does not sync") + "\n")
            return
        out.write(tr("device {name} ({device}) in set {set}, folder {folder}",
                     **{k: data[k] for k in ("name", "device", "set", "folder")}) + "\n")
        for other in data["devices"]:
            out.write(tr("  {name} ({device}): {seq} files applied", **other) + "\n")
        out.write(tr("{conflicts} conflicts, {refused} files refused, {waiting} changes "
                     "not written yet", conflicts=data["conflicts"],
                     refused=len(data["refused"]), waiting=data["waiting"]) + "\n")
        for conflict in data.get("conflict_list") or []:
            out.write(f"  {conflict['words']}\n")
        return
    out.write(tr("sent {wrote} changes{file}; applied {files} files ({rows} changes, "
                 "{conflicts} conflicts, {merged} merged)", wrote=data.get("wrote", 0),
                 file=f" ({data['file']})" if data.get("file") else "",
                 files=data.get("applied_files", 0), rows=data.get("applied_rows", 0),
                 conflicts=data.get("conflicts", 0), merged=data.get("merged", 0)) + "\n")
    if data.get("files_written_again"):
        out.write(tr("{n} of this device's files were gone from the folder: a snapshot "
                     "of this memory stands in for them", n=data["files_written_again"])
                  + "\n")
    if data.get("set_file_written_again"):
        out.write(tr("the folder had lost the set's file: it was written again") + "\n")
    if data.get("clock_words"):
        out.write(data["clock_words"] + "\n")
    if kind == PacketType.SYNC_START:
        out.write(tr("Type this code on your other devices (trulymem sync --folder DIR "
                     "--code CODE, or Settings › Sync):") + "\n")
        out.write(data["code"] + "\n")


def _refusals(data: dict[str, Any]) -> list[str]:
    refused = data.get("refused") or []
    return [tr("refused {file}: {reason}", file=item["file"], reason=item["reason"])
            if isinstance(item, dict) else tr("refused {item}", item=item) for item in refused]
