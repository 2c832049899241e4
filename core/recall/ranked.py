"""One recall over facts and the turns they came from, for every reader of the memory.

The facts are the index, the conversation is the evidence. For a question, recall ranks:
  - the facts that match it by words and by meaning (`core.store.search.search_edges`),
  - every active fact about someone it names ("what pets does Melanie have" gathers each
    of Melanie's facts, ranked by meaning, so a list is whole),
  - the facts one step from the best few (a multi-hop question names one thing and asks
    about another), once,
  - the turns the matching facts came from,
  - the turns that share its words, and those nearest to it in meaning,
  - the turns said in the time it names, when it names one (`core.recall.timespan`), and
    those of them that share its words or are nearest to it in meaning,
and fuses the rankings by reciprocal rank (each list adds weight / (K + rank)), preferring
what falls in the time asked about; when a turn of that time matches the question, the
turns of other times are left out. What is shown is cut to a token budget: the facts in
rank order, the turns in the order they were said under the day they were said (written
once a day), each with who said it. The live turn's snapshot, `memory_recall` (and so
the MCP server) and the Memory tab's search all ask here.
"""

from __future__ import annotations

import re
import time
from collections import defaultdict
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import date, datetime

from core.recall import evidence
from core.recall.lines import fact_text, turn_parts
from core.recall.timespan import Span, span_of
from core.store.graph import GraphStore, Row
from core.store.search import (
    edges_around,
    marks,
    named_subjects,
    search_edges,
)

RRF_K = 10
FACTS_WEIGHT = 1.0
GATHERED_WEIGHT = 1.0
FOLLOWED_WEIGHT = 0.4
SOURCE_WEIGHT = 0.3
TURN_WORDS_WEIGHT = 2.0
TURN_MEANING_WEIGHT = 1.0
IN_SPAN_WEIGHT = 0.5
MATCHED = 10  # the best turns by words said then and by meaning that make a time matter
IN_SPAN_BOOST = 1.5  # what falls in the time asked about counts this much more
SPEAKER_BOOST = 2.0  # and what the speaker the question names said
REPLY_SHARE = 0.6  # the turn after a matching turn (its answer) gets this share of its score
REPLIES_OF = 20  # the best turns whose replies are looked at
FACT_POOL = 30
GATHERED_MOST = 8  # a named subject's facts fused in, the nearest in meaning first
GATHER_MARGIN = 0.05
FOLLOWED_FROM = 3  # the best facts whose other end is followed
FOLLOWED_EACH = 3
# The evidence a live turn is shown, in estimated tokens (the estimate errs high). A
# local 1.5B model on 2 cores reads about 60 tokens a second: 700 tokens are 12 s before
# the first word, so the budget is what a question may cost, not what would help most.
# Measured on a kept LoCoMo memory (conv-26, 150 questions; 48 asked of the 1.5B model):
# 600 gave evidence recall 0.776 and a median answer of 10.9 s, 520 gives 0.764 and 9.6 s.
TURN_BUDGET = 520
# An item scoring under this share of the best is not shown even when the budget has
# room: one weak match far down a single ranking. On the same memory evidence recall
# stayed 0.776 while the median prompt fell 919 -> 804 tokens; at 0.3 it fell to 0.756.
SCORE_FLOOR = 0.2
_PIECES = re.compile(r"[\u3400-\u9fff\u3040-\u30ff]|\w+|[^\w\s]")


def estimate_tokens(text: str) -> int:
    """A token per word, punctuation mark or CJK character: above what the models'
    tokenizers count, so a budget kept on the estimate is kept for real."""
    return len(_PIECES.findall(text))


@dataclass
class Recalled:
    """What recall found for a question: facts best first, turns as they were said."""

    facts: list[Row] = field(default_factory=list)
    turns: list[Row] = field(default_factory=list)
    span: Span | None = None
    tokens: int = 0
    considered: int = 0  # facts and turns ranked before the budget cut


