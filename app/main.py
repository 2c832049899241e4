"""Entry point `trulymem`: the desktop window by default, a terminal chat with `--cli`, one
memory tool with `--tool`, the conversation eval with `--eval`, and `trulymem mcp`, the
memory served to other AI apps (see `core.share`). Qt is imported only when
the window is wanted, so the terminal modes work on servers without a display."""

from __future__ import annotations

import argparse
import importlib
import os
import shlex
import sys
from importlib.metadata import PackageNotFoundError, version

from app.desktop import summon
from app.startup.display import no_display
from core.i18n import set_language, tr
from core.paths import add_home_option, data_home, database_path, secure_home

# The memory, the tools and the model's client (openai) load only in the modes that use
# them: `--toggle` and `--ask` hand over to the running window in milliseconds.


def _version() -> str:
    try:
        return version("trulymem")
    except PackageNotFoundError:
        return "unknown"


def _modes() -> str:
    """Every way to run trulymem, one line each: `mcp` is a command of its own, so the
    options list alone would not show it."""
    lines = [("trulymem", tr("the window")),
             ("trulymem --cli", tr("chat in the terminal")),
             ("trulymem --tool NAME '{json}'", tr("run one memory tool and print its result")),
             ("trulymem --eval", tr("play the eval conversation and score the memory")),
             ("trulymem mcp", tr("share the memory with other AI apps (trulymem mcp --help)")),
             ("trulymem import-history PATH", tr("import past conversations and build the "
                                                 "memory from them")),
             ("trulymem sync", tr("the same memory on your other devices (trulymem sync "
                                  "--help)")),
             ("trulymem models", tr("models this computer can run itself (trulymem models "
                                    "--help)"))]
    width = max(len(command) for command, _ in lines) + 2
    return tr("modes:") + "\n" + "\n".join(f"  {c:<{width}}{what}" for c, what in lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="trulymem", description=tr("TrulyMEM: an AI companion whose memory is a graph."),
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_modes())
    add_home_option(parser)
    parser.add_argument("--version", action="version", version=f"trulymem {_version()}")
    parser.add_argument("--color-scheme", choices=("system", "light", "dark"),
                        default="system", help=tr("window colours (default: follow the system)"))
    parser.add_argument("--cli", action="store_true",
                        help=tr("chat in the terminal instead of the window (for servers, "
                                "scripts)"))
    parser.add_argument("--eval", action="store_true",
                        help=tr("play the scripted eval conversation and score the memory it "
                                "leaves (against --base-url/--model, key in $TRULYMEM_API_KEY; "
                                "without --base-url, against a scripted model)"))
    parser.add_argument("--base-url",
                        help=tr("with --cli or --eval: OpenAI-compatible endpoint for this run"))
    parser.add_argument("--model", help=tr("with --cli or --eval: model name for this run"))
    parser.add_argument("--memory-writer", choices=("auto", "tools", "extract"),
                        default="auto",
                        help=tr("with --eval: who writes the memory, the model's tool calls "
                                "or a step after each answer (default: by the endpoint)"))
    parser.add_argument("--conversations", type=int, metavar="N", default=0,
                        help=tr("with --eval: also play N generated conversations, from "
                                "--seed on"))
    parser.add_argument("--seed", type=int, metavar="S", default=1,
                        help=tr("with --conversations: the first seed (default 1)"))
    parser.add_argument("--fresh", type=int, metavar="M", default=0,
                        help=tr("with --eval: also play M conversations from seeds drawn "
                                "now, and say how far they are from the fixed ones"))
    parser.add_argument("--eval-requests", metavar="FILE",
                        help=tr("with --eval: write each request sent and the server's usage "
                                "to FILE, one JSON object a line"))
    parser.add_argument("--tool", metavar="NAME",
                        help=tr("run one memory tool on the store, print its result and exit"))
    parser.add_argument("--smoke-test", action="store_true",
                        help=tr("check that this build works (offscreen, one scripted turn)"))
    parser.add_argument("--install-desktop-entry", action="store_true",
                        help=tr("add TrulyMEM to the applications menu, with its icon"))
    parser.add_argument("--remove-desktop-entry", action="store_true",
                        help=tr("remove the menu entry, its icon and the start-at-login "
                                "entry (the data folder stays)"))
    parser.add_argument("--toggle", action="store_true",
                        help=tr("show the running window, or hide it when it is in front "
                                "(bind a key to it in the desktop's keyboard settings)"))
    parser.add_argument("--ask", metavar="TEXT",
                        help=tr("bring the window to the front with TEXT in the message box"))
    parser.add_argument("--exit-when-ready", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--say-when-ready", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("arguments", nargs="?", default="{}",
                        help=tr("with --tool: the tool's arguments as a JSON object (default {})"))
    args = parser.parse_args(argv)
    if args.tool is not None:
        from core.tools import TOOL_NAMES  # noqa: PLC0415  (the tools load only for --tool)

        if args.tool not in TOOL_NAMES:
            parser.error(tr("argument --tool: invalid choice: {name} (choose from {names})",
                            name=repr(args.tool), names=", ".join(TOOL_NAMES)))
    return args


