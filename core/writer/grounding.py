"""Only facts the person said: a model's fact must be made of words the person wrote.

Against a real 1.5B model, `User -lives in-> Hangzhou` was stored in several turns of a
conversation that never named Hangzhou (it was the example in the instructions), with
`周悦 -叫周悦-> 周悦`, `周 Min -vegetarian-> no` and a task "find_bread" for a question
about bread. Small models copy examples and fill every field. So before the model's
memory_commit (or a supersede's new fact) runs, each fact's subject and object must
appear in what the person wrote in this conversation's recent messages; a fact that does
not is refused with a reason the model can act on ("use the user's own words"). The
relation may paraphrase ("works as" for "I'm a nurse"). And a task is created only for a
plan the person asked help with: a question or a statement is not a task.

Known limit: a fact translated into another language ("Shenzhen" for "深圳") is refused
too; the instructions ask for the user's own words and language, and the refusal says so.
"""

from __future__ import annotations

import json
import re
from typing import Any

from core.store.text import has_cjk
from core.writer.calls import subject_and_value

# Names for the person and the assistant that need no grounding as a subject or object.
PERSON = {"user", "the user", "i", "me", "myself", "我", "用户", "本人", "自己"}
ASSISTANT = {"assistant", "trulymem", "you", "你", "助手"}
# Words that carry no fact on their own: an object made only of these says nothing.
EMPTY_WORDS = {
    "a", "an", "the", "is", "are", "was", "of", "to", "in", "on", "at", "and", "or", "my",
    "yes", "no", "true", "false", "none", "null", "n/a", "na", "unknown", "something",
    "是", "否", "不", "没有", "有", "的", "了"}
# Little words a task's name has that say nothing of which task it is
CONNECTIVES = {"for", "with", "from", "about", "by", "as", "it", "this", "that", "up",
               "为", "给", "和", "把"}
_WORD = re.compile(r"[a-z0-9][a-z0-9'\-]*|[\u3400-\u9fff\uf900-\ufaff]+", re.IGNORECASE)
# A plan the person asks help with: the words people use to ask for one.
_PLAN = re.compile(
    r"\b(plan|planning|steps?|to-?do|checklist|remind|reminder|schedule|organi[sz]e|"
    r"i need to|i have to|i want to|we need to|let's|lets|task|project|"
    r"prepare|itinerary)\b|计划|规划|安排|步骤|待办|清单|提醒|我要|我需要|我得|准备|任务",
    re.IGNORECASE)
# Asking for help: a plan to a model that tells one kind of work from another, a one-off
# request to a small one ("帮我把“早上好”翻译成法语" became a task a 1.5B model listed
# among the steps of a birthday party)
_HELP = re.compile(r"\bhelp me\b|帮我|帮忙", re.IGNORECASE)


# "my dad doesn't live in Cairo", "不是青岛", "I'm not a teacher": words that deny a value
DENIED = re.compile(r"\b(?:not|no longer|never|no|nor)\b|n't\b|不(?!错)|没|别", re.IGNORECASE)


def _norm(text: str) -> str:
    return " ".join(_WORD.findall(text.casefold()))


def _word_in(word: str, said: str) -> bool:
    if has_cjk(word):
        if word in said:
            return True
        pairs = [word[i:i + 2] for i in range(len(word) - 1)] or [word]
        return sum(pair in said for pair in pairs) * 2 >= len(pairs)
    stem = word[:max(4, len(word) - 2)] if len(word) > 4 else word
    return re.search(rf"(?<![a-z0-9]){re.escape(stem)}", said) is not None


def grounded(name: str, said: str) -> bool:
    """`name` is made of words in `said` (the person's recent text, normalised): at least
    half of its meaningful words, and at least one."""
    if name.strip().casefold() in PERSON | ASSISTANT:
        return True
    words = [w for w in _WORD.findall(name.casefold()) if w not in EMPTY_WORDS]
    if not words:
        return False
    return sum(_word_in(w, said) for w in words) * 2 >= len(words)


def meaningful(name: str) -> list[str]:
    return [w for w in _WORD.findall(name.casefold()) if w not in EMPTY_WORDS | CONNECTIVES]


def shared_words(name: str, said: str) -> int:
    """How many of `name`'s meaningful words are in `said`."""
    return sum(_word_in(w, said) for w in meaningful(name))


