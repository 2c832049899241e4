"""A memory_commit call's arguments as the writer's checks read and rewrite them."""

from __future__ import annotations

import json
from typing import Any


def triplets_of(arguments: str) -> tuple[dict[str, Any], list[Any]] | None:
    """The call's arguments and their facts, or None when they are not a commit's shape
    (the validator explains what is wrong with them)."""
    try:
        args = json.loads(arguments or "{}")
    except (ValueError, RecursionError):
        return None
    triplets = args.get("triplets") if isinstance(args, dict) else None
    return (args, triplets) if isinstance(triplets, list) else None


def subject_and_value(triplet: Any) -> tuple[str, str] | None:
    """Whom a fact is of and its value, as compared across one call's facts (None for
    what is not a fact)."""
    if not isinstance(triplet, dict):
        return None
    return (str(triplet.get("subject", "")).strip().casefold(),
            str(triplet.get("object", "")).strip().casefold())


def with_triplets(args: dict[str, Any], triplets: list[Any]) -> str:
    """The arguments again, with these facts ("" when none is left: the call must not
    run)."""
    return json.dumps({**args, "triplets": triplets}, ensure_ascii=False) if triplets else ""
