"""Prompt templates, loaded as package data so they are found in the frozen build.

The system prompt never changes between turns, so a server's prompt cache (llama.cpp's
KV cache, DeepSeek's and OpenAI's prefix caching) can reuse it together with the tool
schemas and the earlier messages. What changes every turn, the date and the memory
snapshot, travels in the newest user message, after everything that can be reused.
"""

from __future__ import annotations

import time
from functools import cache
from importlib.resources import files

from core.store.text import has_cjk, short_question
from core.turn.asking import asks_what_remains
from core.writer.language import in_first_person, language_of


@cache
def _template(name: str) -> str:
    return files(__package__).joinpath(name).read_text(encoding="utf-8")


def system_prompt(compact: bool = False, tools: bool = True, own: str = "") -> str:
    """The instructions: byte-identical across turns (and shorter for local models);
    without `tools`, for a turn whose memory is written by the extraction step. `own`:
    the person's own instructions from the settings, last, so they weigh most. Unlike
    stored memories they are followed: the person wrote them, in the settings, for this."""
    if not tools:
        base = _template("system_chat.md").strip()
    else:
        base = _template("system_compact.md" if compact else "system.md").strip()
    return _with_own(base, own)


def answer_prompt(own: str = "") -> str:
    """The instructions for a question of fact (see `asks_for_fact`) in a turn whose
    memory the extraction step writes. Told it is a companion, the 1.5B model answered in
    the words of the turn it read ("about four months ago") or with advice of its own;
    told it answers questions from the snapshot, it gave the fact. LoCoMo conv-43, the
    same 48 prompts at temperature 0: token F1 0.287 with the companion's instructions,
    0.345 with these; a longer form that began "You are TrulyMEM" and listed what the
    snapshot holds gave 0.306-0.313. "Speaking to the user as you" here made whole
    sentences of the answers about someone else ("What is John trying out to improve his
    strength and flexibility?" -> "John is trying out yoga to improve his strength and
    flexibility.", where it had said "Yoga"); a question in the person's voice is told it
    at its end instead (`FACT_FIRST_MINE`). A server caches each instruction prefix
    (llama-server keeps several prompts); the first question after chatting reads the
    window's messages once more under these."""
    return _with_own(_template("system_answer.md").strip(), own)


def _with_own(base: str, own: str) -> str:
    if not own.strip():
        return base
    return f"{base}\nThe user's own instructions for your replies (from the settings):\n" \
           f"{own.strip()}"


# After a short question, what to do with it (see `turn_message`). "the fact alone ... not a
# sentence that repeats the question": "start with the fact ... not the question's words
# again" still left half the answers restating the question ("Caroline used to go horseback
# riding with her dad when she was a kid"), and "then anything warm" doubled their length.
# "whether you remember one": "你还记得我的名字吗？" was answered "记得。", a yes without the name
_FACT_ALONE = (": if it asks for a fact, or whether you remember one, reply with the fact"
               " alone, in a few words,{to_you} not a sentence that repeats the question.")
FACT_FIRST = _FACT_ALONE.format(to_you="")
# A question in the person's own voice ("Where do I live now?", "我的宠物叫什么名字？") came
# back in it ("I live in Shanghai.", "我的宠物叫Mochi。") with "you" in the system message
# alone; said here, it answered "You live in Shanghai.", "你的宠物叫Mochi。". Said after a
# question about someone else, it made whole sentences of the answers (LoCoMo conv-43, 48
# questions, with "you" here and in the instructions: token F1 0.338 -> 0.239), so it is
# said only where the person asks about themselves (`in_first_person`, in their language).
FACT_FIRST_MINE = _FACT_ALONE.format(to_you=' to the user as "you",')
# …and in Chinese the 1.5B model still wrote "我平时喜欢画画。", "我父亲住苏州。" for the
# person's hobby and father: the instruction is English, the reply is not. Told the reply
# language's own word it wrote "你平时喜欢画画。", "你父亲住苏州。".
YOU_IN = {"Chinese": "你", "Japanese": "あなた", "Korean": "당신", "French": "tu",
          "German": "du", "Spanish": "tú", "Italian": "tu", "Portuguese": "você",
          "Dutch": "jij", "Russian": "ты"}


def fact_first_mine(language: str | None) -> str:
    """`FACT_FIRST_MINE`, naming "you" in the reply's language when it is not English."""
    you = YOU_IN.get(language or "")
    return _FACT_ALONE.format(to_you=f' to the user as "you" ("{you}"),') if you \
        else FACT_FIRST_MINE
# After a question about what is left of a plan: "the fact alone" named one open task of
# two ("What's left to do for moving house?" -> "hire movers")
TASKS_LEFT = ": if it asks what is left to do, name every task not done yet."


def asks_for_fact(message: str) -> bool:
    """A short question of fact ("When did Tim start the violin?", "我会什么乐器？"), not
    one word ("Why?") and not what is left of a plan (that names every open task)."""
    return not asks_what_remains(message) and short_question(message) and (
        has_cjk(message) or len(message.split()) > 1)


def turn_message(snapshot: str, message: str, today: str | None = None) -> str:
    """The newest user message as the model sees it: the snapshot, the words, then what
    to do with them, in their language when it can be told (see `core.writer.language`).

    The words come last but one: introduced as "The user writes in English:" and left
    last, they read to a 1.5B model like text to continue, and it said them back (14 of
    16 replies in a generated conversation). Told after them to reply, it answers."""
    language = language_of(message)
    reply = f"Reply to this in {language}." if language else "Reply to this."
    if asks_what_remains(message):
        reply = reply.removesuffix(".") + TASKS_LEFT
    elif asks_for_fact(message):
        # the last words weigh most with a small model: "give the answer first" in the
        # system message alone left two sentences around a one-word answer
        reply = reply.removesuffix(".") + (
            fact_first_mine(language) if in_first_person(message) else FACT_FIRST)
    return _template("context.md").strip().replace(
        "{today}", today or time.strftime("%Y-%m-%d (%A)")).replace(
        "{snapshot}", snapshot).replace("{reply}", reply).replace("{message}", message)


def turn_message_again(snapshot: str, message: str, today: str | None = None) -> str:
    """The newest message rendered another way, for a model that repeated it back instead
    of answering: quoted, with what to do after it (see `core.turn.parrot`)."""
    language = language_of(message)
    return _template("context_again.md").strip().replace(
        "{today}", today or time.strftime("%Y-%m-%d (%A)")).replace(
        "{snapshot}", snapshot).replace("{message}", message).replace(
        "{language}", f" in {language}" if language else "")
