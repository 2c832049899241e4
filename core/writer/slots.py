"""When a new value may replace an old one: only when the person's own words, in the
message that brings it, speak of that slot, say the value and say whose it is.

The one-value rule (`core.tools.one_value`) replaces where one lives, one's job, one's name
when a new value arrives. A 1.5B model files a hobby as the person's job ("I love
painting"), a child's name as the person's name ("my son is called Tom"), a booked hotel
under 工作: with the rule app-side, each of those guesses replaced a true fact. So before a
fact that would replace another is written, the message is read clause by clause (see
`core.writer.whose`): a clause about that subject must hold the value and speak of the
slot, in the slot's own vocabulary ("live", "moved", "住", "搬" for a home; "work",
"as a", "工作", "当" for a job; "my name is", "I'm <the name>", "我叫" for a name). A fact
that fails is not stored from a small local model (its slot is a guess, and kept it
showed in every answer as a second job); from another model it is written beside the old
value as a guess for the person's Review: a guess replaces nothing. When the person said
the value of themself, a small model's refused fact is kept under their own words instead
(`core.writer.own_words`: "我学二胡" filed as a job is `User -学-> 二胡`).
"""

from __future__ import annotations

import re
from typing import Any

from core.meaning.names import mentions
from core.tools.one_value import family
from core.writer import grounding, kin, own_words, whose
from core.writer.calls import triplets_of, with_triplets

GUESS = 0.6  # the confidence of a fact kept beside the old value: below one_value.SURE

# Words that speak of each slot anywhere in a clause, and (with {v}) words that speak of
# it only right before the value: "I'm Lin Wei" says a name, "I'm a nurse" a job.
CUES: dict[str, tuple[str, tuple[str, ...]]] = {
    "home": (r"\b(?:live[sd]?|living|move[sd]?|moving|relocat\w*|based|home|resid\w*|"
             r"settled|stay(?:ing)?|address|city|town|hometown)\b|住|搬|家[^，。,.\s]{0,3}在|定居|"
             r"落户|安家|城市|生活",
             (r"\bin\s+{v}",)),
    "job": (r"\b(?:work\w*|job|career|profession|occupation|employ\w*|hired|promoted|"
            r"retired|trained)\b|工作|职业|上班|担任|入职|转行|当了?|干",
            (r"\b(?:as|i'?m|i am|became|become|now)\s+(?:an?\s+|the\s+)?{v}",
             r"^\W*an?\s+{v}\b",  # "I'm Sofia, a pilot living in Madrid"
             r"\b(?:is|was|are)\s+(?:an?\s+|the\s+)?{v}\b",  # "my dad is a nurse"
             r"是(?:一名|一个|个|名)?{v}", r"做{v}")),
    "employer": (r"\b(?:work\w*|job|employ\w*|hired|joined|company|firm)\b|公司|单位|上班|"
                 r"就职|入职|加入|工作", ()),
    "diet": (r"\b(?:diet|vegetarian|vegan|pescatarian|keto|meat|gluten|lactose|halal|"
             r"kosher)\b|素|饮食|忌口|荤", ()),
    "name": (r"\b(?:name\w*|called|call me|go(?:es)? by)\b|叫|名字|姓名|名叫",
             (r"\b(?:i'?m|i am|this is|it'?s)\s+{v}", r"我(?:就)?是{v}")),
    # the person's own name, said of themself: "I have a dog named Bao" names the dog
    "own name": ("", (r"\b(?:my name is|my name's|i'?m|i am|call me|i go by|this is)\s+{v}",
                      r"我(?:的名字)?(?:就)?(?:叫|是|名叫)\s*{v}", r"我的名字是\s*{v}",
                      r"^\W*{v}\W*$")),
    "partner": (r"\b(?:married|marry|wife|husband|partner|spouse|girlfriend|boyfriend|"
                r"dating|engaged|fianc\w*)\b|结婚|妻子|丈夫|老婆|老公|对象|女朋友|男朋友|伴侣|订婚|"
                r"太太|爱人", ()),
    "age": (r"\b(?:age|aged|old|turned|turning|birthday)\b|岁|年龄|年纪", ()),
    "birthday": (r"\b(?:birthday|born|birth)\b|生日|出生", ()),
    "school": (r"\b(?:stud\w*|school|universit\w*|college|attend\w*|enrolled|major\w*|"
               r"class|degree)\b|学|读|就读|专业|上课", ()),
    "phone": (r"\b(?:phone|mobile|number|cell|call)\b|电话|手机|号码", ()),
    "email": (r"\b(?:e-?mail|mail|address)\b|邮箱|邮件", ()),
}