def mentions(name: str, said: str, others: list[str] = ()) -> bool:
    """`said` names `name` by a word that sets it apart from `others` ("gift" of "Buy a
    gift for Mom" in "I bought the gift already"; "Kyoto", in every step of the trip,
    names none of them); with no such word, by half of its words (`grounded`)."""
    theirs = " ".join(o.casefold() for o in others)
    own = [w for w in meaningful(name) if not _word_in(w, theirs)]
    if not own:
        return grounded(name, said)
    return any(_word_in(w, said) for w in own)


def said_text(messages: list[str]) -> str:
    """What the person wrote, normalised for `grounded`."""
    return " ".join(m.casefold() for m in messages)


def _self_link(triplet: Any) -> str | None:
    """Why a fact that links a name to itself ("周悦 -叫周悦-> 周悦", "User -flights->
    flights") is no fact, or None."""
    if not isinstance(triplet, dict):
        return None
    subject, relation, obj = (str(triplet.get(k) or "").strip().casefold()
                              for k in ("subject", "relation", "object"))
    if obj and obj in (subject, relation):
        return (f"'{triplet.get('subject')} -{triplet.get('relation', '')}-> "
                f"{triplet.get('object')}' links a name to itself")
    return None


# A relation that only denies ("Beijing -not-> brother", the 1.5B model's note of "my
# brother lives in Moscow, not Beijing"): it says what is not, which is no fact to keep
# ("User -is not-> vegetarian" names what is denied, and stays a fact)
_ONLY_DENIES = re.compile(r"not|no|never|不|非|并非|没", re.IGNORECASE)


def _only_denies(triplet: Any) -> str | None:
    """Why a fact whose relation only says "not" is no fact, or None."""
    relation = triplet.get("relation") if isinstance(triplet, dict) else None
    if isinstance(relation, str) and _ONLY_DENIES.fullmatch(relation.strip()):
        return (f"'{triplet.get('subject')} -{relation}-> {triplet.get('object')}' only "
                "says what is not; store what is")
    return None


# Relations a fact about a person is commonly put in, said or not ("home" for "I live in
# Hangzhou"). Any other relation needs a word of the person's: the 1.5B model stored
# "User -knows-> Kyoto" for "Help me plan a trip to Kyoto".
COMMON_RELATIONS = set("""
name names named called call is are am be was has have had owns own home lives live living
lived hometown from born birthday age job jobs works work working worked occupation
profession career employer company role pet pets cat cats dog dogs allergy allergies
allergic likes like loves love enjoys enjoy prefers prefer favorite favourite dislikes
dislike hates hate plays play speaks speak language languages learns learning learn studies
studying study studied student school university college diet eats eat drinks drink hobby
hobbies interest interests sister sisters brother brothers sibling siblings mother mom mum
father dad parent parents wife husband partner spouse married girlfriend boyfriend son sons
daughter daughters child children kid kids friend friends colleague colleagues boss family
relative cousin aunt uncle grandmother grandfather grandma grandpa neighbor neighbour city
country nationality email phone address birthplace fears afraid goal goals plan plans
wants want needs need
""".split())
COMMON_CJK = ("名", "叫", "住", "家", "老家", "工作", "职业", "上班", "宠物", "养", "过敏", "喜欢",
              "爱", "讨厌", "学", "会", "说", "年龄", "岁", "生日", "出生", "姐", "妹", "哥", "弟",
              "妈", "爸", "父", "母", "妻", "丈夫", "老公", "老婆", "儿子", "女儿", "孩子", "朋友",
              "同事", "是", "有", "在", "吃", "喝", "玩", "怕", "想")


def unsaid_relation(triplet: Any, said: str) -> str | None:
    """Why a fact's relation is neither a common one nor the person's words, or None."""
    relation = triplet.get("relation") if isinstance(triplet, dict) else None
    if not isinstance(relation, str):
        return None
    words = meaningful(relation)
    if not words or any(_word_in(w, said) or w in COMMON_RELATIONS or (
            has_cjk(w) and any(c in w for c in COMMON_CJK)) for w in words):
        return None
    return (f"'{triplet.get('subject')} -{relation}-> {triplet.get('object')}' is not "
            f"stored: the user did not say {relation!r}")


def _relation_said(relation: str, said: str) -> bool:
    words = meaningful(relation)
    return bool(words) and any(_word_in(w, said) for w in words)


