"""A reply that repeats the person's words instead of answering them.

A 1.5B model answered "Where do I work now?" with "Where do I work now?", and "The plumber
came on Tuesday." with that sentence; sometimes with an earlier message of the person's.
Whatever the model, such a reply answers nothing: the turn notices it (and asks once
more), and the eval counts it.
"""

from __future__ import annotations

import re
import unicodedata

from core.turn.asking import asks_if_remembered

_NOT_WORD = re.compile(r"[\W_]+", re.UNICODE)
LONGEST_ADDED = 12  # characters a reply may add around the person's words and still repeat


# "Your pet is called…?" for "my pet is called…?": the person's words with the pronouns
# turned round are still their words
_TURNED = (("your", "my"), ("yours", "mine"), ("you're", "i'm"), ("you", "i"))


def _plain(text: str, turned: bool = False) -> str:
    """Letters and digits only, folded: punctuation, spaces and case say nothing here;
    `turned`, the second person read as the first (a question asked back: "你的宠物叫什么
    名字？"). A statement's "you like tea" after "I like tea" is a confirmation."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    if turned:  # "你的妻子", "您的妻子" asked back for "我妻子": the person's own words
        folded = re.sub("我的", "我", folded.replace("您", "我").replace("你", "我"))
        for theirs, mine in _TURNED:
            folded = re.sub(rf"\b{theirs}\b", mine, folded)
    return _NOT_WORD.sub("", folded)


def _asks(message: str) -> bool:
    return bool(re.search(r"[?？]\s*$", message))


_HAN = re.compile(r"[\u3400-\u9fff]+")
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")  # a word in any script but Chinese, "i'm" one


def _pieces(text: str) -> set[str]:
    """Words, and pairs of characters in Chinese: what two texts are compared by."""
    plain = unicodedata.normalize("NFKC", text).casefold()
    words = set(_WORD.findall(_HAN.sub(" ", plain)))
    for run in _HAN.findall(plain):
        words |= {run[i:i + 2] for i in range(max(1, len(run) - 1))}
    return words


ASKED_BACK = 0.6  # a question back made of this much of the person's words answers nothing


def repeats(reply: str, messages: list[str]) -> bool:
    """`reply` is one of the person's `messages` said back: the same words, or those
    words with little around them ("Where do I live now? 🙂"), or most of one of them
    and nothing else; or their question asked back in their own words ("你还记得我的名字
    吗？" answered "记得你的名字吗？")."""
    if not _plain(reply):
        return False
    if re.search(r"[?？]\s*$", reply) and messages and _asks(messages[-1]):
        pieces = _pieces(reply)
        theirs = _pieces(messages[-1])
        if len(pieces) >= 3 and len(pieces & theirs) >= ASKED_BACK * len(pieces):
            return True
    for message in messages:
        theirs, said = _plain(message, _asks(message)), _plain(reply, _asks(message))
        if len(theirs) < 4:
            continue
        if theirs in said and len(said) - len(theirs) <= LONGEST_ADDED:
            return True
        if said in theirs and len(said) * 10 >= len(theirs) * 6:
            return True
    return False


def says_back(tail: str, messages: list[str]) -> bool:
    """The rest of a reply, after words of its own ("Hello, Luo Bin! …"), is one of the
    person's messages whole: a greeting does not make a parrot an answer. (A piece of
    theirs after its own words, "Got it: Mei lives in Beijing.", is a confirmation.)"""
    for message in messages:
        theirs, said = _plain(message, _asks(message)), _plain(tail, _asks(message))
        if len(theirs) >= 4 and theirs in said and len(said) - len(theirs) <= LONGEST_ADDED:
            return True
    return False


def could_become(partial: str, messages: list[str]) -> bool:
    """The reply streamed so far is still a piece of one of the person's messages, after
    at most a few characters of its own ("I moved to Xiamen" of "Actually, I moved to
    Xiamen last month.", "Yes, I live in Paris"): it may turn out to repeat it, so it is
    not shown yet. An answer leaves their words within a few words."""
    for message in messages:
        theirs, said = _plain(message, _asks(message)), _plain(partial, _asks(message))
        # a few words of its own may come first ("Yes, I live in Paris…")
        if len(theirs) >= 4 and said and any(
                said[i:] in theirs for i in range(min(len(said) - 1, LONGEST_ADDED) + 1)):
            return True
    return False


# A sentence of a reply ends at . ! ? … followed by a space (or the reply's end), at 。！？,
# or at a line break: "3.5" and "e.g.x" go on.
_OPEN_END = re.compile(r"[.!?…]+[\"'”’)\]]*\s+|[。！？]+[\"'”’」』)\]]*\s*|\n+")
_FINAL_END = re.compile(r"[.!?…]+[\"'”’)\]]*(?:\s+|$)|[。！？]+[\"'”’」』)\]]*\s*|\n+")
# The person's own voice in the product's two languages: a reply sentence in it, made of
# their words, is their statement said as the assistant's ("I'm Sofia, a pilot…")
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|us|our)\b|我")
ECHO = 0.85  # a sentence this much made of the person's words, in their voice, is theirs