def _speaks_of(slot: str, relation: str, value: str, clause: str) -> bool:
    anywhere, around = CUES.get(slot, ("", ()))
    if anywhere and re.search(anywhere, clause, re.IGNORECASE):
        return True
    shown = re.escape(value.strip())
    if any(re.search(p.replace("{v}", shown), clause, re.IGNORECASE) for p in around):
        return True
    # the model's relation in the person's words ("based in" for "I'm based in Lyon")
    return any(len(w) > 2 and grounding.grounded(w, grounding.said_text([clause]))
               for w in grounding.meaningful(relation))


def _plain(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.casefold())




def _holds(clause: str, value: str) -> bool:
    if grounding.DENIED.search(clause):  # a clause that denies the value grounds nothing
        return False
    return grounding.grounded(value, grounding.said_text([clause])) or mentions(clause, value)


# "is not" with no verb: what a correction's denied half becomes ("我父亲住在苏州，不是多伦多"
# gave `父亲 -住-> 苏州` and `父亲 -不是-> 多伦多`, and the old town stayed active)
_NOT_IS = re.compile(r"^(?:is not|isn't|was not|wasn't|not|不是|并不是|而不是)$", re.IGNORECASE)


def _only_denied(triplet: dict[str, Any], triplets: list[Any], message: str) -> bool:
    """A fact that only says what its subject is not, of a value the message denies,
    beside the call's true fact of the same subject: the correction's other half."""
    if not _NOT_IS.match(triplet["relation"].strip()):
        return False
    value, subject = triplet["object"], triplet["subject"].strip().casefold()
    clauses = [c for c, _owner in whose.clause_owners(message)]
    if not any(grounding.grounded(value, grounding.said_text([c])) for c in clauses) or any(
            _holds(c, value) for c in clauses):
        return False
    return any(isinstance(t, dict) and t is not triplet and str(t.get("subject", "")).strip()
               .casefold() == subject and not _NOT_IS.match(str(t.get("relation", "")).strip())
               for t in triplets)


# What denies the word right after it (a few words or characters may come between: "not
# in Seoul", "不住在首尔"), and a relation that says a "no" itself ("dislikes", "不喜欢")
_DENIED_BEFORE = re.compile(
    r"(?:\b(?:not|never|no|nor|isn't|aren't|wasn't|weren't|doesn't|don't|didn't)\b"
    r"(?:\s+\S+){0,2}?\s+|(?:而|并)?不是|不在|不|没有|没|别)$", re.IGNORECASE)
_CLAUSE_END = re.compile(r"[.!?;:。！？；：\n,，、]")
_DENIAL_REACH = 60  # characters before a value where its denial may be: "not" and two words
_NEGATIVE_RELATION = re.compile(r"\b(?:not|never|no|dislike[sd]?|hate[sd]?|avoids?)\b|"
                                r"n't\b|不|没|讨厌|别", re.IGNORECASE)


def _said_only_denied(triplet: dict[str, Any], message: str) -> bool:
    """The fact's value is said in the message only as what is not so ("我哥哥住在武汉，
    不是首尔" gave `User -哥哥-> 首尔`; "I don't live in Seoul" would give `lives in
    Seoul`): a fact of it says the opposite of the message, whatever its relation. A
    relation that carries the "no" itself ("doesn't eat meat") says what was said."""
    value = str(triplet["object"]).strip()
    if len(value) < 2 or _NEGATIVE_RELATION.search(str(triplet["relation"])):
        return False
    shown = re.escape(value)
    edge = r"" if grounding.has_cjk(value) else r"\b"
    places = [m.start() for m in re.finditer(f"{edge}{shown}{edge}", message, re.IGNORECASE)]
    if not places:
        return False
    # each time it is said, the words of its clause just before it end with a denial
    return all(_DENIED_BEFORE.search(_CLAUSE_END.split(message[max(0, at - _DENIAL_REACH):at])[-1])
               for at in places)


def _about(subject: str, owner: whose.Owner, clause: str, relation: str = "",
           before: str = "") -> bool:
    """The clause speaks of `subject`: the person's own clause, the relative's, or one
    that names them (or goes on from one that did: "Anna likes tea and lives in Rome")."""
    if subject.strip().casefold() in grounding.PERSON:
        # the person's link to a relative is said where the relative is: "my husband Tom"
        linked = kin.kin_of_relation(relation)
        return owner.who is None or (linked is not None and kin.kind_of(owner.who) == linked)
    if owner.who is not None or grounding.grounded(subject, grounding.said_text([clause])):
        return True
    return bool(before) and not whose.speaks_of_self(clause) and grounding.grounded(
        subject, grounding.said_text([before]))


