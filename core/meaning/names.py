"""One name in two scripts: "Lyon" and "里昂", "Lin Wei" and "林伟", "Hangzhou" and "杭州".

A person who said "I live in Lyon" and later "我住在里昂" said one thing twice, and a
history that writes a name in Latin letters and later in characters names one person.
Treated as two values, the second replaced the first. So values are compared across
scripts before one may replace another:

- a Chinese name and its pinyin are the same name (pypinyin reads the characters, in
  either order of family and given name);
- a place and its name in Chinese or Japanese characters are the same place, from
  GeoNames' names of the world's towns of 15,000 people or more (places.tsv, made by
  packaging/make_places.py);
- two names in the same script are the same when they differ only in case, spaces or
  hyphens ("Hang Zhou", "hangzhou");
- a Chinese word and the English of one of its short senses in CC-CEDICT are the same
  thing (护士 and nurse, 花生 and peanuts: see `core.meaning.glossary`).

What the tables cannot tell (a name in characters that is neither pinyin of the other nor a
known place) is answered None: not known to be the same, not known to be different. A
caller that would destroy a fact on the answer treats None as "not different".
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache
from importlib.resources import files

from core.meaning import glossary

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[a-z]", re.IGNORECASE)
_SUFFIXES = ("市", "省", "县", "区")  # 杭州市 is 杭州


def _letters(text: str) -> str:
    """Latin letters only, folded and without accents: "Zürich" → "zurich"."""
    plain = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in plain if "a" <= c <= "z")


def _script(text: str) -> str | None:
    cjk, latin = bool(_CJK.search(text)), bool(_LATIN.search(text))
    return "cjk" if cjk and not latin else "latin" if latin and not cjk else None


@cache
def _places() -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
    """Latin letters of a place → its names in characters, and each such name → the
    Latin letters of the places it names."""
    by_latin: dict[str, set[str]] = {}
    by_cjk: dict[str, set[str]] = {}
    text = files(__package__).joinpath("places.tsv").read_text(encoding="utf-8")
    for line in text.splitlines():
        if not line or line.startswith("#") or "\t" not in line:
            continue
        latin, names = line.split("\t", 1)
        key = _letters(latin)
        for name in names.split("|"):
            by_latin.setdefault(key, set()).add(name)
            by_cjk.setdefault(name, set()).add(key)
    return ({k: frozenset(v) for k, v in by_latin.items()},
            {k: frozenset(v) for k, v in by_cjk.items()})


def _pinyin(text: str) -> list[str]:
    from pypinyin import lazy_pinyin  # noqa: PLC0415  (125 ms: only when characters meet letters)

    return [_letters(s) for s in lazy_pinyin(text) if _letters(s)]


def _trimmed(cjk: str) -> str:
    for suffix in _SUFFIXES:
        if len(cjk) > 2 and cjk.endswith(suffix):
            return cjk[:-len(suffix)]
    return cjk


def _pinyin_matches(cjk: str, latin: str) -> bool:
    syllables = _pinyin(_trimmed(cjk))
    if not syllables:
        return False
    words = [_letters(w) for w in re.split(r"[\s\-]+", latin) if _letters(w)]
    if "".join(syllables) == "".join(words):
        return True
    # "Wei Lin" for 林伟: the family name last, as names are written in English
    return len(words) > 1 and "".join(syllables[1:] + syllables[:1]) == "".join(words)


def same_value(a: str, b: str) -> bool | None:
    """Whether `a` and `b` name the same thing: True, False, or None when nothing here
    can tell (see above)."""
    if not a.strip() or not b.strip():
        return None
    scripts = _script(a), _script(b)
    if scripts[0] == scripts[1] == "latin":
        return _letters(a) == _letters(b)
    if scripts[0] == scripts[1] == "cjk":
        if _trimmed(a.strip()) == _trimmed(b.strip()):
            return True
        known = [_places()[1].get(_trimmed(n.strip())) for n in (a, b)]
        return bool(known[0] and known[1] and known[0] & known[1])  # 東京 and 东京
    if None in scripts:  # numbers, or a name in both scripts at once: as written
        return " ".join(a.casefold().split()) == " ".join(b.casefold().split())
    cjk, latin = (a.strip(), b) if scripts[0] == "cjk" else (b.strip(), a)
    by_latin, by_cjk = _places()
    places = by_cjk.get(cjk) or by_cjk.get(_trimmed(cjk))
    if places and _letters(latin) in places:
        return True
    if _pinyin_matches(cjk, latin):
        return True
    if places and _letters(latin) in by_latin:
        return False  # two places, each known by these names
    if glossary.means(_trimmed(cjk), latin):  # 护士 and nurse, 花生 and peanuts
        return True
    if glossary.english_of(_trimmed(cjk)) and not places and not _pinyin_matches(cjk, latin) \
            and _letters(latin) not in by_latin:
        return False  # a word the dictionary knows, meaning something else (老师, nurse)
    return None


def other_forms(name: str) -> set[str]:
    """The name written in the other script, as far as the tables know: a place's names
    in characters, or in letters; a Chinese name's pinyin."""
    by_latin, by_cjk = _places()
    script = _script(name)
    if script == "latin":
        return set(by_latin.get(_letters(name), ()))
    if script == "cjk":
        forms = set(by_cjk.get(name.strip(), frozenset()) | by_cjk.get(_trimmed(name.strip()),
                                                                      frozenset()))
        syllables = _pinyin(_trimmed(name.strip()))
        if syllables:
            forms |= {" ".join(syllables), "".join(syllables)}
        return forms
    return set()


def mentions(text: str, name: str) -> bool:
    """`text` names `name` in either script: "我父亲住在里昂" mentions "Lyon", "Lin Wei
    likes tea" mentions "林伟"."""
    folded = text.casefold()
    if _script(name) == "latin" and _CJK.search(text):
        letters = _letters(name)
        if any(form in text for form in other_forms(name)) or glossary.said_in(text, name):
            return True
        # the characters' pinyin, syllable by syllable, holding the name's letters
        runs = _CJK.findall(text)
        syllables = _pinyin("".join(runs)) if runs else []
        joined = "".join(syllables)
        return bool(letters) and letters in joined and any(
            "".join(syllables[i:j]) == letters for i in range(len(syllables))
            for j in range(i + 1, min(len(syllables), i + 6) + 1))
    if _script(name) == "cjk" and _LATIN.search(text):
        said = glossary.content_words(text)
        return any(re.search(rf"(?<![a-z]){re.escape(form)}(?![a-z])", folded)
                   for form in other_forms(name) if _LATIN.search(form)) or any(
            sense <= said for sense in glossary.english_of(_trimmed(name.strip())))
    return False


def is_place(name: str) -> bool:
    """`name` is a town the places table knows, in letters or characters."""
    by_latin, by_cjk = _places()
    plain = name.strip()
    return bool(plain) and (_letters(plain) in by_latin if _script(plain) == "latin"
                            else plain in by_cjk or _trimmed(plain) in by_cjk)
