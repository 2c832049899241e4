"""Two active copies of one fact (the same subject, relation and object) become one by one
rule, wherever it happens: a write that says the fact again, an import, the person
merging two nodes, another device's merge or write arriving by sync.

The copy made first (the smaller id) stays; the other steps aside, superseded by it.
Every device applies the same rule, so devices that fold the same copies, in whatever
order the changes arrive, keep the same fact. Where the fold happens on this device (a
write, an import, a person's merge) the kept copy also takes the other's mentions and the
higher confidence; a fold that sync repeats takes the counts from the device that made
it, as a row change, so they are not added twice."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def kept_and_retired(one: int, other: int) -> tuple[int, int]:
    """(the copy that stays, the copy that steps aside)."""
    return (one, other) if one < other else (other, one)


def folded(kept: Mapping[str, Any], other: Mapping[str, Any]) -> dict[str, Any]:
    """The kept copy's counts once `other` is folded into it."""
    return {"mention_count": kept["mention_count"] + other["mention_count"],
            "confidence": max(kept["confidence"], other["confidence"])}
