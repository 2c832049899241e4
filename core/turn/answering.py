"""The facts that answer a question, put right before it.

A window's snapshot goes out with its first message; ten turns later the facts that
answer "我会什么乐器？" are far above, and the 1.5B model invented an instrument with the
right one in its context. So a question about the person or their people gets, just
before its words, the few facts that answer it: those of whom it asks about (the
person, or the relative it names in any language), in the slot it asks about ("where do
I live" asks for a home, "我是做什么工作的" for a job), then those it shares words or
meaning with; the person's and each relative's facts apart, by name.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from core.meaning.names import mentions
from core.recall.timespan import span_of
from core.store import GraphStore
from core.store.search import EDGE_SELECT, search_edges
from core.tools.base import PERSON_NODE
from core.tools.one_value import family
from core.turn.asking import asks_what_remains, is_question
from core.turn.snapshot import (
    active_tasks,
    names_person,
    others_named,
    person_profile,
    plain_line,
)
from core.turn.turn_result import NO_ANSWER, NO_ANSWER_ZH
from core.writer import forget_scope, grounding, kin, relatives, slots
from core.writer.language import in_first_person, language_of
from core.writer.requests import is_request

MOST = 4  # lines: each costs the person prompt time on a small local model
# What a question asks for that holds many values, and the relations that say it: "what's
# my hobby?" is answered by what the person likes or does, "我会什么乐器？" by what they play.
KINDS_ASKED = (
    (re.compile(r"\b(?:hobb\w*|free time|spare time|for fun|enjoy\w*|like doing|love doing|"
                r"interests?)\b|爱好|兴趣|喜欢做|平时", re.IGNORECASE),
     re.compile(r"\b(?:likes?|loves?|enjoys?|hobb\w*|into|interest\w*)\b|喜欢|爱|爱好|兴趣",
                re.IGNORECASE)),
    (re.compile(r"\b(?:instruments?|play)\b|乐器|弹|拉", re.IGNORECASE),
     re.compile(r"\b(?:plays?|playing|played)\b|弹|拉|演奏|吹|打|会", re.IGNORECASE)),
    (re.compile(r"\b(?:pets?|cat|dog|animal)\b|宠物|猫|狗", re.IGNORECASE),
     re.compile(r"\b(?:pets?|cats?|dogs?|called|named|has|have|owns?)\b|宠物|养|猫|狗|叫",
                re.IGNORECASE)),
    (re.compile(r"\ballerg\w*|过敏", re.IGNORECASE), re.compile(r"allerg\w*|过敏", re.IGNORECASE)),
)


# "what's my hamster called?", "我的仓鼠叫什么？": the name asked for is the thing's
_THINGS_NAME = re.compile(
    r"\bmy ([a-z][a-z-]+)(?:'s name|\s+(?:is\s+)?(?:called|named))|"
    r"我的((?:(?![名叫的什])[\u3400-\u9fff]){1,3})(?:叫什么|的名字|名字|叫啥)", re.IGNORECASE)
_NOT_A_THING = {"name", "名", "名字"}


def _asked_slots(message: str) -> set[str]:
    """The one-value slots a question speaks of, in the slots' own vocabulary; not the
    person's name when it asks what a thing of theirs is called."""
    wanted = {slot for slot, (anywhere, _around) in slots.CUES.items()
              if anywhere and re.search(anywhere, message, re.IGNORECASE)}
    thing = _THINGS_NAME.search(message)
    if thing and next(g for g in thing.groups() if g).casefold() not in _NOT_A_THING:
        wanted.discard("name")
    return wanted


# A relation that says nothing of what is had ("Melanie has a book"): its object says it
_BARE_HAVING = re.compile(r"(?i)\s*(?:has|have|had|owns?|got|有)\s*")


def _asked_kind(message: str, fact: dict[str, Any]) -> bool:
    """The question asks for what this fact says (a hobby, an instrument, a pet)."""
    relation, target = str(fact["relation"]), str(fact["target_name"])
    return any(asks.search(message) and says.search(relation) and (
        not _BARE_HAVING.fullmatch(relation) or asks.search(target))
        for asks, says in KINDS_ASKED)


