"""Entry point `trulymem`.

The desktop window is not built yet; until it is, the command runs memory tools against
the person's own store so the memory can be inspected and corrected from a shell.
"""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import PackageNotFoundError, version

from core import cli
from core.paths import data_home, database_path
from core.store import GraphStore, StoreError
from core.tools import TOOL_NAMES, ToolExecutor


def _version() -> str:
    try:
        return version("trulymem")
    except PackageNotFoundError:
        return "unknown"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="trulymem", description="TrulyMEM: an AI companion whose memory is a graph.")
    parser.add_argument("--home", help="data folder (default $TRULYMEM_HOME or ~/.trulymem)")
    parser.add_argument("--version", action="version", version=f"trulymem {_version()}")
    parser.add_argument("--cli", action="store_true",
                        help="chat in the terminal instead of the window (for servers, scripts)")
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint for this run only")
    parser.add_argument("--model", help="model name for this run only")
    parser.add_argument("--tool", metavar="NAME", choices=TOOL_NAMES,
                        help="run one memory tool on the store and print its result")
    parser.add_argument("arguments", nargs="?", default="{}",
                        help="the tool's arguments as a JSON object (default {})")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    home = data_home(args.home)
    if args.cli:
        return cli.run(home, args.base_url, args.model)
    try:
        store = GraphStore(database_path(home))
    except StoreError as error:
        print(f"trulymem: {error}", file=sys.stderr)
        return 1
    try:
        tool = args.tool or "memory_introspect"
        result = ToolExecutor(store).execute(tool, args.arguments, actor="user")
    finally:
        store.close()
    if not result["success"]:
        print(f"trulymem: {result['error']}", file=sys.stderr)
        return 2
    if args.tool is None:
        print(f"TrulyMEM {_version()}: memory store at {database_path(home)}")
    print(result["data"]["result"])
    if args.tool is None:
        print("\nRun a memory tool with: trulymem --tool NAME '{json arguments}'")
        print("Tools: " + ", ".join(TOOL_NAMES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
