"""The command line of a benchmark whose options are all counts: `--name N` each, with
its default, described by the first line of the benchmark's docstring."""

from __future__ import annotations

import argparse


def counts(doc: str | None, **defaults: int) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    for name, default in defaults.items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=int, default=default)
    return parser.parse_args()