def _names_relation(message: str, relation: str) -> bool:
    """The question names a many-valued relation, in its language or the other ("what's
    my rabbit's name?", "我的仓鼠叫什么？" and "User -hamster-> Biscuit"): it asks for that,
    before any slot its words also name ("名字" is a name)."""
    return family(relation) is None and not _FUNCTION_WORD.fullmatch(relation.strip()) \
        and (grounding.grounded(relation, grounding.said_text([message]))
             or mentions(message, relation))


# Relations that are only a verb or a preposition name nothing a question could ask by
_FUNCTION_WORD = re.compile(r"(?i)is|are|has|have|in|at|of|to|是|在|有|的")


# "What do you remember about me?", "你都知道我什么？": everything the memory keeps of the
# person answers it, not the two facts nearest in meaning (the 1.5B model named the job
# and the name and left the city out, on every run of the eval). Its gaps are bounded: a
# long message is read in one pass
_ALL_ABOUT_ME = re.compile(
    r"(?i)\b(?:what|anything|everything|all)\b[^?]{0,40}\b(?:you|u)\s+(?:know|remember|"
    r"recall|have|keep)\b[^?]{0,40}\b(?:about|of|on)\s+me\b|"
    r"\btell me (?:all )?about (?:me|myself)\b|"
    r"\b(?:you|u)\s+(?:know|remember|recall)\s+(?:anything|everything|much|something)\s+"
    r"(?:about|of)\s+me\b|"
    r"\bwho am i\b|你.{0,3}(?:记得|知道|了解|记住)了?(?:关于)?我的?些?(?:什么|哪些|多少|啥)|"
    r"关于我的?(?:什么|哪些|一切|事)|我是谁")
ALL_ABOUT_MOST = 8


def _own(profile: list[dict], person: set[str]) -> list[dict[str, Any]]:
    """The profile's facts about the person themself (not their people)."""
    return [f for f in profile if str(f["source_name"]).casefold() in person]


def _whose(store: GraphStore, message: str, asked: list[str], profile: list[dict],
           person: set[str]) -> list[dict[str, Any]]:
    """The facts of whom the question asks about: the relatives it names by kin word,
    someone else it names, or the person; none when it names no one the memory knows."""
    if asked:
        people = relatives.named(store)
        names = [n for kind in asked for n in people.get(kind, [])]
        if not names:
            return []
        marks = ", ".join("?" * len(names))
        return store.query(
            EDGE_SELECT + f" WHERE s.name IN ({marks}) AND e.status = 'active' AND"
            " e.category = 'general' ORDER BY e.mention_count DESC, e.updated_at DESC"
            " LIMIT 30", names)
    own = _own(profile, person)
    if others := others_named(store, message, person):
        # asked about someone else by name ("what pets does Melanie have?"): their facts,
        # not the person's unless it speaks of them too (the person's "has adopted"
        # answered for Melanie's pets)
        marks = ", ".join("?" * len(others))
        theirs = store.query(
            EDGE_SELECT + f" WHERE e.source_id IN ({marks}) AND e.status = 'active' AND"
            " e.category = 'general' ORDER BY e.mention_count DESC, e.updated_at DESC"
            " LIMIT 30", [n["id"] for n in others])
        if kinds := _their_relatives(message, others):
            # "what do Melanie's kids like?" asks of the kids: Melanie's own likes do not
            # answer it (the 1.5B model said "photography, nature")
            theirs = [f for f in theirs if set(kinds) & set(kin.kinds_in(
                f"{f['relation']} {f['target_name']}", relation=True))]
        return theirs + (own if in_first_person(message) else [])
    if in_first_person(message) or names_person(message, person):
        return own
    # of no one it knows ("where did Oliver hide his bone?"): the person's facts answered
    # it ("the user made a stained glass window")
    return []


