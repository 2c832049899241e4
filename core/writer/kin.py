"""How a person names the people in their life, in English and Chinese, as one relation.

"My father", "my dad", "我父亲" and "爸爸" are one relative: a forget asked in one
language must find the facts told in the other, and facts about "父亲" belong to the
father's own node. Each word maps to one kind of relative (older and younger sister are
both "sister", as English says it). This is the language's kinship vocabulary, not a list
of any conversation's words.
"""

from __future__ import annotations

import re

KINDS: dict[str, tuple[str, ...]] = {
    "father": ("father", "dad", "daddy", "papa", "pa", "爸爸", "父亲", "老爸", "爸", "爹"),
    "mother": ("mother", "mom", "mum", "mommy", "mummy", "mama", "ma", "妈妈", "母亲", "老妈",
               "妈", "娘"),
    "sister": ("sister", "sis", "姐姐", "妹妹", "姐", "妹"),
    "brother": ("brother", "bro", "哥哥", "弟弟", "哥", "弟"),
    "wife": ("wife", "妻子", "老婆", "太太", "爱人"),
    "husband": ("husband", "丈夫", "老公"),
    "partner": ("partner", "伴侣"),
    "girlfriend": ("girlfriend", "女朋友", "女友"),
    "boyfriend": ("boyfriend", "男朋友", "男友"),
    "fiance": ("fiance", "fiancé", "fiancee", "fiancée", "未婚夫", "未婚妻"),
    "son": ("son", "儿子"),
    "daughter": ("daughter", "女儿"),
    "child": ("child", "kid", "孩子", "小孩"),
    "grandmother": ("grandmother", "grandma", "granny", "奶奶", "外婆", "姥姥"),
    "grandfather": ("grandfather", "grandpa", "爷爷", "外公", "姥爷"),
    "aunt": ("aunt", "auntie", "姑姑", "阿姨", "姨妈", "舅妈", "婶婶"),
    "uncle": ("uncle", "叔叔", "舅舅", "伯伯", "伯父", "姑父", "姨父"),
    "cousin": ("cousin", "表姐", "表妹", "表哥", "表弟", "堂姐", "堂妹", "堂哥", "堂弟"),
    "friend": ("friend", "buddy", "朋友", "好友"),
    "colleague": ("colleague", "coworker", "co-worker", "同事"),
    "boss": ("boss", "老板", "上司", "领导"),
    "neighbor": ("neighbor", "neighbour", "邻居"),
    "roommate": ("roommate", "flatmate", "室友"),
}
_KIND_OF = {word: kind for kind, words in KINDS.items() for word in words}
_CJK = re.compile(r"[\u3400-\u9fff]")
# Longest first, so 女朋友 wins over 朋友 and 姐姐 over 姐; English words whole, with an
# optional plural and possessive ("my sisters", "dad's")
_WORDS = sorted(_KIND_OF, key=len, reverse=True)
_FIND = re.compile("|".join(
    re.escape(w) if _CJK.search(w) else rf"\b{re.escape(w)}(?:s|'s|s')?\b" for w in _WORDS),
    re.IGNORECASE)
# In running text a kin word counts only where it is someone's: English after "my" or
# "our" ("I'm a manager" is no boss, "ma'am" no mother), a one-character Chinese word
# after 我 or 我的 (哥 is in 哥伦比亚, 姐 in 小姐). In a relation ("sister", "父亲叫") it
# always counts.
_MINE = re.compile(r"\b(?:my|our)\s+$", re.IGNORECASE)
_MINE_ZH = re.compile(r"我的?$|我们的?$")


def kind_of(word: str) -> str | None:
    """The kind of relative a word names ("dad" → "father", "姐姐" → "sister"), or None."""
    word = re.sub(r"(?:'s|s')$", "", word.strip().casefold().removeprefix("my ").strip())
    found = _KIND_OF.get(word)
    if found is None and word.endswith("s"):
        found = _KIND_OF.get(word[:-1])
    return found


def kinds_in(text: str, relation: bool = False) -> list[str]:
    """The kinds of relative `text` speaks of, in the order it names them (`relation`:
    the text is a fact's relation, where a bare kin word is one)."""
    kinds: list[str] = []
    for match in _FIND.finditer(text):
        found = match.group(0)
        before = text[:match.start()]
        cjk = bool(_CJK.search(found))
        if not relation and ((not cjk and not _MINE.search(before))
                             or (cjk and len(found) == 1 and not _MINE_ZH.search(before))):
            continue
        word = found if cjk else re.sub(r"(?:'s|s'|s)$", "", found.casefold())
        kind = kind_of(word) or kind_of(found)
        if kind and kind not in kinds:
            kinds.append(kind)
    return kinds


def kin_of_relation(relation: str) -> str | None:
    """The relative a relation names ("sister", "has a sister", "父亲叫", "dad's name"),
    or None; a long relation is a sentence, not a link."""
    if len(relation.split()) > 4:
        return None
    kinds = kinds_in(relation, relation=True)
    return kinds[0] if len(kinds) == 1 else None


# What follows a kin word in a relation that only names the relative ("husband's name",
# "姐姐叫"): the link to them, not a fact of theirs
_NAMING = re.compile(r"^(?:name(?:d| is)?|(?:is )?(?:called|named)|is|"
                     r"叫做?|名叫|名字(?:是|叫)?|是)$")


def leading(relation: str) -> tuple[str, str] | None:
    """A relation that starts with a kin word and says something of that relative
    ("husband lives in", "sister's job", "姐姐住在"): the kin word and the rest; None for
    anything else, and for a relation that names them ("husband's name", "爸爸叫")."""
    text = re.sub(r"^(?:my|our)\s+", "", relation.strip(), flags=re.IGNORECASE)
    found = _FIND.match(text)
    if found is None:
        return None
    word = found.group(0)
    single = re.sub(r"'s$", "", word.casefold())
    if single.endswith(("s", "s'")) and single.rstrip("'") not in _KIND_OF:
        return None  # "friends live in" is more than one relative
    rest = text[found.end():]
    if _CJK.search(word) and len(word) == 1 and not rest.startswith("的"):
        return None  # 哥 is in 哥伦比亚
    rest = re.sub(r"^(?:'s|s'|的)", "", rest).strip(" :：,，")
    if not rest or _NAMING.match(rest.casefold()) or kind_of(word) is None:
        return None
    return re.sub(r"(?:'s|s')$", "", word), rest
