"""Text handling shared by matching and search: name normalisation and CJK-aware FTS text.

SQLite's unicode61 tokenizer treats a run of Chinese characters as one token and the
trigram tokenizer cannot match queries shorter than three characters, so neither finds
苹果 inside 小明喜欢吃苹果. We index every CJK character as its own token and query
CJK text as phrases of adjacent characters, which finds words of any length.
"""

from __future__ import annotations

import re
import unicodedata

# Han ideographs (with extension A and compatibility forms), kana and CJK punctuation
# blocks: scripts written without spaces between words.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_CHAR = re.compile(f"[{_CJK}]")
_QUERY_PIECE = re.compile(f"[{_CJK}]+|[^\\W_{_CJK}]+")
_IS_CJK = re.compile(f"^[{_CJK}]")

# Words too common to help ranking; dropped from queries unless nothing else is left.
STOPWORDS = frozenset(
    """a an and are as at be by do does did for from has have how i in is it its me my
    of on or that the their this to was were what when where which who whom why will
    with you your about tell know please remember""".split()
)

MAX_QUERY_TERMS = 24


# Invisible format characters (zero-width spaces and joiners, bidirectional marks and
# overrides): "Alice" and "Alice" + U+200B must be one name, and a name must not be able
# to reorder the text shown around it.
_INVISIBLE = re.compile("[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
                        "\u2066-\u206f\ufeff]")


_FENCE = re.compile(r"^\s*(```|~~~).*$", re.MULTILINE)
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$", re.MULTILINE)
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MARKS = re.compile(r"(\*\*|__|~~|`+|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w))")
_LINE_START = re.compile(r"^\s*(#{1,6}\s+|>\s?|[-*+]\s+|\d+[.)]\s+)", re.MULTILINE)


def plain_text(markdown: str) -> str:
    """Markdown as a person reads it, for snippets: no emphasis marks, backticks,
    fences, heading or list marks, table rules or link targets ("**18°C**" is "18°C")."""
    text = _FENCE.sub("", markdown)
    text = _TABLE_RULE.sub("", text)
    text = _LINK.sub(r"\1", text)
    text = _LINE_START.sub("", text)
    text = _MARKS.sub("", text)
    return text.replace("|", " ")


def has_cjk(text: str) -> bool:
    """The text has Chinese or Japanese characters (a script written without spaces)."""
    return bool(_CJK_CHAR.search(text))


def normalize_name(text: str) -> str:
    """Key under which two spellings of one name match: width, case, spacing and invisible
    characters folded."""
    return " ".join(unicodedata.normalize("NFKC", _INVISIBLE.sub("", text)).casefold().split())


def display_name(text: str) -> str:
    """The spelling shown to people: the user's own, trimmed of stray white space and
    invisible characters."""
    return " ".join(_INVISIBLE.sub("", text).split())


def search_text(text: str | None) -> str:
    """Text as it is stored in the full-text index: each CJK character a separate token.
    None (a fact whose node has not arrived yet from another device) is no text."""
    if text is None:
        return ""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _CJK_CHAR.sub(lambda m: f" {m.group(0)} ", folded)


def query_terms(text: str, prefix: bool = False) -> list[str]:
    """The FTS5 phrases to look for in `text`.

    English words become quoted terms; a run of CJK characters becomes its overlapping
    two-character phrases (one character alone stays a one-token phrase), so 小明喜欢什么
    still finds 小明喜欢吃苹果. Quoting every term keeps query text from being read as
    FTS syntax.
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    words: list[str] = []
    cjk_phrases: list[str] = []
    for piece in _QUERY_PIECE.findall(folded):
        if _IS_CJK.match(piece):
            if len(piece) == 1:
                cjk_phrases.append(piece)
            else:
                cjk_phrases.extend(piece[i : i + 2] for i in range(len(piece) - 1))
        else:
            words.append(piece)
    content_words = words if prefix else [w for w in words if w not in STOPWORDS] or words
    terms = [f'"{w}"' + ("*" if prefix else "") for w in dict.fromkeys(content_words)]
    terms += ['"' + " ".join(p) + '"' for p in dict.fromkeys(cjk_phrases)]
    return terms[:MAX_QUERY_TERMS]


def match_query(text: str) -> str | None:
    """An FTS5 MATCH expression finding rows that share any term with `text`, or None."""
    terms = query_terms(text)
    return " OR ".join(terms) if terms else None


SHORT_QUESTION = 160  # characters: "Answer in a few words: when did Caroline…?" is one
_ENDS_ASKING = re.compile(r"[?？]\s*$")


def short_question(message: str) -> bool:
    """A message that only asks ("What pets does Melanie have?"): nothing is written from
    it, and recall does not show it as evidence (it says nothing true; asked again and
    again, it crowded out what was said)."""
    return bool(_ENDS_ASKING.search(message)) and len(message) < SHORT_QUESTION
