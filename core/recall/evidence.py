"""The turns recall can show as evidence, and finding them by words, by meaning and as the
source of a fact.

What counts: the person's own messages in live conversations (the assistant's replies
there are its words, not evidence), both speakers of an imported conversation (LoCoMo's
two people, or what ChatGPT was told), never a message of a deleted conversation, of a
hidden branch, in the prompt already (the conversation's recent messages), nor of a turn
a forgotten fact came from or that asked to forget (a person who asked to forget something
should not meet it again in the words), nor of a turn a fact replaced since came from (its
words are out of date: "I live in Hangzhou, I'm a nurse" after the move to Shanghai; the
nurse is still a fact; an imported history keeps a turn whose fact a later turn of the
history replaced: each is the record of its day), nor a person's short question in a
live conversation (it says nothing true; asked again and again, the same question filled
the evidence), nor the same words twice.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Collection
from concurrent.futures import Future
from typing import Any

from core.store.conversations import with_speakers
from core.store.graph import GraphStore, Row
from core.store.search import fts_candidates, marks
from core.store.text import short_question

log = logging.getLogger(__name__)

TURN_CHARS = 400  # a long message is cut (its start says what it is about)
POOL = 40  # candidates fetched by words and by meaning before filtering
# Messages much less similar than the closest one are not offered by meaning: a question
# about nothing said should bring nothing.
MEANING_MARGIN = 0.05

_SHOWN = (
    "SELECT m.id, m.role, substr(m.content, 1, ?) AS content, m.created_at, m.turn_id,"
    " m.conversation_id, c.import_id FROM messages m JOIN conversations c ON c.id ="
    " m.conversation_id WHERE m.deleted_at IS NULL AND c.deleted_at IS NULL AND"
    " (m.role = 'user' OR (m.role = 'assistant' AND c.import_id IS NOT NULL)) AND"
    " length(trim(m.content)) > 1")


def usable(store: GraphStore) -> bool:
    """Whether the file keeps conversations recall can read (every file of version 16 or
    later; older ones recall facts only)."""
    return store.schema_version() >= 16


def by_words(store: GraphStore, question: str, speakers: set[str] = frozenset()) -> list[int]:
    """Message ids sharing the question's words, best first. The names of the speakers
    it names are left out: who spoke is not in a message's words, and a name the other
    speaker says in greeting ("Hey Caroline!", 129 of 419 turns of one conversation)
    would outrank what the named speaker said."""
    words = _without_speakers(question, speakers)
    for pool in WORD_POOLS:
        found = [rowid for rowid, _ in fts_candidates(store, "message_fts", words, pool)]
        kept = showable(store, found)
        if len(kept) >= POOL or len(found) < pool:
            break
    return kept[:POOL]


def by_words_in(store: GraphStore, question: str, speakers: set[str], start: float,
                end: float) -> list[int]:
    """The messages said in [start, end) that share the question's words, best first."""
    words = _without_speakers(question, speakers)
    found = [rowid for rowid, _ in fts_candidates(store, "message_fts", words, WORD_POOLS[-1])]
    if not found:
        return []
    said = {r["id"] for r in store.query(
        f"SELECT id FROM messages WHERE id IN ({marks(found)}) AND created_at >= ? AND"
        " created_at < ?", (*found, start, end))}
    return showable(store, [i for i in found if i in said])[:POOL]


SPAN_TURNS = 400  # the turns of a time asked about ranked by meaning among themselves


def by_meaning_in(store: GraphStore, question: str, start: float, end: float
                  ) -> list[tuple[int, float]]:
    """The showable messages said in [start, end), nearest to the question in meaning
    first, as (message id, similarity): "Where did Joanna travel in July 2022?" is "I went
    to Woodhaven" in a July turn, which shares no word with it and is far down the whole
    conversation's ranking."""
    among = getattr(getattr(store, "meaning", None), "similar_turns_among", None)
    if among is None:
        return []
    return among(question, showable(store, in_span(store, start, end, SPAN_TURNS)))[:POOL]


# The candidates drawn by words, wider each time too few of them may be shown: the same
# question asked often, its answers and deleted conversations match it best, and they
# filled a pool of 120 (a kept LoCoMo memory asked five times over: evidence recall 0.76
# -> 0.66)
WORD_POOLS = (POOL * 3, POOL * 12, POOL * 48)


def _without_speakers(question: str, speakers: set[str]) -> str:
    """The question's words without the speakers' names it says (see `by_words`)."""
    words = question
    for name in speakers:
        words = re.sub(rf"(?<!\w){re.escape(name)}(?:'s)?(?!\w)", " ", words,
                       flags=re.IGNORECASE)
    return words if words.strip(" ?？.!") else question


