"""A message in its clauses, for the memory-writing step.

Of "My parrot is called Pepper, and I've played the flute for years." the 1.5B model kept
the parrot and dropped the flute; listed clause by clause under the message, it wrote
both (on 47 facts in multi-clause messages: 44 whole, 46 listed, one request each).
"""

from __future__ import annotations

import re

_ENDS = re.compile(r"(?<=[.!?;:。！？；：,，、])\s*|\n+")
SHORTEST = 6  # letters: a piece shorter than this ("and so", "还有") goes with the one before
MOST = 8  # clauses listed; a longer message is sent once, as it is (its prompt time counts)


def clauses(message: str) -> list[str]:
    """The message's clauses in order, cut at sentence ends, semicolons and commas."""
    found: list[str] = []
    for piece in (p.strip() for p in _ENDS.split(message)):
        if not piece:
            continue
        if found and len(re.sub(r"[\W_]", "", piece)) < SHORTEST:
            found[-1] += " " + piece
        else:
            found.append(piece)
    return found


def listed(message: str) -> str:
    """The message, then its clauses numbered when it has more than one."""
    found = clauses(message)
    if not 2 <= len(found) <= MOST:
        return message
    return message + "\nClause by clause:\n" + "\n".join(
        f"{n}. {clause}" for n, clause in enumerate(found, 1))