def grounds(triplet: dict[str, Any], message: str, person: frozenset[str] = frozenset()
            ) -> bool:
    """The message grounds this fact's slot, value and whose it is (see above); a fact
    in a relation that holds many values needs nothing. `person`: the names the person
    goes by (casefolded), whose facts are the person's own."""
    relation, value = str(triplet.get("relation", "")), str(triplet.get("object", ""))
    subject = str(triplet.get("subject", ""))
    if subject.strip().casefold() in person:
        subject = "User"
    slot = family(relation, value)
    if slot is None:
        return True
    if slot == "name" and subject.strip().casefold() in grounding.PERSON:
        slot = "own name"
    clauses = whose.clause_owners(message)
    for i, (clause, owner) in enumerate(clauses):
        before = clauses[i - 1][0] if i else ""
        if not (_holds(clause, value) and _about(subject, owner, clause, relation, before)):
            continue
        # "my dad doesn't live in Osaka, I meant Boston": the slot is said a clause before
        # …and "my husband, Guo Jing, …": a clause that is only the value goes with it
        apposed = _plain(clause) == _plain(value)
        said = [clause] + ([before] if before and (whose.goes_on(clause) or apposed) else [])
        if any(_speaks_of(slot, relation, value, c) for c in said):
            return True
    return False


def _grounds_said(triplet: dict[str, Any], message: str,
                  speakers: dict[str, str] | None, person: frozenset[str]) -> bool:
    """`grounds`, where a speaker's own lines ground their facts as the person's own."""
    said_by = (speakers or {}).get(str(triplet["subject"]).strip().casefold())
    if said_by is not None:
        return grounds({**triplet, "subject": "User"}, said_by)
    return grounds(triplet, message, person)


def _names_in(triplets: list[Any]) -> set[str]:
    """The person's names a call itself gives ("User -name is-> Anna")."""
    return {str(t["object"]).strip().casefold() for t in triplets
            if isinstance(t, dict) and str(t.get("subject", "")).strip().casefold()
            in grounding.PERSON and isinstance(t.get("object"), str)
            and family(str(t.get("relation", "")), t["object"]) == "name"}


def checked(arguments: str, message: str, strict: bool,
            speakers: dict[str, str] | None = None,
            person: frozenset[str] = frozenset()) -> tuple[str, str | None]:
    """A memory_commit's arguments with each one-value fact the message does not ground
    taken out (`strict`: a small local model, whose slots are guesses) or marked a guess
    (it is added beside the old value, which stays, for the person's Review); and why
    facts were taken out. `speakers` (a history's: name → their lines) ground each
    speaker's facts in their own words. Anything malformed is left as it is."""
    parsed = triplets_of(arguments)
    if parsed is None:
        return arguments, None
    args, triplets = parsed
    kept, refused, named, denials = [], [], set(), []
    person = frozenset(person | _names_in(triplets))
    for triplet in triplets:
        if not isinstance(triplet, dict) or not all(
                isinstance(triplet.get(k), str) for k in ("subject", "relation", "object")):
            kept.append(triplet)
        elif _only_denied(triplet, triplets, message) or _said_only_denied(triplet, message):
            denials.append(f"'{triplet['subject']} -{triplet['relation']}-> "
                           f"{triplet['object']}'")
        elif _grounds_said(triplet, message, speakers, person):
            kept.append(triplet)
        elif strict and (as_said := own_words.refiled(triplet, message, triplets)):
            kept.append(as_said)
        elif strict:
            refused.append(f"'{triplet['subject']} -{triplet['relation']}-> "
                           f"{triplet['object']}'")
            named.add(str(family(triplet["relation"], triplet["object"])))
        else:
            kept.append(_as_guess(triplet))
    why = "; ".join(
        ([f"{', '.join(refused)} not stored: the message does not say so of that one's "
          f"{' or '.join(sorted(named))}"] if refused else [])
        + ([f"{', '.join(denials)} not stored: the message says what is true instead"]
           if denials else [])) or None
    if kept == triplets:
        return arguments, None
    return with_triplets(args, kept), why


def _as_guess(triplet: dict[str, Any]) -> dict[str, Any]:
    given = triplet.get("confidence")
    sure = given if isinstance(given, (int, float)) and not isinstance(given, bool) else 1.0
    return {**triplet, "confidence": min(GUESS, sure)}