def speakers_named(store: GraphStore, question: str) -> set[str]:
    """The speakers of imported conversations the question names, by a whole name."""
    folded = question.casefold()
    named = set()
    for row in store.query("SELECT DISTINCT speakers FROM conversations WHERE speakers IS"
                           " NOT NULL AND deleted_at IS NULL LIMIT 200"):
        try:
            names = json.loads(row["speakers"])
        except ValueError:
            continue
        for name in names.values() if isinstance(names, dict) else ():
            if isinstance(name, str) and name.strip() and re.search(
                    rf"(?<!\w){re.escape(name.strip().casefold())}(?!\w)", folded):
                named.add(name.strip().casefold())
    return named


def by_meaning_soon(store: GraphStore, question: str) -> Future | None:
    """Message ids nearest in meaning, asked on the indexer's query thread (None when
    recall by meaning is off)."""
    meaning = getattr(store, "meaning", None)
    ask = getattr(meaning, "similar_turns_soon", None)
    # a pool three times what is kept, as by words: the nearest are often what may not
    # be shown (the same question asked before, a conversation deleted since)
    return ask(question, POOL * 3) if ask is not None else None


def meaning_result(store: GraphStore, asked: Future | None,
                   exclude: Collection[int] = ()) -> list[tuple[int, float]]:
    """The showable messages nearest in meaning, within MEANING_MARGIN of the closest of
    them, as (message id, similarity). The margin is taken after the filter: a question
    asked before is nearest to itself, and measured from its copies (not showable) the
    margin let nothing through (on a kept LoCoMo memory asked four times over, evidence
    recall fell 0.76 -> 0.66).
    `exclude`: the messages in front of the model already, which set no margin either."""
    if asked is None:
        return []
    try:
        found = asked.result()
    except Exception:  # recall by meaning is a help: without it recall uses words
        log.exception("recall of turns by meaning failed")
        return []
    kept = set(showable(store, [message for message, _ in found])) - set(exclude)
    found = [(message, similarity) for message, similarity in found if message in kept]
    if not found:
        return []
    closest = found[0][1]
    return [(message, similarity) for message, similarity in found[:POOL]
            if similarity >= closest - MEANING_MARGIN]


def of_facts(store: GraphStore, facts: list[Row]) -> dict[int, list[int]]:
    """fact id -> the ids of the messages of the turn it came from."""
    turns = {f["id"]: f["source_message"] for f in facts if f.get("source_message")}
    if not turns:
        return {}
    ids = list(set(turns.values()))
    by_turn: dict[str, list[int]] = {}
    for row in store.query(f"SELECT id, turn_id FROM messages WHERE turn_id IN ({marks(ids)})"
                           " ORDER BY id", ids):
        by_turn.setdefault(row["turn_id"], []).append(row["id"])
    return {fact: by_turn.get(turn, []) for fact, turn in turns.items()}


def replies(store: GraphStore, ids: list[int]) -> dict[int, int]:
    """message id -> the next message of its conversation: what answered it. A turn that
    matches a question is often itself a question ("How long have you been married?"),
    and the answer is the turn after it ("5 years already!")."""
    if not ids:
        return {}
    return {r["id"]: r["next"] for r in store.query(
        "SELECT m.id, (SELECT n.id FROM messages n WHERE n.conversation_id = m.conversation_id"
        " AND n.id > m.id AND n.deleted_at IS NULL ORDER BY n.id LIMIT 1) AS next FROM"
        f" messages m WHERE m.id IN ({marks(ids)})", ids) if r["next"] is not None}


def said_at(store: GraphStore, facts: list[Row]) -> dict[int, float]:
    """fact id -> when the turn it came from was said (an imported fact was written at
    the import, but said on the conversation's day)."""
    turns = {f["id"]: f["source_message"] for f in facts if f.get("source_message")}
    if not turns:
        return {}
    ids = list(set(turns.values()))
    when = {r["turn_id"]: r["at"] for r in store.query(
        f"SELECT turn_id, min(created_at) AS at FROM messages WHERE turn_id IN ({marks(ids)})"
        " GROUP BY turn_id", ids)}
    return {fact: when[turn] for fact, turn in turns.items() if turn in when}


