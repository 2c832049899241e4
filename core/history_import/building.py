"""Build the memory from kept past conversations, a piece at a time, resumable.

Conversations are remembered in the order they happened, each in pieces of a few
exchanges (`Piece`). A piece is sent with its date ("yesterday" in a conversation of
8 May 2023 is 7 May 2023) through the memory writer a live turn uses: a model that calls
tools gets the memory tools; a small local model is asked for one JSON object under a
schema, as the extraction step asks (see `core.writer.extract`). Either way every fact
goes through the live turn's own door (`Turn.run_tool`): grounding (both speakers' words
count as said), whose fact it is, the per-turn limits and the hour's budget, and the
executor, with the store's clock at the conversation's date, so a fact said then is
valid from then and a later change supersedes it with those times. Each fact is written
under the turn (exchange) of the message it came from: the browser's "where it came
from" opens that conversation at that message, and "Undo import" takes back every change
made under the import's turns, as one change.

How far each conversation was remembered is kept (`conversations.remembered_to`): a build
stopped by the person, a quit or a crash resumes at the next piece.
"""

from __future__ import annotations

import json
import logging
import re
import time
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any

import openai

from core import when
from core.config import Config
from core.endpoint import profiles
from core.errors import ErrorCode
from core.events import Event
from core.i18n import N_
from core.redaction import scrub, sent_key
from core.store import GraphStore, StoreError
from core.store.graph import Row
from core.tools import openai_tools
from core.tools.base import PERSON_NODE
from core.tools.executor import ToolExecutor
from core.tools.limits import ToolLimiter
from core.turn.llm import ChatSession, TurnCancelled, TurnOptions
from core.turn.run import Progress, Turn
from core.writer import grounding
from core.writer.language import language_of

log = logging.getLogger(__name__)

PIECE_CHARS = 3_000  # of one piece sent: a few exchanges, well inside a small model's window
MESSAGE_CHARS = 1_200  # of one message: a long reply is cut, the person's words matter most
FACTS_PER_PIECE = 8
RELATION_WORDS = 5  # past this a relation is a sentence ("started a journey to…")
TOKEN_CHARS = 3.5  # characters per token, for the estimate before anything is sent
OVERHEAD_TOKENS = 420  # the instructions and the answer, per piece
MEMORY_TOOLS = ("memory_commit", "memory_purge", "memory_search")


def _text_schema() -> dict[str, Any]:
    # Each fact is four strings, [subject, relation, object, when]: named fields cost the
    # 1.5B model twice the tokens to write, and writing is most of a piece's time.
    fact = {"type": "array", "items": {"type": "string"}, "minItems": 4, "maxItems": 4}
    return {"type": "object", "additionalProperties": False, "required": ["facts"],
            "properties": {"facts": {"type": "array", "items": fact,
                                     "maxItems": FACTS_PER_PIECE}}}


def response_format() -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": "remembered", "strict": True,
                                                   "schema": _text_schema()}}


class PieceNotSent(Exception):
    """The piece was not remembered and stays to remember: `error` says why the endpoint
    failed, or is None when a stop (meant for a chat turn) cut the request."""

    def __init__(self, error: str | None) -> None:
        super().__init__(error or "stopped")
        self.error = error


@dataclass
class Piece:
    """A few consecutive messages of one conversation, sent to be remembered together."""

    conversation_id: int
    when: float  # the time of its first message
    names: dict[str, str]  # role -> who speaks
    messages: list[Row] = field(default_factory=list)
    chars: int = 0

    @property
    def last_id(self) -> int:
        return self.messages[-1]["id"]

    def lines(self) -> list[str]:
        return [f"{self.names[m['role']]}: {_cut(m['content'])}" for m in self.messages]


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MESSAGE_CHARS else text[:MESSAGE_CHARS] + " …"


def day_words(when: float, weekday: bool = False) -> str:
    """"8 May 2023"; with the weekday ("Monday, 8 May 2023") it helps a model count back
    to "last Friday"."""
    moment = time.localtime(when)
    return time.strftime("%A, " if weekday else "", moment) + f"{moment.tm_mday} " + \
        time.strftime("%B %Y", moment)