@dataclass
class _Ranking:
    """The fused scores ("e12" a fact, "m34" a message) and the rows they rank."""

    score: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    facts: dict[int, Row] = field(default_factory=dict)
    turns: dict[int, Row] = field(default_factory=dict)

    def add(self, ranked: list[int], weight: float, kind: str) -> None:
        """One ranking's share: weight / (K + rank)."""
        for rank, item in enumerate(ranked):
            self.score[f"{kind}{item}"] += weight / (RRF_K + rank + 1)

    def add_facts(self, rows: list[Row], weight: float, skipped: set[int]) -> None:
        rows = [f for f in rows if f["id"] not in skipped]
        for fact in rows:
            self.facts.setdefault(fact["id"], fact)
        self.add([f["id"] for f in rows], weight, "e")

    def best_facts(self) -> list[int]:
        return sorted(self.facts, key=lambda i: -self.score[f"e{i}"])

    def boost(self, key: str, factor: float) -> None:
        self.score[key] *= factor


def recall(store: GraphStore, question: str, *, budget: int = TURN_BUDGET,
           categories: tuple[str, ...] | None = ("general",),
           exclude_messages: Collection[int] = (), skip_facts: set[int] | None = None,
           since: float | None = None, fact_line: Callable[[Row], str] | None = None,
           follow: bool = True) -> Recalled:
    """Facts and turns for `question`, ranked and cut to `budget` estimated tokens.
    `exclude_messages`: turns in front of the model already. `skip_facts`: facts in
    front of it already (the profile). `fact_line`: how a fact is written where it is
    shown (its cost). `follow`: add the facts one step from the best (a caller that walks
    the graph itself says no)."""
    span = _dated(store, span_of(question, datetime.fromtimestamp(store.clock()).date()))
    with_turns = evidence.usable(store)
    turns_by_meaning = evidence.by_meaning_soon(store, question) if with_turns else None
    ranking = _Ranking()
    skipped = skip_facts or set()
    ranking.add_facts(search_edges(store, question, categories=categories, since=since,
                                   limit=FACT_POOL), FACTS_WEIGHT, skipped)
    ranking.add_facts(_gathered(store, question, categories, since), GATHERED_WEIGHT,
                      skipped)
    if follow:
        best = [ranking.facts[i] for i in ranking.best_facts()[:FOLLOWED_FROM]]
        ranking.add_facts(_followed(store, best, categories, since), FOLLOWED_WEIGHT,
                          skipped)
    if with_turns:
        _rank_turns(store, question, ranking, span,
                    evidence.meaning_result(store, turns_by_meaning, exclude_messages),
                    exclude_messages)
    if span is not None and (span.start or span.end):
        said_at = evidence.said_at(store, list(ranking.facts.values()))
        for fact_id, fact in ranking.facts.items():
            if span.holds(said_at.get(fact_id) or _fact_time(fact)):
                ranking.boost(f"e{fact_id}", IN_SPAN_BOOST)
        for message_id, turn in ranking.turns.items():
            if span.holds(turn["created_at"]):
                ranking.boost(f"m{message_id}", IN_SPAN_BOOST)
    return _within(ranking, span, budget=budget, fact_line=fact_line or fact_text)