def _said_under_another(triplets: list[Any], message: str) -> dict[int, str]:
    """Facts that repeat another fact's subject and value of the same call under a
    relation the message does not say, where the other's relation is said: why each is
    no fact, by index. "我丈夫住在东京" came as `丈夫 -住-> 东京` and `丈夫 -工作-> 东京`,
    and the second told every later answer that he works there."""
    said = said_text([message])
    facts = [(i, t) for i, t in enumerate(triplets) if isinstance(t, dict) and all(
        isinstance(t.get(k), str) for k in ("subject", "relation", "object"))]
    why: dict[int, str] = {}
    for i, fact in facts:
        if _relation_said(fact["relation"], said):
            continue
        others = [t["relation"] for j, t in facts if j != i and subject_and_value(t) ==
                  subject_and_value(fact) and _relation_said(t["relation"], said)]
        if others:
            why[i] = (f"'{fact['subject']} -{fact['relation']}-> {fact['object']}' is not "
                      f"stored: the user said {fact['object']!r} of {others[0]!r}, not of "
                      f"{fact['relation']!r}")
    return why


def _ungrounded(triplet: Any, said: str) -> str | None:
    """Why a fact is not the person's words, or None when it is."""
    if not isinstance(triplet, dict):
        return None  # the schema's own check says what is wrong
    missing = [str(triplet.get(k)) for k in ("subject", "object")
               if isinstance(triplet.get(k), str) and not grounded(triplet[k], said)]
    subject, obj = triplet.get("subject"), triplet.get("object")
    if not missing:
        return None
    fact = f"{subject} -{triplet.get('relation', '')}-> {obj}"
    return (f"'{fact}' is not stored: {', '.join(repr(m) for m in missing)} is not in what "
            "the user wrote")


REFUSED_HINT = ("Store only what the user said, in the user's own words and language; "
                "never facts from examples or guesses. Do not retry these.")


INFERRED = 0.6  # the confidence of a fact a strong model put in its own words: a guess


def _as_guess(triplet: dict[str, Any]) -> dict[str, Any]:
    given = triplet.get("confidence")
    sure = float(given) if isinstance(given, (int, float)) and not isinstance(given, bool) \
        else 1.0
    return {**triplet, "confidence": min(INFERRED, sure)}


def check_call(name: str, arguments: str, said: str, message: str,
               strict: bool = True) -> tuple[str, str | None]:
    """The call's arguments with the facts the person did not say taken out, and why
    they were (None when nothing was). A call with nothing left comes back with
    arguments "" (it must not run).

    Not `strict` (a model that is not small: a cloud service), a fact in other words
    than the person's ("Shenzhen" for 深圳, "dog" for "my Labrador") is kept as a guess
    for the person's Review (confidence INFERRED), not refused; one that links a name to
    itself is refused all the same."""
    try:
        args = json.loads(arguments or "{}")
    except (ValueError, RecursionError):
        return arguments, None  # the executor explains the broken JSON
    if not isinstance(args, dict):
        return arguments, None
    if name == "task_create" and not (_PLAN.search(message) or (
            not strict and _HELP.search(message))):
        return "", ("Not created: a task is only for a plan or steps the user asked help "
                    "with; this message is not one. Answer the user instead.")
    if name == "memory_commit" and isinstance(args.get("triplets"), list):
        kept, reasons, guessed = [], [], 0
        twice = _said_under_another(args["triplets"], message) if strict else {}
        for i, triplet in enumerate(args["triplets"]):
            nonsense = _self_link(triplet) or _only_denies(triplet) or (
                (twice.get(i) or unsaid_relation(triplet, said)) if strict else None)
            unsaid = _ungrounded(triplet, said)
            if nonsense or (unsaid and strict):
                reasons.append(nonsense or unsaid)
            elif unsaid:
                kept.append(_as_guess(triplet))
                guessed += 1
            else:
                kept.append(triplet)
        if not reasons and not guessed:
            return arguments, None
        why = "; ".join(reasons) + ". " + REFUSED_HINT if reasons else None
        if not kept:
            return "", why
        return json.dumps({**args, "triplets": kept}, ensure_ascii=False), why
    if name == "memory_purge" and isinstance(args.get("new_relation"), dict):
        new = args["new_relation"]
        target = new.get("target", new.get("object"))
        if isinstance(target, str) and target.strip() and not grounded(target, said):
            return "", (f"Not replaced: {target!r} is not in what the user wrote. "
                        + REFUSED_HINT)
    return arguments, None