def in_span(store: GraphStore, start: float | None, end: float | None, count: int) -> list[int]:
    """The newest messages said in a time range (for "what did we talk about last week",
    which shares no words with what was said)."""
    where, params = [], []
    if start is not None:
        where.append("created_at >= ?")
        params.append(start)
    if end is not None:
        where.append("created_at < ?")
        params.append(end)
    if not where:
        return []
    return [r["id"] for r in store.query(
        f"SELECT id FROM messages WHERE {' AND '.join(where)} AND deleted_at IS NULL"
        " ORDER BY created_at DESC LIMIT ?", (*params, count))]


def _showable_rows(store: GraphStore, ids: list[int]) -> dict[int, Row]:
    if not ids:
        return {}
    sql = _SHOWN + f" AND m.id IN ({marks(ids)})"
    params: list[Any] = [TURN_CHARS + 1, *ids]
    if store.schema_version() >= 16:
        sql += " AND m.branch_hidden IS NULL"
    return {r["id"]: r for r in store.query(sql, params)
            if r["import_id"] is not None or not short_question(r["content"])}


def showable(store: GraphStore, ids: list[int]) -> list[int]:
    """The ids among `ids` recall may show, in their order: a pool cut before this filled
    with the questions a person asked and conversations they deleted."""
    kept = _showable_rows(store, ids)
    return [i for i in ids if i in kept]


def rows(store: GraphStore, ids: list[int], exclude: Collection[int] = ()) -> dict[int, Row]:
    """The showable messages among `ids` (see the module's rules), each with its speaker;
    `exclude`: those in front of the model already (the conversation's recent messages)."""
    shown = set(exclude)
    found = _showable_rows(store, [i for i in ids if i not in shown])
    if not found:
        return {}
    said: set[str] = set()
    for message_id in sorted(found, key=lambda m: found[m]["created_at"]):
        words = " ".join(found[message_id]["content"].casefold().split())
        if words in said:
            del found[message_id]  # the same words once, where they were first said
        said.add(words)
    forgotten = _stale_turns(store, {r["turn_id"] for r in found.values() if r["turn_id"]})
    for message_id in [m for m, r in found.items() if r["turn_id"] in forgotten]:
        del found[message_id]
    by_conversation: dict[int, list[Row]] = {}
    for row in found.values():
        by_conversation.setdefault(row["conversation_id"], []).append(row)
        text = " ".join(row["content"].split())
        row["content"] = text if len(text) <= TURN_CHARS else text[:TURN_CHARS] + "…"
    for conversation, messages in by_conversation.items():
        with_speakers(store, conversation, messages)
    return found


FORGETTING_TOOLS = ("memory_purge", "memory_forget")


def _stale_turns(store: GraphStore, turns: set[str]) -> set[str]:
    """The turns a forgotten or replaced fact came from, and those that forgot something.
    A fact of an imported history replaced by what was said later in the history does not
    hide its turn: both turns are the dated record of their day, and the replacing is
    mostly the writer's own ("Nate lives in a living room", from a photo's caption, then a
    town) -- one kept LoCoMo memory hid the turns of "When did Nate adopt Max?" that way.
    A change made in a live conversation takes the old words with it."""
    if not turns:
        return set()
    ids = list(turns)
    stale = {r["source_message"] for r in store.query(
        "SELECT DISTINCT source_message FROM edges WHERE source_message IN"
        f" ({marks(ids)}) AND status = 'deleted'", ids)}
    replaced = store.query(
        "SELECT e.source_message AS turn, n.source_message AS by_turn FROM edges e LEFT JOIN"
        f" edges n ON n.id = e.superseded_by WHERE e.source_message IN ({marks(ids)}) AND"
        " e.status = 'superseded'", ids)
    history = _imported_turns(store, {t for r in replaced for t in (r["turn"], r["by_turn"])
                                      if t})
    stale |= {r["turn"] for r in replaced
              if not (r["turn"] in history and r["by_turn"] in history)}
    stale |= {r["turn_id"] for r in store.query(
        f"SELECT DISTINCT turn_id FROM change_log WHERE turn_id IN ({marks(ids)}) AND tool IN"
        f" ({marks(FORGETTING_TOOLS)})", [*ids, *FORGETTING_TOOLS])}
    return stale


def _imported_turns(store: GraphStore, turns: set[str]) -> set[str]:
    """The turns among `turns` that are of an imported conversation."""
    if not turns:
        return set()
    ids = list(turns)
    return {r["turn_id"] for r in store.query(
        "SELECT DISTINCT m.turn_id FROM messages m JOIN conversations c ON c.id ="
        f" m.conversation_id WHERE m.turn_id IN ({marks(ids)}) AND c.import_id IS NOT NULL",
        ids)}
