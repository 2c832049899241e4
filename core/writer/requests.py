"""What the person asks the assistant to do is not a fact about the person.

Asked "write a poem about the sea", a 1.5B model's memory step stored "User likes the
sea"; asked to help plan a trip, "User | likes | trip plan". A clause that asks the
assistant to make something (write, explain, translate, suggest, plan, tell, 写, 解释,
翻译, 推荐, 规划…), however politely it is put ("can you", "please", "I'd like you to",
"帮我", "请", "能不能"), is a request; a fact whose object the message holds only in
requests is not stored. A plan's steps still become tasks (they are not facts).
"""

from __future__ import annotations

import re

from core.writer import grounding, whose
from core.writer.calls import triplets_of, with_triplets

_POLITE_EN = (r"(?:(?:can|could|would|will) you (?:please )?|please |pls |"
              r"i(?:'d| would) like you to |i want you to |i need you to |"
              r"help me (?:to )?|let's |lets )*")
_MAKING_EN = (r"(?:write|draft|compose|explain|translate|tell me|suggest|recommend|"
              r"describe|summari[sz]e|list|give me|make me|create|generate|plan|"
              r"organi[sz]e|brainstorm|come up with|think of|name|find me|show me|teach me|"
              r"calculate|convert|check|proofread|rewrite|edit)")
_ASKS_EN = re.compile(rf"^\W*{_POLITE_EN}{_MAKING_EN}\b", re.IGNORECASE)
_ASKS_ZH = re.compile(
    r"^\W*(?:请你?|麻烦你?|帮我|帮忙|给我|你能不能|能不能|你能|能|可以|可不可以|你可以)*"
    r"(?:帮我)?(?:写|编|作|解释|讲|翻译|推荐|起(?:个|一个)?名|列|总结|介绍|规划|计划|安排|"
    r"告诉我|说说|想(?:个|一个|几个)|出(?:个|几个)|算|检查|改|润色|设计)")


# Asking for a made thing anywhere in a Chinese clause ("给一家小面包店起个名字吧"), where
# the person is not the one who writes it ("我写了一篇文章" is a fact)
_ASKS_ANYWHERE = re.compile(
    r"起(?:个|一个)?名字?|取(?:个|一个)?名字|(?<!我)(?<!我们)写(?:一|个|首|篇|封|段)|翻译成|"
    r"解释一下|讲(?:个|一个)|推荐(?:一|几|个)")


def is_request(clause: str) -> bool:
    """The clause asks the assistant to make or do something."""
    return bool(_ASKS_EN.search(clause) or _ASKS_ZH.search(clause)
                or _ASKS_ANYWHERE.search(clause))


def only_asked(value: str, message: str) -> bool:
    """`value` is in the message only where the person asks for something: a request's
    topic, not a fact about them."""
    holding = [clause for clause, _owner in whose.clause_owners(message)
               if grounding.grounded(value, grounding.said_text([clause]))]
    if not holding:
        sentences = [s for s in re.split(r"(?<=[.!?。！？])\s*", message) if s.strip()]
        holding = [s for s in sentences
                   if grounding.grounded(value, grounding.said_text([s]))]
    return bool(holding) and all(is_request(c) or _asks(_sentence_of(c, message))
                                 for c in holding)


def _asks(sentence: str) -> bool:
    """The sentence opens by asking for something (its later clauses are its parts)."""
    return bool(_ASKS_EN.search(sentence) or _ASKS_ZH.search(sentence))


def _sentence_of(clause: str, message: str) -> str:
    """The sentence a clause belongs to: "the sea?" of "Can you write a poem about the
    sea?" is asked as the whole sentence asks."""
    for sentence in re.split(r"(?<=[.!?。！？;；])\s*", message):
        if clause in sentence:
            return sentence
    return clause


def not_requests(triplets: list[dict[str, str]], message: str) -> list[dict[str, str]]:
    """The facts that are not a request's topic (see above)."""
    return [t for t in triplets if not only_asked(str(t.get("object", "")), message)]


def checked(arguments: str, message: str) -> tuple[str, str | None]:
    """A memory_commit's arguments without the facts that are a request's topic, and why
    they were left out; "" when none is left. Anything malformed is left as it is."""
    parsed = triplets_of(arguments)
    if parsed is None or not all(isinstance(t, dict) for t in parsed[1]):
        return arguments, None
    args, triplets = parsed
    kept = not_requests(triplets, message)
    if len(kept) == len(triplets):
        return arguments, None
    left_out = ", ".join(f"'{t.get('subject')} -{t.get('relation')}-> {t.get('object')}'"
                         for t in triplets if t not in kept)
    why = (f"{left_out} not stored: the user asked for something about it; a request is "
           "not a fact about the user")
    return with_triplets(args, kept), why