def speakers(conversation: Row) -> dict[str, str]:
    """Who speaks: the names the export gave (LoCoMo), else the person and the assistant."""
    names = {"user": "User", "assistant": "Assistant"}
    try:
        given = json.loads(conversation["speakers"]) if conversation["speakers"] else {}
    except ValueError:
        given = {}
    for role in names:
        if isinstance(given.get(role), str) and given[role].strip():
            names[role] = given[role].strip()
    return names


def pending(store: GraphStore, import_id: int | None = None) -> list[Row]:
    """The imported conversations not remembered to their end, oldest first."""
    only = " AND c.import_id = ?" if import_id is not None else ""
    return store.query(
        "SELECT c.id, c.title, c.created_at, c.speakers, c.remembered_to, c.import_id"
        " FROM conversations c WHERE c.import_id IS NOT NULL AND c.deleted_at IS NULL"
        " AND EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id = c.id AND m.id >"
        " coalesce(c.remembered_to, 0) AND m.deleted_at IS NULL)" + only +
        " ORDER BY c.created_at, c.id", (import_id,) if import_id is not None else ())


def pieces(store: GraphStore, conversation: Row) -> list[Piece]:
    """What is left to remember of `conversation`, in pieces of whole messages."""
    names = speakers(conversation)
    rows = store.query(
        "SELECT id, role, substr(content, 1, ?) AS content, created_at, turn_id FROM"
        " messages WHERE conversation_id = ? AND id > ? AND deleted_at IS NULL AND role IN"
        " ('user', 'assistant') ORDER BY id",
        (MESSAGE_CHARS + 1, conversation["id"], conversation["remembered_to"] or 0))
    made: list[Piece] = []
    for row in rows:
        size = min(len(row["content"]), MESSAGE_CHARS) + len(names[row["role"]]) + 3
        if not made or made[-1].chars + size > PIECE_CHARS:
            made.append(Piece(conversation["id"], row["created_at"], names))
        made[-1].messages.append(row)
        made[-1].chars += size
    return made


def estimate(store: GraphStore, config: Config, import_id: int | None = None,
             ) -> dict[str, Any]:
    """What building the memory will send, said before anything is sent."""
    conversations = pending(store, import_id)
    messages = chars = count = 0
    for conversation in conversations:
        for piece in pieces(store, conversation):
            count += 1
            messages += len(piece.messages)
            chars += piece.chars
    return {"conversations": len(conversations), "messages": messages, "pieces": count,
            "tokens": round(chars / TOKEN_CHARS) + count * OVERHEAD_TOKENS,
            "endpoint": config.base_url, "model": config.model,
            "writer": profiles.memory_writer(config.memory_writer, config.base_url,
                                          config.model)}