def facts_for(store: GraphStore, message: str) -> list[dict[str, Any]]:
    """The facts that answer `message` when it is a question, best first (see above)."""
    if not is_question(message):
        return []
    profile = person_profile(store)
    person = forget_scope.person_names(profile)
    if _ALL_ABOUT_ME.search(message):
        return _own(profile, person)[:ALL_ABOUT_MOST]
    asked = kin.kinds_in(message)
    theirs = _whose(store, message, asked, profile, person)
    if not theirs:
        return []
    wanted = _asked_slots(message)
    said = grounding.said_text([message])
    found = {f["id"]: i for i, f in enumerate(search_edges(store, message,
                                                           categories=["general"], limit=30))}

    # a kind asked for that no relation says in words ("my pet" and "User -hamster->
    # Biscuit"): the facts closest in meaning stand for it
    kind_by_meaning = set()
    if any(asks.search(message) for asks, _says in KINDS_ASKED) and not any(
            _asked_kind(message, f) for f in theirs):
        kind_by_meaning = {f["id"] for f in _by_meaning(message, theirs[:MEANING_AT_MOST])[:1]}

    def rank(fact: dict[str, Any]) -> tuple[int, int, int, int, int]:
        """What the question asks for first (a pet's name is the pet's, not the
        person's name), then the slot, shared words and the search's order."""
        slot = family(str(fact["relation"]), str(fact["target_name"]))
        by_kind = int(_asked_kind(message, fact)
                      or fact["id"] in kind_by_meaning)
        by_name = int(_names_relation(message, str(fact["relation"])))
        by_slot = int(slot is not None and slot in wanted)
        by_words = grounding.shared_words(f"{fact['relation']} {fact['target_name']}", said)
        return (-by_kind, -by_name, -by_slot, -min(by_words, 1), found.get(fact["id"], 99))

    # asked in the third person ("what has John cooked?", "how did John overcome his
    # injury?"), only a fact of the kind, relation or slot asked for answers: one the
    # search ranked or that shares a word is what the 1.5B model answered with ("John
    # has a team", "John had a tough time with his English lit class"), the turns that
    # said the answer above it
    third_person = not asked and not in_first_person(message)
    ranked = [f for f in sorted(theirs, key=rank) if rank(f) != (0, 0, 0, 0, 99)
              and (any(rank(f)[:3]) or not third_person)][:MOST]
    if ranked and any(rank(ranked[0])[:3]):
        # what the question asks for was found: only facts of that standing go before it
        # (with "likes climbing" first and "plays erhu" second, the 1.5B model answered a
        # hobby question with the erhu)
        best = next(i for i, v in enumerate(rank(ranked[0])[:3]) if v)
        ranked = [f for f in ranked if rank(f)[best]]
    if ranked or third_person:
        return ranked
    # nothing shares a slot or a word: the closest in meaning ("我会什么乐器？" and
    # "会弹 吉他"), embedded now; asked about a relative, what is known of them
    close = _by_meaning(message, theirs[:MEANING_AT_MOST])
    return close or (theirs[:MOST] if asked else [])


# A question of the past ("where did I live before?", "我以前做什么工作？") is answered
# from then, not by what holds now
_PAST = re.compile(r"\b(?:did|was|were|used to|before|previous\w*|former\w*|ago|"
                   r"back then|at first|originally)\b|以前|之前|原来|过去|曾经|当时|那时",
                   re.IGNORECASE)