def _rank_turns(store: GraphStore, question: str, ranking: _Ranking,  # noqa: PLR0917
                span: Span | None, nearest: list[tuple[int, float]],
                exclude: Collection[int]) -> None:
    """The turns' rankings: the facts' sources, by words, by meaning (`nearest`: (id,
    similarity)), in the time asked about; then what the speaker the question names said
    counts more."""
    by_meaning = [message for message, _ in nearest]
    ranked_facts = ranking.best_facts()
    sources = evidence.of_facts(store, [ranking.facts[i] for i in ranked_facts])
    for rank, fact in enumerate(ranked_facts):
        for message in sources.get(fact, []):
            ranking.score[f"m{message}"] += SOURCE_WEIGHT / (RRF_K + rank + 1)
    speakers = evidence.speakers_named(store, question)
    ranking.add(evidence.by_words(store, question, speakers), TURN_WORDS_WEIGHT, "m")
    ranking.add(by_meaning, TURN_MEANING_WEIGHT, "m")
    if span is not None and (span.start or span.end):
        said_then = evidence.in_span(store, _seconds(span.start), _seconds(span.end), 60)
        ranking.add(evidence.showable(store, said_then)[:20], IN_SPAN_WEIGHT, "m")
    matching = set(by_meaning[:MATCHED])  # the turns that make the time asked about matter
    if span is not None and span.start and span.end:
        # the turns of the time asked about that share its words, however far down the
        # whole conversation's ranking they fall
        said_in = evidence.by_words_in(store, question, speakers, _seconds(span.start),
                                       _seconds(span.end))
        ranking.add(said_in, TURN_WORDS_WEIGHT, "m")
        matching |= set(said_in[:MATCHED])
        near_then = evidence.by_meaning_in(store, question, _seconds(span.start),
                                           _seconds(span.end))
        ranking.add([message for message, _ in near_then], TURN_MEANING_WEIGHT, "m")
        # one of them as near as the nearest of the whole conversation matches it too
        matching |= {message for message, similarity in near_then[:MATCHED]
                     if nearest and similarity >= nearest[0][1] - evidence.MEANING_MARGIN}
    matched = sorted((k for k in ranking.score if k.startswith("m")),
                     key=lambda k: -ranking.score[k])[:REPLIES_OF]
    for message, reply in evidence.replies(store, [int(k[1:]) for k in matched]).items():
        ranking.score[f"m{reply}"] += REPLY_SHARE * ranking.score[f"m{message}"]
    wanted = [int(k[1:]) for k in ranking.score if k.startswith("m")]
    ranking.turns = evidence.rows(store, wanted, exclude)
    if span is not None and span.start and span.end and not span.yearless:
        # (a month named without its year is a guess: another year's may be the one meant)
        _only_said_in(ranking, span, matching)
    for message_id, turn in ranking.turns.items():
        if str(turn.get("speaker", "")).casefold() in speakers:
            ranking.boost(f"m{message_id}", SPEAKER_BOOST)


def _only_said_in(ranking: _Ranking, span: Span, matched: set[int]) -> None:
    """When a turn of the time asked about matches the question (`matched`: the nearest
    by words said then, and by meaning), the turns said at other times are not shown:
    they answered with another day's answer ("What movie did Nate watch on 6 October
    2022?": "Inception", the movie of a 9 October turn beside the 6 October one)."""
    inside = {m for m, turn in ranking.turns.items() if span.holds(turn["created_at"])}
    if inside & matched:
        for message_id in set(ranking.turns) - inside:
            del ranking.turns[message_id]


def _within(ranking: _Ranking, span: Span | None, *, budget: int,
            fact_line: Callable[[Row], str]) -> Recalled:
    """The best items that fit the budget and score at least SCORE_FLOOR of the best:
    facts in rank order, turns as said."""
    found = Recalled(span=span)
    chosen_turns: list[Row] = []
    days: set[str] = set()  # turns are shown under their day, written once
    ranked = sorted(ranking.score, key=lambda k: -ranking.score[k])
    floor = SCORE_FLOOR * ranking.score[ranked[0]] if ranked else 0.0
    for key in ranked:
        if ranking.score[key] < floor:
            break
        kind, item = key[0], int(key[1:])
        row = ranking.facts.get(item) if kind == "e" else ranking.turns.get(item)
        if row is None:
            continue
        found.considered += 1
        day = ""
        if kind == "e":
            cost = estimate_tokens(fact_line(row))
        else:
            day, said = turn_parts(row)
            cost = estimate_tokens(f"- {said}") + (0 if day in days else
                                                   estimate_tokens(f"{day}:"))
        if found.tokens + cost > budget:
            continue  # a shorter item further down may still fit
        found.tokens += cost
        if kind == "e":
            found.facts.append(row)
        else:
            days.add(day)
            chosen_turns.append(row)
    found.turns = sorted(chosen_turns, key=lambda r: (r["created_at"], r["id"]))
    return found