class Builder:
    """Remembers pending conversations one piece per `step()`, so whoever runs it can
    answer other requests between steps (the backend does: chat goes on meanwhile)."""

    def __init__(self, store: GraphStore, session: ChatSession, config: Config, *,
                 import_id: int | None = None, progress: Progress) -> None:
        self.store, self.session, self.config = store, session, config
        self.import_id, self.progress = import_id, progress
        self.limiter = ToolLimiter(config.tool_limits)
        self.writer = profiles.memory_writer(config.memory_writer, config.base_url,
                                          config.model)
        self.queue: list[Piece] = []
        self.current: int | None = None  # the conversation being remembered
        self.stopping = False  # stop once the current conversation is done
        self.started = time.monotonic()
        total = estimate(store, config, import_id)
        self.total_pieces, self.done_pieces = total["pieces"], 0
        self.facts = self.conversations_done = 0
        self.failed = 0  # pieces the model could not answer for

    def stop_after_conversation(self) -> None:
        self.stopping = True

    def step(self) -> bool:
        """Remember one piece; answers whether there is more to do."""
        if not self.queue:
            if self.current is not None:
                self.conversations_done += 1
                self.current = None
            waiting = [] if self.stopping else pending(self.store, self.import_id)
            if not waiting:
                self._finish()
                return False
            self.current = waiting[0]["id"]
            self.queue = pieces(self.store, waiting[0])
            if waiting[0]["import_id"] is not None:
                self._name_the_person(waiting[0])
        piece = self.queue.pop(0)
        try:
            self.facts += self._remember(piece)
        except PieceNotSent as problem:
            self.queue.insert(0, piece)  # it stays to remember
            if problem.error is None:
                return True  # a stop meant for a chat turn: sent again next step
            self._report("failed", error=problem.error)
            return False  # the endpoint is down: the build stops, and resumes later
        with self.store.conn:
            self.store.conn.execute("UPDATE conversations SET remembered_to = ? WHERE id = ?",
                                    (piece.last_id, piece.conversation_id))
        self.done_pieces += 1
        self._report("building")
        return True

    def _finish(self) -> None:
        with self.store.conn:
            self.store.conn.execute("UPDATE past_imports SET building = 0 WHERE building = 1"
                                    + (" AND id = ?" if self.import_id else ""),
                                    (self.import_id,) if self.import_id else ())
        self._report("stopped" if self.stopping and pending(self.store, self.import_id)
                     else "built", standing=standing(self.store, self.import_id))

    def _report(self, phase: str, **more: Any) -> None:
        spent = time.monotonic() - self.started
        left = max(self.total_pieces - self.done_pieces, 0)
        per_piece = spent / self.done_pieces if self.done_pieces else None
        self.progress(Event.HISTORY_IMPORT, {
            "phase": phase, "pieces": self.done_pieces, "total": self.total_pieces,
            "conversations": self.conversations_done, "facts": self.facts,
            "failed": self.failed, "seconds": round(spent, 1),
            "seconds_left": round(per_piece * left) if per_piece is not None else None,
            "import_id": self.import_id, **more})

    def _name_the_person(self, conversation: Row) -> None:
        """The export names the person (LoCoMo's speaker_a): the memory learns the name,
        so a question about them by name is a question about the person."""
        name = speakers(conversation)["user"]
        if name == "User" or self.store.query_one(
                "SELECT 1 AS yes FROM edges e JOIN nodes n ON n.id = e.source_id WHERE"
                " n.name = ? AND e.norm_relation = 'name' AND e.status = 'active'",
                (PERSON_NODE,)):
            return
        first = self.store.query_one("SELECT turn_id FROM messages WHERE conversation_id = ?"
                                     " ORDER BY id LIMIT 1", (conversation["id"],))
        with self.store.said_at(conversation["created_at"]):
            named = ToolExecutor(self.store).execute(
                "memory_commit", {"triplets": [{"subject": PERSON_NODE, "relation": "name",
                                                "object": name}]},
                turn_id=first["turn_id"] if first else None, actor="model")
        if named["success"]:
            self.facts += named["data"].get("created", 0)

    def _turn(self, piece: Piece) -> Turn:
        """A turn that is only a door: the piece's words are what was said."""
        turn = Turn(self.store, None, self.session, self.config,  # type: ignore[arg-type]
                    self.limiter, progress=self.progress)
        texts = [m["content"] for m in piece.messages]
        turn.message = "\n".join(texts)
        turn.said = grounding.said_text([*texts, *piece.names.values()])
        turn.offered = set(MEMORY_TOOLS)
        turn.turn_id = piece.messages[-1]["turn_id"]
        # "I" is whoever speaks: a slot is grounded in its subject's own lines
        spoken: dict[str, list[str]] = {}
        for m in piece.messages:
            spoken.setdefault(piece.names[m["role"]].casefold(), []).append(m["content"])
        turn.speakers = {who: "\n".join(lines) for who, lines in spoken.items()}
        turn.speakers[PERSON_NODE.casefold()] = turn.speakers.get(
            piece.names["user"].casefold(), "")
        return turn

    def _remember(self, piece: Piece) -> int:
        """Send one piece; answers how many facts were written."""
        turn = self._turn(piece)
        self.limiter.reset()
        self.limiter.taken_this_hour = None
        with self.store.said_at(piece.when):
            try:
                if self.writer == "extract":
                    return self._extracted(piece, turn)
                return self._called(piece, turn)
            except TurnCancelled:
                raise PieceNotSent(None) from None
            except (openai.OpenAIError, OSError) as error:
                words = scrub(str(error), sent_key(error))
                log.warning("remembering a past conversation failed: %s", words)
                raise PieceNotSent(words) from None
            except ValueError:  # an answer no reader makes sense of: the model's fault
                self.failed += 1
                return 0

    def _request(self, piece: Piece, instructions: str) -> list[dict[str, str]]:
        names = " and ".join(sorted(set(piece.names.values())))
        heading = f"A conversation between {names} on {day_words(piece.when, weekday=True)}:"
        # as in the live step: a small model translates facts unless told the language
        language = language_of(" ".join(m["content"] for m in piece.messages))
        if language not in (None, "English"):
            instructions += (f"\nThe conversation is in {language}: write relations and "
                             f"objects in {language}, in the speakers' words.")
        return [{"role": "system", "content": instructions},
                {"role": "user", "content": heading + "\n\n" + "\n".join(piece.lines())}]

    def _extracted(self, piece: Piece, turn: Turn) -> int:
        instructions = files("core.turn.prompts").joinpath("remember.md").read_text("utf-8")
        answer = self.session.complete_json(self._request(piece, instructions.strip()),
                                            response_format(), profiles.timeouts(self.config)[0])
        try:
            facts = json.loads(answer).get("facts")
        except (ValueError, AttributeError, RecursionError):
            facts = None
        if not isinstance(facts, list):
            self.failed += 1
            return 0
        written = 0
        for (turn_id, tag), triplets in self._grouped(piece, facts).items():
            turn.turn_id = turn_id
            self.limiter.reset()  # each past exchange is a turn, under a turn's limits
            arguments = {"triplets": triplets, "temporal_tag": tag}
            outcome = turn.run_tool("memory_commit", json.dumps(arguments, ensure_ascii=False))
            if outcome.get("success"):
                written += outcome["data"].get("created", 0)
        return written

    def _grouped(self, piece: Piece, facts: list[Any]) -> dict[tuple[str, str], list[dict]]:
        """The facts by the exchange whose words hold them (where each came from) and by
        when they happened (worked out by the app, see `core.when`). A speaker's
        fact told in another speaker's own first-person words is theirs (the 1.5B model
        gave "I have a husband", said by Melanie, to both speakers); the person's name
        becomes the person; the same fact twice is one."""
        person = piece.names["user"].casefold()
        speakers = {name.casefold(): name for name in piece.names.values()}
        said = [(m, grounding.said_text([m["content"]])) for m in piece.messages]
        groups: dict[tuple[str, str], list[dict]] = {}
        for fact in facts[:FACTS_PER_PIECE]:
            values = _fact_values(fact)
            if values is None:
                continue
            words = f"{values['object']} {values['relation']}"
            subject = values["subject"].casefold()
            subject = person if subject in grounding.PERSON else subject
            # the message with most of its words; of those, the subject's own, then the last
            message = max(said, key=lambda pair: (
                grounding.shared_words(words, pair[1]),
                piece.names[pair[0]["role"]].casefold() == subject, said.index(pair)))[0]
            speaker = piece.names[message["role"]]
            if subject in speakers and subject != speaker.casefold() and \
                    _FIRST_PERSON.search(message["content"]) and \
                    subject not in message["content"].casefold():
                values["subject"] = speaker
            if values["subject"].casefold() in {person, *grounding.PERSON}:
                values["subject"] = PERSON_NODE
            tag = when.resolved(values.pop("when"), words, message["content"], piece.when)
            group = groups.setdefault((message["turn_id"], tag), [])
            if values not in group:
                group.append(values)
        return groups

    def _called(self, piece: Piece, turn: Turn) -> int:
        """A model that calls tools reads the piece and writes the memory itself."""
        instructions = files("core.turn.prompts").joinpath("remember.md").read_text("utf-8")
        instructions = instructions.split("Answer with", 1)[0].strip() + (
            " Store each fact with memory_commit (the subject is the person's name or "
            "User for the user), with temporal_tag for when it happened; then answer "
            "\"done\".\n" + instructions.split("\n", 1)[1])
        written: list[int] = []

        def run_tool(name: str, arguments: str) -> dict[str, Any]:
            outcome = turn.run_tool(name, arguments)
            if outcome.get("success") and name == "memory_commit":
                written.append(outcome["data"].get("created", 0))
            return outcome

        first_token, between, _ = profiles.timeouts(self.config)
        tools = [t for t in openai_tools("core") if t["function"]["name"] in MEMORY_TOOLS]
        options = TurnOptions(tools, 3,
                              profiles.temperature(self.config.temperature, self.config.base_url),
                              first_token, between, profiles.max_tokens(self.config.base_url),
                              profiles.request_options(False, self.config.base_url),
                              person_text=turn.message)
        result = self.session.run(self._request(piece, instructions), run_tool,
                                  lambda _event, _data: None, options)
        if result.code is not None:
            raise PieceNotSent(None if result.code is ErrorCode.CANCELLED else
                               scrub(result.error or result.code.value))
        return sum(written)