def run_tool(home, tool: str, arguments: str) -> int:
    from core.store.graph import TRASH_DAYS  # noqa: PLC0415  (see the imports above)
    from core.store.opening import open_checked  # noqa: PLC0415
    from core.tools import ToolExecutor  # noqa: PLC0415

    secure_home(home)
    # opened as the window opens it: a missing memory with backups is not made anew
    opened = open_checked(database_path(home), TRASH_DAYS)
    store = opened.store
    if store is None:
        print(f"trulymem: {opened.error}", file=sys.stderr)
        return 1
    try:
        result = ToolExecutor(store).execute(tool, arguments, actor="user")
    finally:
        store.close()
    if not result["success"]:
        print(f"trulymem: {result['error']}", file=sys.stderr)
        return 2
    print(result["data"]["result"])
    return 0


def desktop_entry(home, install: bool) -> int:
    from core import desktop_files  # noqa: PLC0415  (only when asked for)

    done = desktop_files.install_entry(home) if install else desktop_files.remove_entry()
    if not done["success"]:
        print(f"trulymem: {done['error']}", file=sys.stderr)
        return 1
    if install:
        print(tr("Added to the applications menu: {path}", path=done["data"]["entry"]))
        print(tr("It starts: {command}", command=shlex.join(done["data"]["command"])))
    else:
        print("\n".join(tr("Removed {path}", path=p) for p in done["data"]["removed"])
              or tr("Nothing to remove."))
    return 0


COMMAND_RUNNERS = {"mcp": ("core.share.run", "main"),
                   "import-history": ("core.commands.import_history", "run"),
                   "sync": ("core.commands.sync", "run"),
                   "models": ("core.commands.models", "run")}
COMMANDS = tuple(COMMAND_RUNNERS)
# The options that take a value: a command's name right after one is that value.
VALUED = ("--home", "--color-scheme", "--base-url", "--model", "--memory-writer",
          "--conversations", "--seed", "--fresh", "--eval-requests", "--tool", "--ask")


def split_command(argv: list[str]) -> tuple[str | None, list[str]]:
    """The command (`mcp`, `import-history`, `sync`, `models`) wherever it stands, and every other
    argument in order: `trulymem --home X sync` is `trulymem sync --home X`."""
    skip = False
    for n, word in enumerate(argv):
        if skip:
            skip = False
        elif word == "--":
            break
        elif word in VALUED:
            skip = True
        elif word in COMMANDS:
            return word, argv[:n] + argv[n + 1:]
        elif not word.startswith("-"):
            break  # a positional of the window's own command line
    return None, argv


def handed_over(argv: list[str]) -> bool:
    """`--toggle` or `--ask TEXT` given to the window already running for this memory,
    before anything heavy loads (the settings, the memory, the model's client): a key
    bound to `trulymem --toggle` answers in milliseconds. False when no window took it."""
    quick = argparse.ArgumentParser(add_help=False)
    quick.add_argument("--home")
    quick.add_argument("--toggle", action="store_true")
    quick.add_argument("--ask")
    known, rest = quick.parse_known_args(argv)
    if rest or not (known.toggle or known.ask is not None):
        return False
    wish = summon.wish("ask", known.ask) if known.ask is not None else summon.wish("toggle")
    return summon.send(data_home(known.home), wish)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    command, rest = split_command(argv)
    if command is not None:
        module, function = COMMAND_RUNNERS[command]
        # each loads only when asked for (the MCP SDK, the backend)
        return getattr(importlib.import_module(module), function)(rest)
    if handed_over(argv):
        return 0
    from core.config import language_setting  # noqa: PLC0415  (see the imports above)

    set_language(language_setting(argv))  # before --help is written
    args = parse_args(argv)
    if args.smoke_test:
        from app.startup import smoke  # noqa: PLC0415  (Qt loads only when the window is wanted)

        return smoke.run()
    if args.eval:
        from core.eval.run import run_eval  # noqa: PLC0415  (only when asked for)

        key = os.environ.get("TRULYMEM_API_KEY")
        report = run_eval(args.base_url, args.model, key, writer=args.memory_writer,
                          requests_file=args.eval_requests)
        failed = any(t["error"] for t in report["turns"])
        if args.conversations > 0 or args.fresh > 0:
            from core.eval.generated import Endpoint, run_generated  # noqa: PLC0415

            generated = run_generated(args.conversations, args.seed, args.fresh, Endpoint(
                args.base_url, args.model, key, args.memory_writer))
            failed = failed or any(t["error"] for kind in ("fixed", "fresh")
                                   for score in generated.get(kind, {}).get("scores", [])
                                   for t in score["played"])
        return 1 if failed else 0
    home = data_home(args.home)
    if args.install_desktop_entry or args.remove_desktop_entry:
        return desktop_entry(home, args.install_desktop_entry)
    if args.cli:
        from core import cli  # noqa: PLC0415  (loads the model's client)

        return cli.run(home, args.base_url, args.model)
    if args.tool:
        return run_tool(home, args.tool, args.arguments)
    wish = summon.wish("ask", args.ask) if args.ask is not None else \
        summon.wish("toggle" if args.toggle else "show")
    if summon.send(home, wish):  # the window for this memory is running: it does it
        return 0
    if (missing := no_display()) is not None:  # Qt would abort with a core dump
        print(missing, file=sys.stderr)
        return 1
    from app.startup import gui  # noqa: PLC0415  (Qt loads only when the window is wanted)

    return gui.run(home, args.color_scheme, exit_when_ready=args.exit_when_ready,
                   say_when_ready=args.say_when_ready, wish=wish)


if __name__ == "__main__":
    sys.exit(main())