def _gathered(store: GraphStore, question: str, categories: tuple[str, ...] | None,
              since: float | None) -> list[Row]:
    """Every active fact about the subjects the question names, nearest in meaning first
    (words when meaning is off), at most GATHERED_MOST of each."""
    found: list[Row] = []
    meaning = getattr(store, "meaning", None)
    among = getattr(meaning, "similar_among", None)
    for node in named_subjects(store, question):
        around = edges_around(store, node["id"], categories=list(categories or ()) or None,
                              since=since, limit=200)
        if not around:
            continue
        by_id = {e["id"]: e for e in around}
        near = among(question, list(by_id)) if among is not None else []
        if near:
            closest = near[0][1]
            found += [by_id[i] for i, s in near[:GATHERED_MOST] if s >= closest - GATHER_MARGIN]
        else:
            found += around[:GATHERED_MOST]
    return found


def _followed(store: GraphStore, best: list[Row], categories: tuple[str, ...] | None,
              since: float | None) -> list[Row]:
    """The facts around the things the best facts name (not the person): one hop."""
    found: list[Row] = []
    seen = {e["id"] for e in best}
    for fact in best:
        for node, name in ((fact["target_id"], fact["target_name"]),
                           (fact["source_id"], fact["source_name"])):
            if name == "User":  # the person's every fact is not one hop from anything
                continue
            for edge in edges_around(store, node, categories=list(categories or ()) or None,
                                     since=since, limit=FOLLOWED_EACH + 2):
                if edge["id"] not in seen and edge["source_name"] != "User":
                    seen.add(edge["id"])
                    found.append(edge)
    return found[:FOLLOWED_FROM * FOLLOWED_EACH]


def _dated(store: GraphStore, span: Span | None) -> Span | None:
    """A span relative to an event ("before she moved") given the event's date: the
    first turn or fact that speaks of it; a month or season named without a year, the
    latest one anything was said in (see `_said_in`)."""
    if span is not None and span.yearless:
        return _said_in(store, span)
    if span is None or not span.anchor:
        return span
    facts = search_edges(store, span.anchor, limit=1)
    moment = _fact_time(facts[0]) if facts else None
    if moment is None and evidence.usable(store):
        ids = evidence.by_words(store, span.anchor)[:1]
        row = store.query_one(f"SELECT created_at FROM messages WHERE id IN ({marks(ids)})",
                              ids) if ids else None
        moment = row["created_at"] if row else None
    if moment is None:
        return None
    day = datetime.fromtimestamp(moment).date()
    return Span(None, day, span.words) if span.before else Span(day, None, span.words)


YEARS_BACK = 30


def _said_in(store: GraphStore, span: Span) -> Span:
    """"In August" asked in December: this August if anything was said in it, else the
    latest August that has talk (an imported history of 2023 asked about in 2026), else
    this August still."""
    first = store.query_one("SELECT min(created_at) AS t FROM messages WHERE deleted_at"
                            " IS NULL")
    if not first or first["t"] is None:
        return span
    earliest = datetime.fromtimestamp(first["t"]).date()
    for years in range(YEARS_BACK + 1):
        earlier = span.years_back(years)
        if earlier.end is not None and earlier.end <= earliest:
            break
        if evidence.in_span(store, _seconds(earlier.start), _seconds(earlier.end), 1):
            return earlier
    return span


def _fact_time(fact: Row) -> float:
    """When a fact holds from: its valid_from, else when it was written."""
    return fact.get("valid_from") or fact["created_at"]


def _seconds(day: date | None) -> float | None:
    return None if day is None else time.mktime(day.timetuple())