def first_sentence(text: str, final: bool = False) -> tuple[str, bool]:
    """The first sentence of `text` with what ends it, and whether it is complete; `final`:
    nothing more will come, so the text's end ends a sentence."""
    found = (_FINAL_END if final else _OPEN_END).search(text)
    if found:
        return text[:found.end()], True
    return text, final


def ends_sentence(text: str) -> bool:
    """`text` ends where a sentence does (the reply starts one there)."""
    return not text.strip() or bool(re.search(r"(?:[.!?…。！？][\"'”’」』)\]]*|\n)\s*$", text))


def _theirs(messages: list[str]) -> set[str]:
    pieces: set[str] = set()
    for message in messages:
        pieces |= _pieces(message)
    return pieces


# A short lead before the rest of a sentence: "Sorry, ", "对不起，", "Oh: "
_LEAD = re.compile(r"^\s*(?:[^\W\d_]+[\s'-]?){1,3}?\s*[,，:：;；!！]\s*"
                   r"|^\s*[\u3400-\u9fff]{1,4}[,，:：;；!！]\s*")


def echoes(sentence: str, messages: list[str]) -> bool:
    """A whole sentence of a reply is the person's: one of their sentences said back word
    for word, or their words in their own voice ("My sister lives in Kunming, not Prague."
    after "Sorry: my sister lives in Kunming, not Prague."), also after a word or two of
    its own, in their voice ("对不起，我上个月搬到东京了。" after "其实我上个月搬到东京了。";
    "Sure, cook the dessert and clean the flat." answers what is left). A confirmation
    turns the pronoun ("Got it, your sister lives in Kunming.") and is not one."""
    lead = _LEAD.match(sentence)
    if lead and lead.end() < len(sentence) and _echoes(sentence[lead.end():], messages,
                                                       word_for_word=False):
        return True
    return _echoes(sentence, messages)


def _echoes(sentence: str, messages: list[str], word_for_word: bool = True) -> bool:
    pieces = _pieces(sentence)
    if len(pieces) < 3:
        return False
    if word_for_word and len(pieces) >= 5 and any(
            _word_for_word(pieces, message) for message in messages):
        return True
    folded = unicodedata.normalize("NFKC", sentence).casefold()
    return len(pieces) >= 4 and bool(_FIRST_PERSON.search(folded)) and \
        len(pieces & _theirs(messages)) >= ECHO * len(pieces)


def _word_for_word(pieces: set[str], message: str) -> bool:
    """A sentence made of `message`'s words is that message said back; of a question's,
    only when it carries most of the question: an answer may be a few of the words it
    asks with ("tea or coffee?"; "What two ingredients are in the dessert with
    blueberries, coconut milk and a crust?" answered "Blueberries, coconut milk, crust")."""
    theirs = _pieces(message)
    return pieces <= theirs and (not _asks(message) or len(pieces) >= ASKED_BACK * len(theirs))


