"""One turn of one conversation: the person's message in, the model's reply out, with the
memory tools in between.

It keeps the message and the reply in the conversation's history, puts the recent
messages, the memory snapshot and the offered tools in front of the model, runs the
model's calls through the executor under the turn's limits, asks the person about a call
that would take away more than a turn may, and enforces the turn's time limit. The
dispatcher only routes packets here.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import uuid
from collections.abc import Callable
from typing import Any

import openai

from core.config import Config
from core.endpoint import profiles
from core.errors import CodedError, ErrorCode
from core.events import Event
from core.i18n import N_, tr, tr_kept
from core.recall import TURN_BUDGET
from core.redaction import scrub, scrub_known, sent_key
from core.store import GraphStore, StoreError, branches, browse
from core.store.history import History
from core.tools import REGISTRY, ToolExecutor, approvals, openai_tools
from core.tools.base import ToolError
from core.tools.limits import ToolLimiter
from core.tools.memory import purge_matches, purge_names
from core.tools.schemas import TOOL_NAMES
from core.turn import answering, prompt_window
from core.turn.guards import LoopGuard
from core.turn.llm import ChatSession, TurnCancelled, TurnOptions, TurnResult
from core.turn.prompts import answer_prompt, asks_for_fact, system_prompt, turn_message_again
from core.turn.snapshot import (
    active_tasks,
    memory_snapshot,
    person_profile,
    related_facts,
    their_people,
)
from core.writer import (
    extract,
    forget_scope,
    forgetting,
    grounding,
    own_words,
    relatives,
    requests,
    slots,
    whose,
)
from core.writer.language import in_first_person

log = logging.getLogger(__name__)

Progress = Callable[[str, dict[str, Any]], None]
NO_KEY = N_("API Key not configured")
VERSIONS_KEPT = 20  # earlier replies a regenerated one keeps to look back at
# Tool failures that mean the store could not keep a write (not a wrong call)
STORE_FAILURES = (ErrorCode.STORE.value, ErrorCode.READ_ONLY.value)


def no_key() -> str:
    """NO_KEY in the person's language (and in the one chosen later, when kept)."""
    return tr_kept(NO_KEY)


def scrubbed(error: str | None) -> str | None:
    """An error without keys; still the `Words` it was made of when nothing was masked, so
    the history says it again in the language chosen later."""
    clean = scrub(error or "")
    return (error if clean == error else clean) or None


def _fact_words(fact: dict[str, Any]) -> str:
    return f"{fact['source_name']} {fact['relation']} {fact['target_name']}"


def _forgets(name: str, arguments: Any, outcome: dict[str, Any]) -> bool:
    """A successful call that took facts away (a forget or a purge, not a replacement)."""
    if name not in ("memory_forget", "memory_purge") or not outcome["data"].get("edge_ids"):
        return False
    try:
        mode = json.loads(arguments).get("mode") if isinstance(arguments, str) else None
    except (ValueError, AttributeError):
        mode = None
    return mode != "supersede"


class TurnRefused(CodedError):
    """The turn did not give a reply: the message says why, `data` what is known."""

    def __init__(self, message: str, data: Any = None, code: ErrorCode | None = None,
                 **params: Any) -> None:
        super().__init__(message, code, **params)
        self.data = data


