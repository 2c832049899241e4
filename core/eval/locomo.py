"""LoCoMo's scoring, and the two plain baselines the memory is compared with.

Scoring follows the benchmark's own evaluation (snap-research/LoCoMo,
`task_eval/evaluation.py`): answers are lower-cased, commas, punctuation and the words
a, an, the, and are removed, words are stemmed (Porter), and token F1 is taken; a
multi-hop answer (category 1) is a comma-separated list, each gold part scored against
the best predicted part and averaged; an open-domain gold answer (3) counts up to its
first ";"; an adversarial question (5) scores 1 when the answer says the conversation
does not tell ("not mentioned", "no information available").

The baselines use the same model and the same questions: the whole conversation in the
prompt (cut from its start to fit the window), and the ten turns SQLite's full-text
index ranks best for the question.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from dataclasses import dataclass
from functools import cache
from typing import Any

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop",
              5: "adversarial"}
_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)
NOT_SAID = ("no information available", "not mentioned")
ANSWER_RULES = (
    "Answer the question in a few words, from what you know about these people. Give "
    "dates as dates (\"7 May 2023\"), never \"last week\". If it is not known, say "
    "\"Not mentioned\".")


@cache
def _stemmer() -> Any:
    import snowballstemmer  # noqa: PLC0415  (the benchmark's extra)

    return snowballstemmer.stemmer("porter")


def normalize(text: str) -> str:
    text = str(text).replace(",", "").casefold().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def f1(prediction: str, gold: str) -> float:
    stem = _stemmer().stemWord
    predicted = [stem(w) for w in normalize(prediction).split()]
    wanted = [stem(w) for w in normalize(gold).split()]
    same = sum((Counter(predicted) & Counter(wanted)).values())
    if not same:
        return 0.0
    precision, recall = same / len(predicted), same / len(wanted)
    return 2 * precision * recall / (precision + recall)


def words_shown(shown: str, gold: str, question: str) -> float | None:
    """The share of the gold answer's words (stemmed) in what a method put in front of the
    model, less those the question says itself (None when that leaves none): evidence
    recall counts whole turns, so a turn cut short would count though its answer were cut
    away; this counts the answer's own words."""
    stem = _stemmer().stemWord
    wanted = {stem(w) for w in normalize(gold).split()} - {
        stem(w) for w in normalize(question).split()}
    if not wanted:
        return None
    there = {stem(w) for w in normalize(shown).split()}
    return len(wanted & there) / len(wanted)


def score(prediction: str, question: dict[str, Any]) -> float:
    """One answer's score, by the question's category."""
    category = question["category"]
    if category == 5:
        return float(any(words in prediction.casefold() for words in NOT_SAID))
    gold = str(question.get("answer", ""))
    if category == 3:
        gold = gold.split(";", maxsplit=1)[0].strip()
    if category == 1:
        parts = [p for p in prediction.split(",") if p.strip()] or [prediction]
        golds = [g for g in gold.split(",") if g.strip()] or [gold]
        return sum(max(f1(p, g) for p in parts) for g in golds) / len(golds)
    return f1(prediction, gold)


@dataclass
class Turn:
    """One turn of a LoCoMo conversation, as a baseline reads it."""

    dia_id: str
    speaker: str
    text: str
    date: str  # the session's date, as the file gives it


def turns(sample: dict[str, Any]) -> list[Turn]:
    """Every turn of a sample in order, with its session's date."""
    conversation = sample["conversation"]
    numbers = sorted(int(k.split("_")[1]) for k in conversation
                     if re.fullmatch(r"session_\d+", k))
    found = []
    for n in numbers:
        date = conversation.get(f"session_{n}_date_time", "")
        for turn in conversation[f"session_{n}"]:
            text = turn.get("text", "")
            if turn.get("blip_caption"):
                text += f" [shares a photo: {turn['blip_caption']}]"
            found.append(Turn(turn.get("dia_id", ""), turn.get("speaker", ""), text, date))
    return found


def transcript(chosen: list[Turn]) -> str:
    """Turns as lines, with a date line where the session changes."""
    lines, date = [], None
    for turn in chosen:
        if turn.date != date:
            date = turn.date
            lines.append(f"[{date}]")
        lines.append(f"{turn.speaker}: {turn.text}")
    return "\n".join(lines)


def full_context(all_turns: list[Turn], budget_tokens: int, count: Any) -> list[Turn]:
    """The newest turns that fit `budget_tokens` (the start is cut), in order."""
    kept, used = [], 0
    for turn in reversed(all_turns):
        cost = count(f"{turn.speaker}: {turn.text}\n")
        if used + cost > budget_tokens:
            break
        kept.append(turn)
        used += cost
    return kept[::-1]


def request(context: str, question: str, what: str) -> list[dict[str, str]]:
    """A baseline's request: the answer instruction (which the memory gets as its
    persona), the turns it has, then the question."""
    return [{"role": "system", "content": f"You answer questions about a long conversation "
                                          f"between two people. {ANSWER_RULES}"},
            {"role": "user", "content": f"{what}:\n{context}\n\nQuestion: {question}"}]


# The judges. LENIENT is the prompt published memory systems score with (Mem0's, after
# LoCoMo's own): generous about form, an answer on the right topic and time counts.
# STRICT counts an answer only when it states what the gold answer states.
JUDGES = {
    "lenient": (
        "Your task is to label an answer to a question as 'CORRECT' or 'WRONG'. You will be "
        "given the following data: (1) a question (posed by one user to another user), "
        "(2) a 'gold' (ground truth) answer, (3) a generated answer which you will score as "
        "CORRECT/WRONG. The point of the question is to ask about something one user should "
        "know about the other user based on their prior conversations. The gold answer will "
        "usually be a concise and short answer that includes the referenced topic. The "
        "generated answer might be much longer, but you should be generous with your "
        "grading - as long as it touches on the same topic as the gold answer, it should "
        "be counted as CORRECT. For time related questions, the gold answer will be a "
        "specific date, month, year, etc. The generated answer might be much longer or use "
        "relative time references (like 'last Tuesday' or 'next month'), but you should be "
        "generous with your grading - as long as it refers to the same date or time period "
        "as the gold answer, it should be counted as CORRECT. Even if the format differs "
        "(e.g., 'May 7th' vs '7 May'), consider it CORRECT if it's the same date."),
    "strict": (
        "Label an answer to a question about a conversation as 'CORRECT' or 'WRONG' against "
        "a gold answer. It is CORRECT only if it states every fact the gold answer states "
        "(every item of a list, the same date, period or amount; a different format of the "
        "same date is fine) and says nothing that contradicts it. A vaguer answer, part of "
        "a list, a relative time that is not resolved to the gold date, or 'not mentioned' "
        "when the gold answer gives something is WRONG."),
}


def judge_request(kind: str, question: str, gold: str, answer: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": JUDGES[kind]},
            {"role": "user", "content": f"Question: {question}\nGold answer: {gold}\n"
                                        f"Generated answer: {answer}\n\nAnswer with one word,"
                                        " CORRECT or WRONG."}]


_LABEL = re.compile(r"\b(CORRECT|INCORRECT|WRONG)\b")


def judged(text: str) -> float | None:
    """1.0 for CORRECT, 0.0 for WRONG, None when the judge said neither: its first label
    counts."""
    found = _LABEL.search(text.upper())
    return None if found is None else float(found.group(1) == "CORRECT")