# "I", "my", "我": a speaker telling of themself
_FIRST_PERSON = re.compile(r"\b(I|I'm|I've|my|me|mine)\b|我", re.IGNORECASE)
# What people say to each other and is no fact about anyone ("Melanie -bye-> Caroline")
SMALL_TALK = {"bye", "goodbye", "hi", "hello", "hey", "thanks", "thank", "thanks to",
              "thank you", "take care", "congrats", "congratulations", "here", "see you",
              "sorry", "welcome", "cheers", "concern", "fun", "talked to", "talked about",
              "talked with", "asked", "asked about", "said", "says", "shared", "shares",
              "replied", "told"}


def _fact_values(fact: Any) -> dict[str, str] | None:
    """[subject, relation, object, when] (or the same as an object), each trimmed; None
    for anything else, or a relation that is a whole sentence."""
    if isinstance(fact, dict):
        fact = [fact.get(k) for k in ("subject", "relation", "object", "when")]
    if not isinstance(fact, list) or len(fact) != 4:
        return None
    values = dict(zip(("subject", "relation", "object", "when"),
                      (v.strip() if isinstance(v, str) else "" for v in fact), strict=True))
    if not all(values[k] for k in ("subject", "relation", "object")) or \
            len(values["relation"].split()) > RELATION_WORDS or \
            values["relation"].casefold().strip(" .!") in SMALL_TALK:
        return None
    return values


