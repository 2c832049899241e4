"""Whose fact it is: the person's, or someone's they talk about.

The memory-writing step lists the person's own facts without a subject, and a 1.5B model
put the sister's name, job and city there ("My sister Mei is a doctor in Paris" became
`User -job-> doctor`, `User -home-> Paris` beside the person's own). So the app reads the
message itself: each clause belongs to whoever it is about (the person when they speak of
themselves, "my sister", "她" …; a clause without either goes on with the one before), and
a fact the step gave the person, found only in clauses about someone else, is moved to
that someone, by the name the message gives them when it does.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from core.writer import grounding

# People a person talks about, in English and Chinese (longest first, so 女朋友 wins
# over 朋友).
RELATIVES = sorted({
    "sister", "brother", "mom", "mum", "mother", "dad", "father", "wife", "husband",
    "partner", "boyfriend", "girlfriend", "friend", "colleague", "coworker", "co-worker",
    "son", "daughter", "boss", "neighbor", "neighbour", "roommate", "aunt", "uncle",
    "cousin", "grandma", "grandmother", "grandpa", "grandfather", "fiance", "fiancée",
    "姐姐", "妹妹", "哥哥", "弟弟", "妈妈", "母亲", "爸爸", "父亲", "妻子", "老婆", "丈夫",
    "老公", "女朋友", "男朋友", "朋友", "同事", "儿子", "女儿", "老板", "邻居", "室友",
    "姑姑", "阿姨", "叔叔", "舅舅", "表姐", "表妹", "表哥", "表弟", "奶奶", "爷爷", "外婆",
    "外公", "太太", "先生", "男友", "女友"}, key=len, reverse=True)
_CJK = re.compile(r"[\u3400-\u9fff]")
_OTHER = re.compile("|".join(
    rf"\bmy {re.escape(r)}s?\b" if not _CJK.search(r) else re.escape(r) for r in RELATIVES),
    re.IGNORECASE)
_PRONOUN = re.compile(r"\b(she|he|her|his|they|their)\b|[她他]", re.IGNORECASE)
_SELF = re.compile(r"\b(i|i'm|im|i've|i'd|i'll|me|myself)\b|我(?!的?(" + "|".join(
    re.escape(r) for r in RELATIVES if _CJK.search(r)) + "))", re.IGNORECASE)
# A clause that corrects or sets apart what the one before said, about the same one
_GOES_ON = re.compile(r"^(?:sorry,?\s*)?(?:i meant|i mean|i meant to say|not|rather|or rather)\b|"
                      r"^(?:我是说|我的意思是|应该是|不是|而是|是)", re.IGNORECASE)
_CLAUSES = re.compile(r"[.!?;:。！？；：\n]+|[,，、]\s*|\s+(?:and|but)\s+", re.IGNORECASE)


@dataclass(frozen=True)
class Owner:
    """Who a clause is about: None for the person, else how they are named ("sister")."""

    who: str | None


PERSON = Owner(None)
PERSON_WORDS = grounding.PERSON


def _relative(found: str) -> str:
    word = found.casefold().removeprefix("my ").strip()
    return word[:-1] if word.endswith("s") and word[:-1] in RELATIVES else word


def clause_owners(message: str) -> list[tuple[str, Owner]]:
    """Each clause with whom it is about."""
    owners: list[tuple[str, Owner]] = []
    current, last_other = PERSON, None
    for clause in (c.strip() for c in _CLAUSES.split(message)):
        if not clause:
            continue
        if _GOES_ON.search(clause):  # "…, I meant Boston", "…，不是青岛": the same one's
            owners.append((clause, current))
            continue
        other, me = _OTHER.search(clause), _SELF.search(clause)
        pronoun = _PRONOUN.search(clause)
        if other and (not me or other.start() < me.start()):
            last_other = _relative(other.group(0))
            current = Owner(last_other)
        elif other:  # "I love painting with my son, he…": he is the son
            last_other, current = _relative(other.group(0)), PERSON
        elif me:
            current = PERSON
        elif pronoun and last_other is not None:
            current = Owner(last_other)
        owners.append((clause, current))
    return owners


def goes_on(clause: str) -> bool:
    """The clause corrects or sets apart the one before ("I meant Boston", "不是青岛")."""
    return _GOES_ON.search(clause) is not None


def speaks_of_self(clause: str) -> bool:
    """The clause has the person speak of themself ("I", "me", "我")."""
    return _SELF.search(clause) is not None


def owner_of(words: str, message: str) -> Owner:
    """Whom `words` (a fact's object) belongs to in `message`: someone else only when
    every clause that holds it is about that one someone."""
    holders = {owner for clause, owner in clause_owners(message)
               if grounding.grounded(words, grounding.said_text([clause]))}
    if len(holders) == 1:
        return holders.pop()
    return PERSON


_RELATIVE_WORD = re.compile("|".join(
    rf"\b{re.escape(r)}s?\b" if not _CJK.search(r) else re.escape(r) for r in RELATIVES),
    re.IGNORECASE)


def is_relative(relation: str) -> str | None:
    """The relative a relation names ("sister", "has a sister", "sister's name", "姐姐叫"),
    or None: such a fact links the person to that relative, and stays the person's."""
    found = _RELATIVE_WORD.search(relation)
    if found is None or len(relation.split()) > 4:
        return None
    return _relative(found.group(0))


_NAME = r"([A-Z][\w'-]+(?: [A-Z][\w'-]+)?)"
# A name in Chinese text is in characters ("李娜") or in Latin letters ("David", "Anna
# Lee"): many Chinese speakers go by a Western name, and a name is written as it is
_LATIN_NAME = r"[A-Z][A-Za-z\u00c0-\u024f'-]*(?: [A-Z][A-Za-z\u00c0-\u024f'-]*)?"
_CJK_NAME = (rf"({_LATIN_NAME}(?![A-Za-z\u00c0-\u024f'-])|"
             r"[\u3400-\u9fff]{2,4}?(?=[，,。.！!？?\s、；;]|$|[住是在喜工做有]))")
_EN_RELATIVE = "|".join(re.escape(r) for r in RELATIVES if not _CJK.search(r))
_ZH_RELATIVE = "|".join(re.escape(r) for r in RELATIVES if _CJK.search(r))
_NAMED = [re.compile(p) for p in (
    rf"\b[Mm]y ({_EN_RELATIVE}),? {_NAME}",  # my sister Mei, my sister, Mei
    rf"\b[Mm]y ({_EN_RELATIVE})(?:'s name is| is called| is named) {_NAME}",
    rf"我的?({_ZH_RELATIVE})的?(?:叫|名叫|名字是|名字叫){_CJK_NAME}",
    rf"我的?({_ZH_RELATIVE})\s*({_LATIN_NAME})(?![A-Za-z\u00c0-\u024f'-])",  # 我丈夫David
    rf"\b[Mm]y ({_EN_RELATIVE}),? ([\u3400-\u9fff]{{2,4}})(?![\u3400-\u9fff])",  # my wife 李娜
    rf"\b[Mm]y ({_EN_RELATIVE})(?:'s name is| is called| is named) "
    r"([\u3400-\u9fff]{2,4})(?![\u3400-\u9fff])",  # my brother is called 李雷
    rf"\b[Mm]y ({_EN_RELATIVE})'s name is {_NAME}",
)]
# The common Chinese family names (about nine in ten people bear one): a name put right
# after the kin word ("我的弟弟孙慧在布拉格生活") is told from the words that follow one
# ("我的弟弟今年在…", "我姐姐一直住在…") by its first character
_SURNAMES = set(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶"
    "程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺"
    "顾毛郝龚邵万钱严覃武戴莫孔向汤")
_COMPOUND_SURNAMES = ("欧阳", "司马", "诸葛", "上官", "东方", "皇甫", "尉迟", "慕容", "令狐")
_APPOSED_ZH = re.compile(rf"我的?({_ZH_RELATIVE})([\u3400-\u9fff]{{2,4}}?)"
                         r"(?=[在住是，,。.、；;！!？?\s]|$)")


def _apposed_zh(message: str, mentioned: set[str]) -> dict[str, str]:
    """"我的弟弟孙慧在…": the relative named right after the kin word, by a family name,
    when the facts name them too (`mentioned`: "我妈妈白天在上班" names no one)."""
    found = {}
    for match in _APPOSED_ZH.finditer(message):
        name = match.group(2)
        if name in mentioned and ((len(name) <= 3 and name[0] in _SURNAMES)
                                  or name.startswith(_COMPOUND_SURNAMES)):
            found.setdefault(_relative(match.group(1)), name)
    return found


_NOT_NAMES = {"Is", "Lives", "Works", "Likes", "Has", "And", "But", "The", "Who", "Was",
              "Just", "Also", "Still", "Now", "Always"}


def named_relatives(message: str, mentioned: set[str] = frozenset()) -> dict[str, str]:
    """The people the message names with how they are related to the person ("my sister
    Mei", "my brother is called Tom", "我姐姐叫李娜", and "我的弟弟孙慧" when the facts
    `mentioned` name 孙慧): relative -> name."""
    found: dict[str, str] = {}
    for pattern in _NAMED:
        for match in pattern.finditer(message):
            relative, name = _relative(match.group(1)), match.group(2).strip()
            if name.split()[0] not in _NOT_NAMES:
                found.setdefault(relative, name)
    for relative, name in _apposed_zh(message, mentioned).items():
        found.setdefault(relative, name)
    return found


def owned(triplets: list[dict[str, str]], message: str) -> list[dict[str, str]]:
    """The person's facts that the message says of someone else, given to that someone
    (see above): by the name given them in the same facts ("sister": "Mei"), else by how
    the person calls them ("sister")."""
    # a name the facts give someone: a subject, or the one a kin link names
    named = named_relatives(message, {str(t["subject"]).strip() for t in triplets} | {
        str(t["object"]).strip() for t in triplets if is_relative(t["relation"])})
    triplets = [_linked_the_right_way(_by_name(t, named), named) for t in triplets]
    mine = [t for t in triplets if t["subject"].strip().casefold() in PERSON_WORDS]
    names: dict[str, str] = dict(named)
    for fact in mine:
        relative = is_relative(fact["relation"])
        if relative:
            names.setdefault(relative, fact["object"])
    linked = {is_relative(t["relation"]) for t in mine} - {None}
    links = [{"subject": "User", "relation": relative, "object": name}
             for relative, name in named.items() if relative not in linked]

    def whose_fact(fact: dict[str, str]) -> dict[str, str]:
        if fact not in mine or is_relative(fact["relation"]):
            return fact
        owner = owner_of(fact["object"], message).who
        return fact if owner is None else {**fact, "subject": names.get(owner, owner)}

    owned_facts, seen = [], set()
    for fact in links + [whose_fact(fact) for fact in triplets]:
        key = tuple(str(v).casefold() for v in (fact["subject"], fact["relation"],
                                                fact["object"]))
        if key not in seen:  # the same fact twice, once under each name
            seen.add(key)
            owned_facts.append(fact)
    return owned_facts


def _by_name(fact: dict[str, str], named: dict[str, str]) -> dict[str, str]:
    """"sister Mei", "my sister", "Mei (sister)" as a subject are Mei, one node: a small
    model wrote "sister Mei" beside "Mei" and made two people of one."""
    subject = re.sub(r"[()（）]", " ", fact["subject"]).casefold()
    words = set(subject.removeprefix("my ").split())
    for relative, name in named.items():
        own = set(name.casefold().split())
        if words == own or (relative in words and words <= {relative, "my", *own}):
            return {**fact, "subject": name}
    return fact


def _linked_the_right_way(fact: dict[str, str], named: dict[str, str]) -> dict[str, str]:
    """"Mei -sister-> Lin Wei", the link to a named relative written backwards, becomes
    "User -sister-> Mei"."""
    relative = is_relative(fact["relation"])
    if relative and named.get(relative, "").casefold() == fact["subject"].strip().casefold():
        return {**fact, "subject": "User", "object": fact["subject"]}
    return fact


def owned_in_call(arguments: str, message: str) -> str:
    """A model's memory_commit arguments with its facts about the person that the message
    says of someone else given to that someone; anything malformed is left as it is for
    the validator to explain."""
    try:
        args = json.loads(arguments or "{}")
    except (ValueError, RecursionError):
        return arguments
    triplets = args.get("triplets") if isinstance(args, dict) else None
    if not isinstance(triplets, list) or not all(
            isinstance(t, dict) and all(isinstance(t.get(k), str)
                                        for k in ("subject", "relation", "object"))
            for t in triplets):
        return arguments
    moved = owned(triplets, message)
    return arguments if moved == triplets else json.dumps({**args, "triplets": moved},
                                                          ensure_ascii=False)
