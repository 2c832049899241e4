"""An answer about the person, said back to them as "you".

Asked "What instrument do I play?", the 1.5B model answered "I play the violin." (and
"I translate.", "我的宠物叫Mochi。") on every generated conversation, though the turn asks
it to speak to the person as "you": read by the person, the assistant claims their life
as its own. So the first sentence of an answer to a question the person asked about
themself, when it opens in the first person and states something (not "I don't know",
"I remember…", "我不知道"), is turned to the second person before it is shown: "You play
the violin.", "你的宠物叫Mochi。". Only that sentence: what follows is the model's own
voice again ("I hope you enjoy it!").
"""

from __future__ import annotations

import re

# How the first sentence may open in the first person: it is held until it is whole
_LEADS = re.compile(r"^\s*(?:I\b|I'|I’|My\b|我)", re.IGNORECASE)
# Where the first word shows it cannot be: released at once
_NOT_A_LEAD = re.compile(r"^\s*(?:[^\sI我M]|M[^y]|I[^\s'’]|My\S)", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|[。！？\n]")
HELD_MOST = 240  # characters: a sentence longer than this is shown as it is

# The assistant speaking of itself, not stating the person's fact: what it knows,
# remembers or thinks, what it cannot say, an apology, an offer
_OWN_VOICE = re.compile(
    r"\b(?:know|knew|remember\w*|recall\w*|think|believe|guess|sure|sorry|afraid|"
    r"hope|glad|happy|understand|help|noted|note|told|mentioned|said|say|tell|see|bet|"
    r"suppose|assume|wonder|suggest\w*|recommend\w*|not|no|"
    r"never|don't|do not|didn't|haven't|can't|cannot|couldn't|won't|assistant|AI)\b|n't\b|"
    r"知道|记得|记住|记下|不|没|觉得|认为|想|帮|抱歉|对不起|助手|高兴|希望|理解|建议|推荐",
    re.IGNORECASE)

_ENGLISH = (
    (re.compile(r"\bI am\b", re.IGNORECASE), "you are"),
    (re.compile(r"\bI was\b", re.IGNORECASE), "you were"),
    (re.compile(r"\bI(?=['’](?:m|ve|d|ll)\b)", re.IGNORECASE), "you"),
    (re.compile(r"(?<=\byou)(['’])m\b", re.IGNORECASE), r"\1re"),
    (re.compile(r"\bI\b"), "you"),
    (re.compile(r"\bmyself\b", re.IGNORECASE), "yourself"),
    (re.compile(r"\bmine\b", re.IGNORECASE), "yours"),
    (re.compile(r"\bmy\b", re.IGNORECASE), "your"),
    (re.compile(r"\bme\b", re.IGNORECASE), "you"),
)


def _to_you(sentence: str) -> str:
    """The sentence in the second person, its first letter kept a capital."""
    if "我" in sentence[:3]:
        return sentence.replace("我", "你")
    for said, meant in _ENGLISH:
        sentence = said.sub(meant, sentence)
    lead = len(sentence) - len(sentence.lstrip())
    return sentence[:lead] + sentence[lead:lead + 1].upper() + sentence[lead + 1:]


def turned(sentence: str) -> str:
    """The first sentence of an answer about the person as it should be shown: in the
    second person when it states their fact in the first; as it is otherwise."""
    if not _LEADS.match(sentence) or _OWN_VOICE.search(sentence):
        return sentence
    return _to_you(sentence)


class ToThePerson:
    """Fed the reply's pieces as they stream, gives back what may be shown: all of it,
    but for a first sentence that opens in the first person, held until it is whole and
    then given back turned (`turned`)."""

    def __init__(self) -> None:
        self.held = ""
        self.done = False

    def feed(self, piece: str) -> str:
        if self.done:
            return piece
        self.held += piece
        if _NOT_A_LEAD.match(self.held):
            return self._release(self.held)
        if not self.held.strip() or (not _LEADS.match(self.held) and len(self.held) < 3):
            return ""  # one character so far: "I", "M" or a space may go either way
        if not _LEADS.match(self.held):
            return self._release(self.held)
        end = _SENTENCE_END.search(self.held)
        if end is None and len(self.held) < HELD_MOST:
            return ""
        cut = end.end() if end else len(self.held)
        return self._release(turned(self.held[:cut]) + self.held[cut:])

    def flush(self) -> str:
        """The end of the reply: what is still held, turned if it is the sentence."""
        if self.done:
            return ""
        return self._release(turned(self.held))

    def _release(self, text: str) -> str:
        self.done, self.held = True, ""
        return text