def standing(store: GraphStore, import_id: int | None) -> int | None:
    """How many of the facts an import wrote are still in the memory (not replaced by a
    later one, merged into a copy or deleted): what "facts" means everywhere else."""
    if import_id is None:
        return None
    return store.query_one(
        "SELECT count(*) AS n FROM edges WHERE status = 'active' AND category = 'general'"
        " AND source_message IN (SELECT m.turn_id FROM messages m JOIN conversations c ON"
        " c.id = m.conversation_id WHERE c.import_id = ? AND m.turn_id IS NOT NULL)",
        (import_id,))["n"]


def undo_import(store: GraphStore, import_id: int) -> tuple[int, list[int]]:
    """Take back every memory change an import made, as one change; the conversations
    stay (they are the person's history). Raises StoreError when there is nothing."""
    rows = store.query(
        "SELECT id FROM change_log WHERE turn_id IN (SELECT m.turn_id FROM messages m JOIN"
        " conversations c ON c.id = m.conversation_id WHERE c.import_id = ?) AND undo_of IS"
        " NULL AND undone_by IS NULL AND tool NOT IN ('undo', 'undo_turn', 'redo',"
        " 'undo_import') ORDER BY id", (import_id,))
    ids = [r["id"] for r in rows]
    if not ids:
        raise StoreError(N_("this import made no memory that is not undone already"),
                         ErrorCode.NOTHING_TO_DO)
    undo_id = store.undo_changes(ids, "undo_import", {"import_id": import_id,
                                                     "change_ids": ids})
    return undo_id, ids