# what may still be a lead ("Sorry", "对不起"): a few words and no mark after them yet
_MAY_LEAD = re.compile(r"^\s*(?:(?:[^\W\d_]+[\s'-]?){1,3}|[\u3400-\u9fff]{1,4})$")


def could_echo(opening: str, messages: list[str]) -> bool:
    """The sentence streamed so far may still become one of the person's (`echoes`): its
    words so far are theirs, after a lead of its own or not, or it is a lead so far; so
    it waits to be seen whole. An answer's own words show within a word or two."""
    whole = re.sub(r"(?:(?![\u3400-\u9fff])[\w'])+$", "", opening)  # a word still arriving
    if _MAY_LEAD.match(whole):
        return True
    lead = _LEAD.match(whole)
    if lead and _all_theirs(whole[lead.end():], messages):
        return True
    return _all_theirs(whole, messages)


def _all_theirs(text: str, messages: list[str]) -> bool:
    """The words so far may still make a sentence `echoes` calls theirs: as many more of
    their words as it has so far may follow ("My dad, Guo Jing, is an …" is 5 of 6, and
    "… an engineer in Shenzhen." 8 of 9: shown at "an", it reached the person)."""
    pieces = _pieces(text)
    if not pieces:
        return True
    theirs = _theirs(messages)
    more = min(len(theirs - pieces), len(pieces))
    return len(pieces & theirs) + more >= ECHO * (len(pieces) + more)


# What a reply to it may say and still name nothing remembered: yes, the pronouns, the
# verb asked with. A "no" or "not" answers (honestly or not), and is left to stand.
_ONLY_YES = frozenset(
    "yes yeah yep yup sure certainly absolutely definitely indeed totally of course i do "
    "did remember recall know it that this you your yours me my i'm i've you're oh ah ha "
    "well still all".split())
_ONLY_YES_HAN = frozenset("是的对嗯当然记得知道我你您了呀啊呢吧还有啦哦噢")


def _left_over(reply: str, question: str) -> tuple[set[str], set[str]]:
    """The reply's words and Chinese characters that are neither the question's nor a
    bare yes (`_ONLY_YES`)."""
    plain, asked = (unicodedata.normalize("NFKC", t).casefold() for t in (reply, question))
    words = set(_WORD.findall(_HAN.sub(" ", plain)))
    words -= set(_WORD.findall(_HAN.sub(" ", asked))) | _ONLY_YES
    han = set("".join(_HAN.findall(plain))) - set(asked) - _ONLY_YES_HAN
    return words, han


def answers_nothing(reply: str, question: str) -> bool:
    """A reply to "do you remember …?" that says yes and names nothing: "Yes.", "Yes, I
    remember your name.", "记得！". (The words the question already holds are no answer:
    "Do you remember where I live?" is not answered by "Yes, I know where you live.")"""
    if not asks_if_remembered(question) or not re.search(r"[^\W_]", reply):
        return False
    words, han = _left_over(reply, question)
    return not words and not han


def could_answer_nothing(partial: str, question: str) -> bool:
    """The reply so far is all yes and the question's words: it may end there, so it
    waits (a word still arriving is not judged). An answer names its fact within a few
    words."""
    if not asks_if_remembered(question):
        return False
    whole = re.sub(r"(?:(?![\u3400-\u9fff])[\w'])+$", "", partial)
    words, han = _left_over(whole, question)
    return not words and not han


def has_their_sentence(reply: str, messages: list[str]) -> bool:
    """Some sentence of a finished reply is the person's (`echoes`): what the eval counts
    as said back, as the turn leaves such sentences out."""
    rest = reply
    while rest.strip():
        sentence, _ = first_sentence(rest, final=True)
        if echoes(sentence, messages):
            return True
        rest = rest[len(sentence):] if sentence else ""
    return False