def settling(message: str, facts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Of the facts that answer `message` (`facts_for`), those that settle it: it asks,
    in the person's first person and of now, for a value that is one at a time (a home,
    a job, a name), and these are the memory's value of it. Nothing a turn said then
    stands beside them: "Where do I live now?" with "moved Suzhou" before it and the
    turn "my mother doesn't live in Beijing, I meant Dalian" was answered "Dalian" by
    the 1.5B model. A question of a list (hobbies, pets) or of a time is not settled."""
    if not facts or not in_first_person(message) or _PAST.search(message) or \
            span_of(message, date.today()) is not None:
        return []
    wanted = _asked_slots(message)
    return [f for f in facts
            if family(str(f["relation"]), str(f["target_name"])) in wanted]


def _their_relatives(message: str, others: list[dict[str, Any]]) -> list[str]:
    """The kinds of relative the question asks about as someone's ("Melanie's kids",
    "Nate's sister", "李娜的丈夫")."""
    kinds: list[str] = []
    for other in others:
        name = re.escape(str(other["name"]))
        for found in re.finditer(rf"(?i)\b{name}'s\s+(\w+)|{name}的(\w{{1,3}})", message):
            word = found.group(1) or found.group(2)
            kinds += [k for k in kin.kinds_in(word, relation=True) if k not in kinds]
    return kinds


MEANING_AT_MOST = 24  # facts embedded on the spot for one question
MEANING_KEPT = 2


def _by_meaning(message: str, facts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    try:
        from core.meaning.vectors import similar_now  # noqa: PLC0415  (numpy, the model)
    except ImportError:
        return []
    from core.writer.forgetting import CLOSE  # noqa: PLC0415

    by_id = {f["id"]: f for f in facts}
    return [by_id[i] for i, score in similar_now(message, facts)[:MEANING_KEPT]
            if score >= CLOSE]


TASKS_MOST = 6


def tasks_for(store: GraphStore, message: str) -> list[str]:
    """The open tasks' names, in the order they were made, when a question asks what
    remains to do or names a task in its words: quoted to the model right before it, the
    1.5B model named them as they are instead of inventing steps."""
    if not is_question(message):
        return []
    open_tasks = list(reversed(active_tasks(store)))
    said = grounding.said_text([message])
    if asks_what_remains(message) or any(
            grounding.shared_words(f"{t['name']} {t['description'] or ''}", said)
            for t in open_tasks):
        return [str(t["name"]) for t in open_tasks][:TASKS_MOST]
    return []


def render(facts: list[dict[str, Any]], tasks: list[str] = ()) -> str:
    """The lines that go right before the question ("" when none)."""
    parts = []
    if facts:
        lines = [plain_line(f) if f["source_name"] != PERSON_NODE else
                 f"- the user {f['relation']} {f['target_name']}" for f in facts]
        parts.append("What the memory says that answers it:\n" + "\n".join(lines))
    if tasks:
        parts.append("Tasks not done yet:\n" + "\n".join(f"- {t}" for t in tasks))
    return "\n".join(parts)


# The person's one-value slots in words of the reply's language: the relation is the
# writer's, often in the other language ("根据你告诉我的：你：name Sun Hui。")
_SLOT_WORDS = {
    "name": ("your name is {}", "你的名字是{}"), "home": ("you live in {}", "你住在{}"),
    "job": ("your job is {}", "你的工作是{}"), "employer": ("you work at {}", "你在{}工作"),
    "diet": ("your diet is {}", "你的饮食是{}"), "partner": ("your partner is {}", "你的伴侣是{}"),
    "age": ("your age is {}", "你的年龄是{}"), "birthday": ("your birthday is {}", "你的生日是{}"),
    "school": ("your school is {}", "你的学校是{}"), "phone": ("your phone is {}", "你的电话是{}"),
    "email": ("your email is {}", "你的邮箱是{}")}


def _told(fact: dict[str, Any], chinese: bool) -> str:
    """One fact in the app's own reply: a slot of the person's in the reply's words ("your
    name is Sun Hui", "你住在布拉格"), anything else as kept, under whose it is."""
    target = str(fact["target_name"])
    if fact["source_name"] == PERSON_NODE:
        slot = _SLOT_WORDS.get(family(str(fact["relation"]), target) or "")
        if slot:
            return slot[chinese].format(target)
    whose = ("你" if chinese else "you") if fact["source_name"] == PERSON_NODE \
        else str(fact["source_name"])
    return f"{whose}{'：' if chinese else ': '}{fact['relation']} {target}"


def reply_from_memory(store: GraphStore, message: str) -> str:
    """The app's own reply when the model only says the person's words back, twice: the
    facts that answer a question, a plain acknowledgement of what they told, or, when they
    asked for something made ("suggest a name for a bakery"), that no answer came: "Noted."
    would say it was done. In the person's language."""
    chinese = language_of(message) == "Chinese"
    tasks = tasks_for(store, message)
    facts = [] if tasks and asks_what_remains(message) else facts_for(store, message)
    if tasks and not facts:
        listed = ("、" if chinese else ", ").join(tasks)
        return f"还没做的：{listed}。" if chinese else f"Still to do: {listed}."
    if facts:
        said = ("；" if chinese else "; ").join(_told(f, chinese) for f in facts)
        return f"根据你告诉我的，{said}。" if chinese else f"From what you told me, {said}."
    if is_request(message):  # (asked as a question too: "can you write a poem?")
        return NO_ANSWER_ZH if chinese else NO_ANSWER
    if is_question(message):
        return "这个我还不知道。" if chinese else "I don't know that yet."
    return "好的，我记下了。" if chinese else "Noted."