class Turn:
    def __init__(self, store: GraphStore, history: History, session: ChatSession | None,
                 config: Config, limiter: ToolLimiter, *, progress: Progress,
                 can_ask_person: bool = False, answer_first: bool = False) -> None:
        """`can_ask_person`: a window shows approval requests, so a call over the budget
        waits for the person instead of being refused outright. `answer_first`: the
        memory-writing step runs after the answer went out (`follow_up`), so the person
        waits for the reply only."""
        self.store, self.history, self.session = store, history, session
        self.config, self.limiter, self.progress = config, limiter, progress
        self.can_ask_person = can_ask_person
        self.turn_id = uuid.uuid4().hex
        self.answer_first = answer_first
        self.follow_up: Callable[[Progress], None] | None = None  # for the host to run next
        self.offered: set[str] = set()
        self.recalled: list[int] = []
        self.asked: list[dict[str, Any]] = []
        self.not_saved: str | None = None  # why a write of this turn failed in the store
        self.not_forgotten: list[str] = []  # what the person asked to forget, unmatched
        self.held: list[str] = []  # facts a forget reached past what was asked: kept
        self.forgot = False  # a forget of this turn took facts (what was asked, at least)
        self.scoped = False  # the calls running now were checked against the ask
        # who said what, when the words are not the person's alone (a history's speakers:
        # name → their lines); a fact's slot is grounded in its subject's own lines
        self.speakers: dict[str, str] | None = None
        self.message = ""  # the person's message of this turn…
        self.said = ""  # …and what they wrote recently: a fact must be made of it

    def run(self, text: Any, replaces_turn: Any = None) -> dict[str, Any]:
        if not isinstance(text, str) or not text.strip():
            raise TurnRefused(tr("user_input must be non-empty text"))
        earlier: list[dict[str, Any]] = []
        if replaces_turn is not None:
            earlier = self._take_back(replaces_turn, text)
        extracting = profiles.memory_writer(self.config.memory_writer, self.config.base_url,
                                         self.config.model) == "extract"
        # the evidence is what this model reads in a few seconds (`core.turn.pace`)
        budget = self.session.pace.budget(TURN_BUDGET) if self.session else TURN_BUDGET
        context = prompt_window.build(self.history, self.store, text, plain=extracting,
                                      budget=budget)
        self.message = text
        self.said = grounding.said_text([*context.said, text])
        # a message no model can answer yet does not name the conversation: it is offered
        # to be sent once one is set up (the window's notice), or put away
        self.history.append("user", text, titles=self.session is not None,
                            turn_id=self.turn_id, sent=context.sent)
        if self.session is None:
            self.history.append("assistant", "", turn_id=self.turn_id, partial=True,
                                error=no_key())
            raise TurnRefused(NO_KEY, {"turn_id": self.turn_id}, ErrorCode.NO_KEY)
        self.limiter.reset()
        options, compact = self._options(text)
        if extracting:
            options.tools = []  # the extraction step writes the memory after the answer
        # The instructions and the tools come first and stay the same, then the earlier
        # messages as they were sent, then the new one: a server's prompt cache reuses
        # everything before it (see core.turn.prompt_window). A question of fact to a
        # model that has no tools gets instructions of its own (`answer_prompt`): told
        # it was a companion, it chatted about the evidence instead of answering.
        answers = extracting and asks_for_fact(text)
        if answers:
            options.temperature = profiles.answer_temperature(self.config.temperature)
        instructions = answer_prompt(self.config.instructions) if answers else \
            system_prompt(compact, not extracting, self.config.instructions)
        messages = [{"role": "system", "content": instructions},
                    *context.earlier, {"role": "user", "content": context.content}]
        options.person_said = [*context.said, text]
        options.to_person = asks_for_fact(text) and in_first_person(text) and \
            not requests.is_request(text)  # "can you suggest a name for my bakery?"

        def ask_again(_sent: list[dict[str, Any]]) -> list[dict[str, Any]]:
            """The message alone with the whole snapshot, quoted: the earlier messages
            are what a repeating model imitates."""
            return [messages[0], {"role": "user", "content": turn_message_again(
                memory_snapshot(self.store, text, extracting), text,
                context.sent["today"])}]

        options.ask_again = ask_again
        options.fallback = lambda: answering.reply_from_memory(self.store, text)
        result = self._play(messages, options)
        later = extracting and result.code is None and extract.worth_asking(text)
        if later and not self.answer_first:
            self._write_memory(text, result)
        if not result.cancelled:
            for note in self._notes():
                self._add_note(result, note)
            result.not_saved = self.not_saved
        result.usage = self._with_recall(result.usage, context.recalled)
        result.content, result.error = scrub_known(result.content), scrubbed(result.error)
        result.reasoning = scrub_known(result.reasoning)
        data = {**result.data(), "turn_id": self.turn_id, "approvals": self.asked,
                "touched": browse.turn_touched(self.store, self.turn_id, self.recalled)}
        self.history.append("assistant", result.content, turn_id=self.turn_id,
                            tool_calls=result.tool_calls, rejected_tools=result.rejected_tools,
                            refused_why=result.refused_why or None,
                            usage=result.usage, partial=result.code is not None,
                            error=result.error, reasoning=result.reasoning,
                            round_trips=result.round_trips, versions=earlier or None)
        if result.error or result.cancelled:
            raise TurnRefused(result.error or N_("cancelled"), data, result.code)
        if later and self.answer_first:
            self.follow_up = lambda progress: self.write_memory_after(text, progress)
            data["memory_pending"] = True
        return data

    def _with_recall(self, usage: dict[str, Any], recalled: dict[str, int]
                     ) -> dict[str, Any]:
        """The turn's usage with what recall showed the model, its budget and the pace
        that set it: the turn's record tells why an answer had little to go on."""
        if not recalled:
            return usage
        rate = self.session.pace.tokens_per_second() if self.session else None
        pace = {"reads_per_second": round(rate)} if rate else {}
        return {**usage, "recall": {**recalled, **pace}}

    def write_memory_after(self, text: str, progress: Progress) -> None:
        """The memory-writing step, after the reply went out: its calls are told with
        this turn's id, then added to the stored reply (with any note: nothing matched a
        forget, nothing could be saved), and MEMORY_WRITTEN says what it did."""
        def told(event: str, data: dict[str, Any]) -> None:
            progress(event, {**data, "turn_id": self.turn_id, "after_answer": True})

        self.progress = told
        self.not_saved, self.not_forgotten, self.held, self.forgot = None, [], [], False
        written = TurnResult()
        self._write_memory(text, written)
        note = "".join(f"\n\n[{words}]" for words in self._notes())
        self.history.add_to_reply(self.turn_id, written.tool_calls, written.rejected_tools,
                                  written.refused_why, note)
        progress(Event.MEMORY_WRITTEN, {
            "turn_id": self.turn_id, "tool_calls": written.tool_calls,
            "rejected_tools": written.rejected_tools, "refused_why": written.refused_why,
            "note": note, "not_saved": self.not_saved,
            "touched": browse.turn_touched(self.store, self.turn_id, self.recalled)})

    def _notes(self) -> list[str]:
        """What the person must read under the reply, whatever the model said."""
        notes = []
        if self.not_saved:
            notes.append(tr("Not saved to the memory: {why}", why=self.not_saved))
        if self.not_forgotten:
            notes.append(tr("Nothing in the memory matched {what}, so nothing was forgotten",
                            what=", ".join(f"“{w}”" for w in self.not_forgotten)))
        if self.held:
            shown = "; ".join(self.held[:5]) + ("; …" if len(self.held) > 5 else "")
            waits = bool(self.asked) and self.asked[-1].get("tool") in (
                "memory_forget", "memory_purge")
            if self.forgot:  # what was asked went; the rest is what the note names
                notes.append(tr("Forgotten as you asked. What you did not ask about waits "
                                "for you to allow or deny in the window: {facts}.",
                                facts=shown) if waits else
                             tr("Forgotten as you asked. Kept what you did not ask about: "
                                "{facts}.", facts=shown))
            elif len(self.held) == 1:
                notes.append(tr("Not forgotten without you: that would also take a fact "
                                "you did not ask about ({facts}). Allow or deny it in the "
                                "window.", facts=shown) if waits else
                             tr("Not forgotten: that would also take a fact you did not "
                                "ask about ({facts}), so it was kept.", facts=shown))
            else:
                notes.append(tr("Not forgotten without you: that would also take {count} "
                                "more facts than you asked ({facts}). Allow or deny it in "
                                "the window.", count=len(self.held), facts=shown)
                             if waits else
                             tr("Not forgotten: that would also take {count} more facts "
                                "than you asked ({facts}), so they were kept.",
                                count=len(self.held), facts=shown))
        return notes

    def _options(self, text: str) -> tuple[TurnOptions, bool]:
        config = self.config
        tool_set = profiles.tool_set(config.tool_set, config.base_url, text)
        local = profiles.is_local(config.base_url)
        first_token, between_chunks = profiles.timeouts(config)[:2]
        options = TurnOptions(openai_tools(tool_set), config.max_round_trips,
                              profiles.temperature(config.temperature, config.base_url),
                              first_token, between_chunks,
                              profiles.max_tokens(config.base_url),
                              profiles.request_options(config.thinking, config.base_url),
                              max_tool_rounds=profiles.LOCAL_TOOL_ROUNDS if local else None,
                              drop_tools_to_answer=local, person_text=text, local=local)
        self.offered = {t["function"]["name"] for t in options.tools}
        return options, tool_set == "compact"

    def _play(self, messages: list[dict[str, Any]], options: TurnOptions) -> Any:
        """The model's loop, stopped when the turn's time is up."""
        session, limit = self.session, profiles.timeouts(self.config)[2]
        deadline = threading.Timer(limit, lambda: session.expire(limit))
        deadline.daemon = True
        deadline.start()
        try:
            return session.run(messages, self.run_tool, self.progress, options)
        finally:
            deadline.cancel()

    def _write_memory(self, text: str, result: Any) -> None:
        """The extraction step (see `core.writer.extract`): what the message adds, changes
        or takes away, applied through the same tools, limits and checks as a model's
        calls, and shown in the trace as those calls."""
        profile = person_profile(self.store)[:40]
        people = their_people(self.store, profile)
        related = related_facts(self.store, text, [])
        facts = list({f["id"]: f for f in profile + people + related}.values())
        tasks = active_tasks(self.store, 20)
        try:
            # The step sees the known facts only when the message changes or forgets
            # one (see extract.request_messages): shown them, the 1.5B model copied them
            # back and missed what the message said.
            answer = self.session.complete_json(extract.request_messages(text, facts, tasks),
                                                extract.response_format(),
                                                profiles.timeouts(self.config)[0])
        except TurnCancelled:
            return
        except (openai.OpenAIError, ValueError, OSError) as error:
            log.warning("memory extraction failed: %s", scrub(str(error), sent_key(error)))
            return
        guard = LoopGuard()
        plan = extract.calls(extract.parse(answer), text, facts, tasks, self._similar())
        self.not_forgotten = plan.unmatched
        self._hold_forget(plan.held)
        self.scoped = True  # its forgets were weighed against the ask already
        try:
            for i, (name, arguments) in enumerate(plan.calls):
                call = {"id": f"extract_{i}", "name": name,
                        "arguments": json.dumps(arguments, ensure_ascii=False)}
                self.session.run_call(call, self.run_tool, self.progress, result, guard)
        finally:
            self.scoped = False

    def _commit_checked(self, arguments: str, strict: bool) -> tuple[str, str | None]:
        """A memory_commit's facts as the message says them (see `core.writer`): no
        request's topic, each fact whose it is, relatives and named things linked, a small
        model's unsaid liking kept in the person's words or not at all, and one-value
        slots only where the message speaks of them; and why anything was left out."""
        arguments, asked = requests.checked(arguments, self.message)
        liked = slot_refused = None
        if arguments:
            arguments = relatives.named_things_in_call(relatives.resolved_in_call(
                whose.owned_in_call(arguments, self.message), self.store, self.message),
                self.message)
        if arguments and strict:
            arguments, liked = own_words.liking_checked(arguments, self.message)
        if arguments:
            arguments, slot_refused = slots.checked(
                arguments, self.message, strict, self.speakers,
                frozenset(forget_scope.person_names(person_profile(self.store))))
        return arguments, "; ".join(r for r in (asked, liked, slot_refused) if r) or None

    def run_tool(self, name: str, arguments: str) -> dict[str, Any]:
        if name not in self.offered and name in TOOL_NAMES:
            return {"success": False, "rejected": True, "refused": "not_offered",
                    "error": f"Tool call rejected: {name} is not offered in this turn (it is "
                             "for when the user asks for that kind of work); answer with "
                             "what you have"}
        # a key a server put in the model's mouth is not stored as a memory
        arguments = scrub_known(arguments) if isinstance(arguments, str) else arguments
        if name == "memory_purge" and isinstance(arguments, str):
            name, arguments = self._replacement_grounded(arguments)
            if not arguments:
                return {"success": False, "invalid": True, "error": (
                    "Not replaced: the message does not give the relative a new name; "
                    "a relative stays who they are. Store what it says about them "
                    "under their name.")}
        arguments, refused = self._said_checked(name, arguments)
        if refused and not arguments:
            return {"success": False, "invalid": True, "error": refused}
        if name == "memory_purge" and not self.scoped:
            arguments, held = self._purge_in_scope(arguments)
            if held is not None:
                return held
        outcome = ToolExecutor(self.store).execute(name, arguments, turn_id=self.turn_id,
                                                   actor="model", limiter=self.limiter)
        if refused and outcome["success"]:
            outcome["data"]["result"] += f"\nNot stored: {refused}"
        if name == "memory_purge" and outcome["success"] and \
                not outcome["data"].get("edge_ids"):
            outcome = self._forget_what_was_meant(arguments, outcome)
        if outcome["success"]:
            self.recalled.extend(outcome["data"].get("edge_ids") or [])
            self.forgot = self.forgot or _forgets(name, arguments, outcome)
        elif outcome.get("code") in STORE_FAILURES and name in REGISTRY \
                and REGISTRY[name].writes:
            self.not_saved = self.not_saved or outcome["error"].removeprefix(f"{name}: ")
        elif outcome.get("over_budget"):
            outcome = self._ask_person(outcome)
        return outcome

    def _said_checked(self, name: str, arguments: str) -> tuple[str, str | None]:
        """The call with only what the person said (see `core.writer.grounding`), a
        commit's facts as the message says them, and why anything was left out."""
        strict = profiles.is_local(self.config.base_url)
        if name == "memory_commit" and strict and isinstance(arguments, str):
            arguments = own_words.relations_refiled(arguments, self.message, self.said)
        arguments, refused = grounding.check_call(name, arguments, self.said, self.message,
                                                  strict=strict)
        if name == "memory_commit" and isinstance(arguments, str) and arguments:
            arguments, more = self._commit_checked(arguments, strict)
            refused = "; ".join(r for r in (refused, more) if r) or None
        return arguments, refused

    def _add_note(self, result: Any, words: str) -> None:
        """A line the app adds under the model's reply, shown as it streams and kept."""
        note = f"\n\n[{words}]"
        result.content += note
        self.progress(Event.TEXT, {"delta": note})

    def _take_back(self, turn_id: Any, text: str) -> list[dict[str, Any]]:
        """Retry, regenerate and editing a message replace a turn and every turn after it
        (the conversation goes on from there): their memory changes are undone first, as
        one change, so nothing a discarded reply wrote stays, then their messages go; an
        edit keeps them aside as a branch to switch back to (see `core.store.branches`).
        Answers the replies a regenerated reply replaces (the same message asked again),
        for it to keep as earlier versions."""
        turns = self.history.turns_from(turn_id) if isinstance(turn_id, str) else []
        if not turns:
            raise TurnRefused(tr("replaces_turn must name a turn of the conversation"))
        asked = next((m["content"] for m in self.history.turn_messages(turns[0])
                      if m["role"] == "user"), None)
        earlier = self.history.reply_versions(turns[0]) if asked == text else []
        # a failed reply is no version to keep
        earlier = [v for v in earlier if v.get("content")][-VERSIONS_KEPT:]
        undo_id = None
        try:
            undo_id, _undone = self.store.undo_turn(turns[0], later=turns[1:])
        except StoreError as error:
            if error.code is not ErrorCode.NOTHING_TO_DO:
                raise TurnRefused(N_("the turn cannot be replaced: {error}"), None,
                                  error.code, error=error.said()) from None
        for turn in turns:
            approvals.expire_turn(self.store, turn)
        if asked != text and branches.supported(self.store):  # an edit: a branch, kept
            branches.keep_aside(self.store, self.history, turns, self.turn_id, undo_id)
            return earlier
        for turn in turns:
            self.history.drop_turn(turn)
        return earlier

    def _forget_what_was_meant(self, arguments: str, outcome: dict[str, Any]) -> dict[str, Any]:
        """A forget whose names match no fact exactly ("peanut allergy" for "peanuts",
        "green tea" for 绿茶): the app matches it by words and meaning (see
        `core.writer.forgetting`) and forgets those facts one by one, under the same
        limits; the result lists them, so the trace shows what went."""
        try:
            args = json.loads(arguments)
        except (ValueError, RecursionError):
            return outcome
        criteria = args.get("criteria") if isinstance(args, dict) else None
        if not isinstance(criteria, dict) or args.get("mode", "soft") != "soft":
            return outcome
        words = next((criteria[k] for k in ("object", "target", "object_contains",
                                            "target_contains") if isinstance(criteria.get(k),
                                                                             str)), None)
        if not words:
            return outcome
        profile = person_profile(self.store)
        known = profile + related_facts(self.store, words, profile)
        found = forgetting.matching(words, known, self._similar())
        meant = {f.get("id") for f in found} if grounding.grounded(
            words, grounding.said_text([self.message])) else set()
        scope = forget_scope.split_many(forgetting.asked_to_forget(self.message) or [words],
                                        found, known, meant)
        matched = scope.kept
        self._hold_forget(scope.held)
        lines, ids = [], []
        for tool, purge in forgetting.purges(matched):
            done = ToolExecutor(self.store).execute(tool, purge, turn_id=self.turn_id,
                                                    actor="model", limiter=self.limiter)
            if done["success"]:
                ids += done["data"].get("edge_ids") or []
                lines.append(done["data"]["result"])
        if not ids:
            return outcome
        result = (f"Nothing is named exactly {words!r}; forgot what it means instead:\n"
                  + "\n".join(lines))
        return {**outcome, "data": {**outcome["data"], "result": result, "edge_ids": ids}}

    def _replacement_grounded(self, arguments: str) -> tuple[str, str]:
        """A replacement ("supersede") the person's message does not ground (see
        `core.writer.slots`) becomes its new fact alone, a guess beside the old one for
        the person's Review: a model's wrong slot must not destroy a true fact."""
        try:
            args = json.loads(arguments)
        except (ValueError, RecursionError):
            return "memory_purge", arguments
        if not isinstance(args, dict) or args.get("mode") != "supersede":
            return "memory_purge", arguments
        args = purge_names(args)
        criteria, new = args.get("criteria"), args.get("new_relation")
        if not isinstance(criteria, dict) or not isinstance(new, dict):
            return "memory_purge", arguments
        try:
            old = purge_matches(self.store, criteria)
        except (ToolError, StoreError, sqlite3.Error, TypeError, AttributeError):
            return "memory_purge", arguments
        replaced = [{"subject": o["source_name"],
                     "relation": new.get("relation") or o["relation"],
                     "object": new.get("object") or o["target_name"]} for o in old]
        meant = [relatives.as_replacement(t, self.store, self.message) for t in replaced]
        if any(m != "replaces" for m in meant):
            # a relative stays who they are: their own fact, or nothing
            kept = [t for t, m in zip(replaced, meant, strict=True) if m == "theirs"]
            return "memory_commit", json.dumps({"triplets": kept}, ensure_ascii=False) \
                if kept else ""
        if all(isinstance(t["relation"], str) and isinstance(t["object"], str)
               and slots.grounds(t, self.message) for t in replaced):
            return "memory_purge", arguments
        return "memory_commit", json.dumps({"triplets": [
            {**t, "confidence": slots.GUESS} for t in replaced[:1]]}, ensure_ascii=False)

    def _purge_in_scope(self, arguments: str) -> tuple[str, dict[str, Any] | None]:
        """A model's forget, checked against what the person asked (see
        `core.writer.forget_scope`): within it, the call runs as it is; past it, only the
        facts asked for are forgotten and the rest wait for the person. Answers the
        arguments to run, or the outcome when the call was settled here."""
        try:
            args = json.loads(arguments)
        except (ValueError, RecursionError):
            return arguments, None
        criteria = args.get("criteria") if isinstance(args, dict) else None
        if not isinstance(criteria, dict) or args.get("mode", "soft") != "soft":
            return arguments, None
        try:
            found = purge_matches(self.store, purge_names(args)["criteria"])
        except (ToolError, StoreError, sqlite3.Error, TypeError, AttributeError):
            return arguments, None  # the executor explains what is wrong with the call
        words = " ".join(str(v) for k, v in criteria.items()
                         if k in ("subject", "object", "target", "object_contains",
                                  "target_contains") and isinstance(v, str))
        profile = person_profile(self.store)
        asked = forgetting.asked_to_forget(self.message) or [words]
        # the model may name a fact in its stored words (绿茶 for "green tea"): what the
        # person's words match among the facts it named, by words or meaning, was meant
        meant = {f.get("id") for phrase in asked
                 for f in forgetting.matching(phrase, found, self._similar())}
        scope = forget_scope.split_many(asked, found, profile + [f for f in found
                                                                 if f not in profile], meant)
        if found and not forgetting.asks_to_forget(self.message):
            # nobody asked to forget anything: the model's own guess takes no fact
            scope = forget_scope.Scope(kept=[], held=found)
        if not scope.held:
            return arguments, None
        if not scope.kept:  # the call itself waits for the person, as it is
            self.held += [_fact_words(f) for f in scope.held]
            outcome = ToolExecutor(self.store).execute("memory_purge", arguments,
                                                       turn_id=self.turn_id, actor="model",
                                                       hold="asked")
            return arguments, (self._ask_person(outcome) if outcome.get("over_budget")
                               else outcome)
        self._hold_forget(scope.held)
        lines, ids = [], []
        for tool, purge in forgetting.purges(scope.kept):
            done = ToolExecutor(self.store).execute(tool, purge, turn_id=self.turn_id,
                                                    actor="model", limiter=self.limiter)
            if done["success"]:
                ids += done["data"].get("edge_ids") or []
                lines.append(done["data"]["result"])
        result = "\n".join([*lines, f"Not forgotten: {len(scope.held)} more facts than "
                            "the person asked for; they decide in the window. Do not "
                            "retry."])
        return arguments, {"success": True, "data": {"result": result, "edge_ids": ids}}

    def _hold_forget(self, facts: list[dict[str, Any]]) -> None:
        """Facts a forget matched past what the person asked: one request lists them for
        the person to allow or deny (with a window), and the reply's note says so."""
        ids = list(dict.fromkeys(f["id"] for f in facts if isinstance(f.get("id"), int)))
        if not ids:
            return
        self.held += [_fact_words(f) for f in facts if f["id"] in ids]
        outcome = ToolExecutor(self.store).execute(
            "memory_forget", {"edge_ids": ids[:50]}, turn_id=self.turn_id, actor="model",
            hold="asked")
        if outcome.get("over_budget"):
            self._ask_person(outcome)

    def _similar(self) -> forgetting.Similar | None:
        """Facts by meaning, where recall by meaning runs (see `core.writer.forgetting`)."""
        meaning = getattr(self.store, "meaning", None)
        return meaning.similar_among if meaning is not None else None

    def _ask_person(self, outcome: dict[str, Any]) -> dict[str, Any]:
        """A call over the budget: with a window, keep it for the person to allow; either
        way tell the model plainly that it did not run and must not be retried."""
        request = None
        if self.can_ask_person:
            try:
                request = approvals.request(self.store, self.turn_id, outcome["over_budget"])
            except sqlite3.Error as error:  # cannot keep the request: refuse it outright
                log.warning("approval request not kept: %s", error)
        if request is None:
            return {**outcome, "error": outcome["error"] + ". Tell the person what you "
                    "wanted to remove; do not retry in smaller parts."}
        self.asked.append(request)
        self.progress(Event.APPROVAL_REQUESTED, request)
        return {**outcome, "approval_id": request["id"],
                "error": outcome["error"] + ", and they have been asked to allow "
                "or deny it in the window. Tell them briefly what you asked for; do not "
                "retry it in smaller parts."}
