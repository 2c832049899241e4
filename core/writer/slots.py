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
that fails is still written, beside the old value and as a guess for the person's Review:
a guess replaces nothing.
"""

from __future__ import annotations

import json
import re
from typing import Any

from core.meaning.names import mentions
from core.tools.one_value import family
from core.writer import grounding, whose

GUESS = 0.6  # the confidence of a fact kept beside the old value: below one_value.SURE

# Words that speak of each slot anywhere in a clause, and (with {v}) words that speak of
# it only right before the value: "I'm Lin Wei" says a name, "I'm a nurse" a job.
_CUES: dict[str, tuple[str, tuple[str, ...]]] = {
    "home": (r"\b(?:live[sd]?|living|move[sd]?|moving|relocat\w*|based|home|resid\w*|"
             r"settled|stay(?:ing)?|address)\b|住|搬|家在|定居|落户|安家",
             (r"\bin\s+{v}",)),
    "job": (r"\b(?:work\w*|job|career|profession|occupation|employ\w*|hired|promoted|"
            r"retired|trained)\b|工作|职业|上班|担任|入职|转行|当了?|干",
            (r"\b(?:as|i'?m|i am|became|become|now)\s+(?:an?\s+|the\s+)?{v}",
             r"是(?:一名|一个|个|名)?{v}", r"做{v}")),
    "employer": (r"\b(?:work\w*|job|employ\w*|hired|joined|company|firm)\b|公司|单位|上班|"
                 r"就职|入职|加入|工作", ()),
    "diet": (r"\b(?:diet|vegetarian|vegan|pescatarian|keto|meat|gluten|lactose|halal|"
             r"kosher)\b|素|饮食|忌口|荤", ()),
    "name": (r"\b(?:name\w*|called|call me|go(?:es)? by)\b|叫|名字|姓名|名叫",
             (r"\b(?:i'?m|i am|this is|it'?s)\s+{v}", r"我(?:就)?是{v}")),
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
    anywhere, around = _CUES.get(slot, ("", ()))
    if anywhere and re.search(anywhere, clause, re.IGNORECASE):
        return True
    shown = re.escape(value.strip())
    if any(re.search(p.replace("{v}", shown), clause, re.IGNORECASE) for p in around):
        return True
    # the model's relation in the person's words ("based in" for "I'm based in Lyon")
    return any(len(w) > 2 and grounding.grounded(w, grounding.said_text([clause]))
               for w in grounding.meaningful(relation))


def _holds(clause: str, value: str) -> bool:
    return grounding.grounded(value, grounding.said_text([clause])) or mentions(clause, value)


def _about(subject: str, owner: whose.Owner, clause: str) -> bool:
    if subject.strip().casefold() in grounding.PERSON:
        return owner.who is None
    return owner.who is not None or grounding.grounded(subject, grounding.said_text([clause]))


def grounds(triplet: dict[str, Any], message: str) -> bool:
    """The message grounds this fact's slot, value and whose it is (see above); a fact
    in a relation that holds many values needs nothing."""
    relation, value = str(triplet.get("relation", "")), str(triplet.get("object", ""))
    subject = str(triplet.get("subject", ""))
    slot = family(relation, value)
    if slot is None:
        return True
    return any(_holds(clause, value) and _about(subject, owner, clause)
               and _speaks_of(slot, relation, value, clause)
               for clause, owner in whose.clause_owners(message))


def as_guesses(arguments: str, message: str) -> str:
    """A memory_commit's arguments with each one-value fact the message does not ground
    marked a guess (it is added beside the old value, which stays); anything malformed
    is left as it is for the validator to explain."""
    try:
        args = json.loads(arguments or "{}")
    except (ValueError, RecursionError):
        return arguments
    triplets = args.get("triplets") if isinstance(args, dict) else None
    if not isinstance(triplets, list):
        return arguments
    marked = [_as_guess(t) if isinstance(t, dict) and all(
        isinstance(t.get(k), str) for k in ("subject", "relation", "object"))
        and not grounds(t, message) else t for t in triplets]
    changed = marked != triplets
    return json.dumps({**args, "triplets": marked}, ensure_ascii=False) if changed \
        else arguments


def _as_guess(triplet: dict[str, Any]) -> dict[str, Any]:
    given = triplet.get("confidence")
    sure = given if isinstance(given, (int, float)) and not isinstance(given, bool) else 1.0
    return {**triplet, "confidence": min(GUESS, sure)}
