"""Fuzzy matching for finding actions: "tlim" finds "Tool limits", as in editors' command
palettes. The letters typed must appear in order; matches at word starts and in runs
score higher, so the likeliest action comes first."""

from __future__ import annotations


def fuzzy_score(query: str, text: str) -> int | None:
    """A score (higher is better) when every letter of `query` appears in `text` in order,
    spaces ignored, or else every word of it does, in any order; None when neither."""
    whole = _in_order(query, text)
    words = query.split()
    if whole is not None or len(words) < 2:
        return whole
    scores = [_in_order(word, text) for word in words]
    return None if None in scores else sum(scores) - 5  # type: ignore[arg-type]


def _in_order(query: str, text: str) -> int | None:
    wanted = [c for c in query.casefold() if not c.isspace()]
    if not wanted:
        return 0
    haystack = text.casefold()
    score, position, previous = 0, 0, -2
    for letter in wanted:
        found = haystack.find(letter, position)
        if found < 0:
            return None
        if found == previous + 1:
            score += 3  # a run of letters
        if found == 0 or not haystack[found - 1].isalnum():
            score += 5  # the start of a word
        score -= min(found - position, 5)  # a gap costs a little
        previous, position = found, found + 1
    return score
