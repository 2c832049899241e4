"""LoCoMo: the memory against plain baselines, with the same model and the same questions.

    python bench/locomo.py [--data FILE] [--sample conv-26|all] [--questions N]
                           [--adversarial] --base-url URL --model NAME   (key: $TRULYMEM_API_KEY)
    python bench/locomo.py --quick       (a small invented conversation, a loopback model)
    --judge-base-url URL --judge-model NAME   also label each answer CORRECT or WRONG
                         with an LLM judge, two ways (key: $TRULYMEM_JUDGE_KEY, else
                         $TRULYMEM_API_KEY): the lenient prompt published memory systems
                         use, and a strict one
    --keep FOLDER keeps each conversation's built memory there and asks again without
    building it anew (the build's seconds are kept with it).
    --evidence-only   no answers: each method's evidence recall, the share of the gold
                      answers' words it shows, and its prompt size for every question, in
                      minutes instead of hours (what recall is tuned on; F1 needs the
                      answers)
    --methods memory,retrieval   ask only these (full context takes minutes a question
                      on a small local model; the summary says "-" for one not asked)

For each conversation: it is imported into a fresh home as `trulymem import-history`
does, the person being speaker_a, and the memory is built from it through the same
memory writer a live turn uses. Then every question of categories 1-4 (and 5 with
--adversarial) is asked three ways:
  memory        in a new conversation with no history (deleted after its answer):
                only the memory can answer
  full-context  the whole conversation in the prompt, cut from its start to fit
  retrieval     the 10 turns SQLite's full-text index ranks best for the question
Each answer is scored with LoCoMo's token F1 (core/eval/locomo.py); evidence recall is
the share of a question's evidence turns among the sources the method put in front of
the model. Every method gets the same answer instruction (`core.eval.locomo.ANSWER_RULES`):
the baselines in their prompt, the memory as the person's own instructions (Settings,
Instructions), which end the same system message. The data is
LoCoMo's (CC BY-NC 4.0): it is read from where it lies, never copied. Default --data:
../shared/data/locomo/locomo-dev.json beside the repository, or $TRULYMEM_LOCOMO. The
last line is one summary a script can read.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import openai

from core.backend import Backend
from core.endpoint import profiles
from core.eval import locomo
from core.eval.tokens import token_count
from core.paths import config_path, database_path
from core.protocol.dispatcher import Dispatcher
from core.protocol.packets import Packet, PacketType
from core.store import conversations
from core.testing.remembering_model import RememberingModel
from core.turn.snapshot import render_full, snapshot_items

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo" / "locomo-dev.json"
METHODS = ("memory", "full-context", "retrieval")
RETRIEVED = 10
ANSWER_TOKENS = 64


def _ask(client: openai.OpenAI, model: str, messages: list[dict[str, str]]
         ) -> tuple[str, int]:
    answer = client.chat.completions.create(model=model, messages=messages, temperature=0,
                                            max_tokens=ANSWER_TOKENS)
    text = answer.choices[0].message.content or "" if answer.choices else ""
    return text.strip(), getattr(answer.usage, "prompt_tokens", 0) or 0


class Run:
    """One conversation: imported, remembered, then asked."""

    def __init__(self, sample: dict[str, Any], args: argparse.Namespace, home: Path) -> None:
        self.sample, self.args, self.home = sample, args, home
        self.turns = locomo.turns(sample)
        self.backend = Backend(database_path(home), config_path(home), home=home)
        self.dispatcher = Dispatcher(self.backend)
        self.backend.open(args.key, args.base_url, args.model)
        self.client = openai.OpenAI(api_key=args.key, base_url=args.base_url,
                                    timeout=args.timeout, max_retries=1)
        self.dia_of_turn: dict[str, list[str]] = {}
        self.dia_of_message: dict[int, str] = {}
        self.seconds: dict[str, float] = {}

    def build(self) -> None:
        built = self.home / "built.json"  # with --keep: the memory is built already
        if built.exists():
            self.seconds = json.loads(built.read_text("utf-8"))
            self._map_turns()
            self._count_facts()
            return
        started = time.monotonic()
        path = self.home / "sample.json"  # this run's own copy, removed with the home
        path.write_text(json.dumps([self.sample]), "utf-8")
        kept = self.dispatcher.handle(Packet.make(PacketType.IMPORT_HISTORY, {"path": str(path)}))
        path.unlink()
        if not kept.success:
            raise SystemExit(f"import failed: {kept.error}")
        self._map_turns()
        self.seconds["import"] = time.monotonic() - started
        if self.dispatcher.handle(Packet.make(PacketType.BUILD_MEMORY)).success:
            last = time.monotonic()
            while self.backend.background_step():
                builder = self.backend.work.builder
                if builder is not None and time.monotonic() - last > 30:
                    last = time.monotonic()
                    print(f"  {builder.done_pieces}/{builder.total_pieces} pieces, "
                          f"{builder.facts} facts", file=sys.stderr, flush=True)
        self.seconds["build"] = time.monotonic() - started
        built.write_text(json.dumps(self.seconds), "utf-8")
        self._count_facts()

    def instruct(self) -> None:
        """The baselines' answer instruction, word for word and in the same place (the
        system message), as the person's own instructions in the settings."""
        told = self.dispatcher.handle(Packet.make(PacketType.SET_CONFIG, {
            "instructions": locomo.ANSWER_RULES}))
        if not told.success:
            raise SystemExit(f"the answer instruction was not kept: {told.error}")

    def wait_for_meaning(self) -> None:
        """Every fact and turn has its vector before the first question (a person asking
        a minute after an import would find them by words meanwhile)."""
        meaning = self.backend.meaning
        if meaning is not None:
            started = time.monotonic()
            meaning.wait_idle(3600)
            self.seconds["vectors"] = time.monotonic() - started

    def _count_facts(self) -> None:
        self.facts = self.backend.store.query_one(
            "SELECT count(*) AS n FROM edges WHERE status = 'active'")["n"]

    def _map_turns(self) -> None:
        """Each imported exchange's LoCoMo turns: the messages of a session are its turns
        in order."""
        store = self.backend.store
        by_session: dict[int, list[locomo.Turn]] = {}
        for turn in self.turns:
            if turn.text.strip():
                session = int(turn.dia_id.split(":")[0].lstrip("D") or 0)
                by_session.setdefault(session, []).append(turn)
        for row in store.query("SELECT id, source FROM conversations WHERE source LIKE ?",
                               (f"locomo:{self.sample['sample_id']}:%",)):
            session = int(row["source"].rsplit(":", 1)[1])
            messages = store.query("SELECT id, turn_id FROM messages WHERE conversation_id"
                                   " = ? ORDER BY id", (row["id"],))
            for message, turn in zip(messages, by_session.get(session, []), strict=False):
                self.dia_of_turn.setdefault(message["turn_id"], []).append(turn.dia_id)
                self.dia_of_message[message["id"]] = turn.dia_id

    def ask_memory(self, question: str) -> tuple[str, int, set[str]]:
        backend = self.backend
        self.dispatcher.handle(Packet.make(PacketType.NEW_CONVERSATION))
        # asked as a person would; the answer instruction the baselines' prompt carries is
        # the person's own instructions (see `instruct`), as a person would set them. A
        # question adds nothing to the memory (no memory-writing step runs)
        answer = self.dispatcher.handle(Packet.make(PacketType.PROCESS_MESSAGE, {
            "user_input": question}))
        data = answer.data if isinstance(answer.data, dict) else {}
        usage = data.get("usage") or {}
        prompt = usage.get("prompt_tokens", 0) if isinstance(usage, dict) else 0
        sent = backend.store.query_one(
            "SELECT sent FROM messages WHERE role = 'user' ORDER BY id DESC LIMIT 1")
        recalled = (data.get("touched") or {}).get("edges") or []
        sources = self._sources(sent["sent"] if sent else None, recalled)
        # each question is asked on its own: the earlier ones are not there to be recalled
        self.dispatcher.handle(Packet.make(PacketType.DELETE_CONVERSATION, {
            "conversation_id": backend.conversation_id}))
        return (data.get("content") or answer.error or "").strip(), prompt, sources

    def memory_evidence(self, question: str) -> tuple[str, int, set[str]]:
        """What a question's turn would put in front of the model, unasked: the snapshot's
        sources and its size in tokens."""
        config = self.backend.config
        plain = profiles.memory_writer(config.memory_writer, config.base_url,
                                       config.model) == "extract"
        items = snapshot_items(self.backend.store, question, plain)
        sent = json.dumps({"items": {i.key: [i.sense, i.line] for i in items}})
        shown = render_full(items, plain)
        return shown, token_count(shown), self._sources(sent, [])

    def _sources(self, sent: str | None, recalled: list[int]) -> set[str]:
        """The LoCoMo turns behind the facts the memory put in front of the model: the
        snapshot's, and those a model that calls tools recalled."""
        try:
            items = json.loads(sent).get("items", {}) if sent else {}
        except ValueError:
            items = {}
        ids = [int(k[1:]) for k in items if k.startswith("e") and k[1:].isdigit()]
        ids += [i for i in recalled if isinstance(i, int)]
        quoted = {self.dia_of_message.get(int(k[1:])) for k in items
                  if k.startswith("m") and k[1:].isdigit()} - {None}
        if not ids:
            return quoted
        marks = ", ".join("?" * len(ids))
        rows = self.backend.store.query(
            f"SELECT source_message FROM edges WHERE id IN ({marks})", ids)
        return quoted | {d for r in rows
                         for d in self.dia_of_turn.get(r["source_message"] or "", [])}

    def _full_request(self, question: str) -> tuple[list[dict[str, str]], set[str]]:
        kept = locomo.full_context(self.turns, self.args.context_tokens, token_count)
        return (locomo.request(locomo.transcript(kept), question, "The conversation"),
                {t.dia_id for t in kept})

    def _retrieval_request(self, question: str) -> tuple[list[dict[str, str]], set[str]]:
        hits = conversations.search(self.backend.store, question, limit=RETRIEVED)
        by_id = {t.dia_id: t for t in self.turns}
        chosen, seen = [], set()
        for hit in hits:
            for dia in self.dia_of_turn.get(self._turn_of(hit["id"]), []):
                turn = by_id.get(dia)
                if turn and dia not in seen and _same_text(turn.text, hit["snippet"]):
                    seen.add(dia)
                    chosen.append(turn)
        order = {t.dia_id: i for i, t in enumerate(self.turns)}
        chosen.sort(key=lambda t: order[t.dia_id])
        return (locomo.request(locomo.transcript(chosen), question,
                               "Parts of the conversation"), seen)

    def ask_full(self, question: str) -> tuple[str, int, set[str]]:
        messages, sources = self._full_request(question)
        return (*_ask(self.client, self.args.model, messages), sources)

    def ask_retrieval(self, question: str) -> tuple[str, int, set[str]]:
        messages, sources = self._retrieval_request(question)
        return (*_ask(self.client, self.args.model, messages), sources)

    def full_evidence(self, question: str) -> tuple[str, int, set[str]]:
        return _unasked(*self._full_request(question))

    def retrieval_evidence(self, question: str) -> tuple[str, int, set[str]]:
        return _unasked(*self._retrieval_request(question))

    def _turn_of(self, message_id: int) -> str:
        row = self.backend.store.query_one("SELECT turn_id FROM messages WHERE id = ?",
                                           (message_id,))
        return row["turn_id"] if row else ""

    def close(self) -> None:
        self.backend.close()


def _unasked(messages: list[dict[str, str]], sources: set[str]) -> tuple[str, int, set[str]]:
    """A request not sent: what it shows, its size estimated."""
    shown = "\n".join(m["content"] for m in messages)
    return shown, token_count(shown), sources


def _same_text(text: str, snippet: str) -> bool:
    piece = snippet.strip("…").split()[:4]
    return " ".join(piece) in " ".join(text.split())


def choose(questions: list[dict[str, Any]], most: int | None, adversarial: bool
           ) -> list[dict[str, Any]]:
    """The questions asked: categories 1-4 (5 too with --adversarial); with --questions,
    an even spread over the categories, the same on every run."""
    wanted = [q for q in questions if q["category"] in (1, 2, 3, 4, 5)[:5 if adversarial
                                                                      else 4]]
    if not most or most >= len(wanted):
        return wanted
    by_category: dict[int, list[dict[str, Any]]] = {}
    for q in wanted:
        by_category.setdefault(q["category"], []).append(q)
    chosen: list[dict[str, Any]] = []
    while len(chosen) < most:
        for category in sorted(by_category):
            if by_category[category] and len(chosen) < most:
                group = by_category[category]
                chosen.append(group.pop(len(group) * 7 // 11 if len(group) > 1 else 0))
    return chosen


def judge(args: argparse.Namespace, question: dict[str, Any], answer: str
          ) -> dict[str, float | None]:
    """The judges' labels of one answer (none without --judge-base-url). An adversarial
    question (category 5) is scored by its own rule, as with F1."""
    if not args.judge_base_url:
        return {}
    if question["category"] == 5:
        right = locomo.score(answer, question)
        return {"lenient": right, "strict": right}
    client = openai.OpenAI(api_key=args.judge_key, base_url=args.judge_base_url,
                           timeout=args.timeout, max_retries=2)
    labels: dict[str, float | None] = {}
    for kind in locomo.JUDGES:
        said = client.chat.completions.create(
            model=args.judge_model, temperature=0, max_tokens=8,
            messages=locomo.judge_request(kind, question["question"],
                                          str(question.get("answer", "")), answer))
        text = said.choices[0].message.content or "" if said.choices else ""
        labels[kind] = locomo.judged(text)
    return labels


def run_sample(sample: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="locomo-") as folder:
        home = args.keep / sample["sample_id"] if args.keep else Path(folder)
        home.mkdir(parents=True, exist_ok=True)
        run = Run(sample, args, home)
        try:
            run.build()
            run.instruct()
            run.wait_for_meaning()
            print(f"{sample['sample_id']}: {len(run.turns)} turns, {run.facts} facts in "
                  f"{run.seconds['build']:.0f} s", file=sys.stderr, flush=True)
            chosen = choose(sample["qa"], args.questions, args.adversarial)
            rows = [{"category": q["category"], "gold": q.get("answer"),
                     "question": q["question"]} for q in chosen]
            # one method at a time: a local server keeps the long full-context prompt in
            # its cache from one question to the next only when nothing comes between
            # with --keep, the baselines' answers are kept too: they do not change with
            # the memory, and full context is the slowest to ask
            kept_file = home / "baselines.json" if args.keep else None
            kept = json.loads(kept_file.read_text("utf-8")) \
                if kept_file and kept_file.exists() else {}
            asks = (run.memory_evidence, run.full_evidence, run.retrieval_evidence) \
                if args.evidence_only else (run.ask_memory, run.ask_full, run.ask_retrieval)
            for method, ask in zip(METHODS, asks, strict=True):
                if method not in args.methods:
                    continue
                for n, (question, row) in enumerate(zip(chosen, rows, strict=True)):
                    known = kept.get(f"{method}|{question['question']}")
                    if known is not None and not args.evidence_only:
                        row[method] = known
                        continue
                    started = time.monotonic()
                    answer, prompt, sources = ask(question["question"])
                    evidence = set(question.get("evidence") or [])
                    shown = None
                    if args.evidence_only:  # what would be shown stands in for the answer
                        shown = locomo.words_shown(answer, str(question.get("answer", "")),
                                                   question["question"])
                        answer = ""
                    row[method] = {"answer": answer, "f1": None if args.evidence_only
                                   else locomo.score(answer, question), "shown": shown,
                                   "prompt": prompt, "seconds": time.monotonic() - started,
                                   "evidence": len(evidence & sources) / len(evidence)
                                   if evidence else None,
                                   **judge(args, question, answer)}
                    if kept_file and method != "memory" and not args.evidence_only:
                        kept[f"{method}|{question['question']}"] = row[method]
                        kept_file.write_text(json.dumps(kept), "utf-8")
                    if args.evidence_only:
                        continue
                    print(f"  {method} {n + 1}. [{locomo.CATEGORIES[row['category']]}] "
                          f"{row['question']} gold={row['gold']!r} -> {answer[:80]!r} "
                          f"F1 {row[method]['f1']:.2f}", file=sys.stderr, flush=True)
            return {"sample": sample["sample_id"], "rows": rows, "seconds": run.seconds,
                    "facts": run.facts}
        finally:
            run.close()


def _mean(values: list[float]) -> float | None:
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def _cell(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _judged(rows: list[dict[str, Any]], method: str, kind: str) -> float | None:
    return _mean([r[method].get(kind) for r in rows])


def _asked(rows: list[dict[str, Any]]) -> list[str]:
    """The methods this run asked (--methods), in the table's order."""
    return [m for m in METHODS if any(m in r for r in rows)]


def evidence_report(results: list[dict[str, Any]]) -> str:
    """--evidence-only: each method's evidence recall by category and overall, and what
    its prompt would cost."""
    rows = [r for result in results for r in result["rows"]]
    categories = sorted({r["category"] for r in rows})
    head = ["evidence recall", *(locomo.CATEGORIES[c] for c in categories), "overall",
            "answer words shown", "prompt tok/q", "recall s (median)"]
    lines = [" | ".join(head), " | ".join("---" for _ in head)]
    overall: dict[str, float | None] = dict.fromkeys(METHODS)
    prompts: dict[str, float | None] = dict.fromkeys(METHODS)
    shown: dict[str, float | None] = dict.fromkeys(METHODS)
    for method in _asked(rows):
        overall[method] = _mean([r[method]["evidence"] for r in rows])
        prompts[method] = _mean([r[method]["prompt"] for r in rows]) or 0.0
        shown[method] = _mean([r[method]["shown"] for r in rows])
        lines.append(" | ".join([method, *(
            _cell(_mean([r[method]["evidence"] for r in rows if r["category"] == c]))
            for c in categories), _cell(overall[method]),
            _cell(shown[method]), f"{prompts[method]:.0f}",
            _cell(statistics.median(r[method]["seconds"] for r in rows) if rows else None, 2)]))
    lines.append(f"LoCoMo evidence recall memory {_cell(overall['memory'])} full-context "
                 f"{_cell(overall['full-context'])} retrieval {_cell(overall['retrieval'])};"
                 f" answer words shown memory {_cell(shown['memory'])} full-context "
                 f"{_cell(shown['full-context'])} retrieval {_cell(shown['retrieval'])};"
                 f" prompt tokens per question memory {_cell(prompts['memory'], 0)}"
                 f" full-context {_cell(prompts['full-context'], 0)} retrieval "
                 f"{_cell(prompts['retrieval'], 0)};"
                 f" questions {len(rows)}; categories {''.join(str(c) for c in categories)}")
    return "\n".join(lines)


def report(results: list[dict[str, Any]]) -> str:
    rows = [r for result in results for r in result["rows"]]
    build = sum(r["seconds"]["build"] for r in results)
    categories = sorted({r["category"] for r in rows})
    asked = _asked(rows)
    judged = any("lenient" in r[m] for r in rows for m in asked)
    head = ["method", *(locomo.CATEGORIES[c] for c in categories), "overall F1",
            *(["judge lenient", "judge strict"] if judged else []), "evidence",
            "prompt tok/q", "build s", "answer s (median)"]
    lines = [" | ".join(head), " | ".join("---" for _ in head)]
    summary: dict[str, dict[str, float | None]] = {
        m: dict.fromkeys(("f1", "prompt", "lenient", "strict")) for m in METHODS}
    for method in asked:
        overall = _mean([r[method]["f1"] for r in rows]) or 0.0
        prompt = _mean([r[method]["prompt"] for r in rows]) or 0.0
        summary[method] = {"f1": overall, "prompt": prompt,
                           "lenient": _judged(rows, method, "lenient"),
                           "strict": _judged(rows, method, "strict")}
        seconds = [r[method]["seconds"] for r in rows]
        lines.append(" | ".join([
            method, *(_cell(_mean([r[method]["f1"] for r in rows if r["category"] == c]))
                      for c in categories), _cell(overall),
            *([_cell(summary[method]["lenient"]), _cell(summary[method]["strict"])]
              if judged else []),
            _cell(_mean([r[method]["evidence"] for r in rows])), f"{prompt:.0f}",
            f"{build:.0f}" if method == "memory" else "0",
            _cell(statistics.median(seconds) if seconds else None, 1)]))
    if judged:  # the judges by category, as the F1 above
        lines += ["", " | ".join(["judge (lenient / strict)",
                                  *(locomo.CATEGORIES[c] for c in categories)]),
                  " | ".join("---" for _ in range(len(categories) + 1))]
        for method in asked:
            lines.append(" | ".join([method, *(
                f"{_cell(_judged([r for r in rows if r['category'] == c], method, 'lenient'))}"
                f" / {_cell(_judged([r for r in rows if r['category'] == c], method, 'strict'))}"
                for c in categories)]))
    counts = ", ".join(f"{r['sample']}: {len(r['rows'])} questions, {r['facts']} facts"
                       for r in results)
    lines.append(f"({counts}; categories {', '.join(str(c) for c in categories)})")
    judges = "" if not judged else "; judge lenient " + " ".join(
        f"{m} {_cell(summary[m]['lenient'])}" for m in METHODS) + "; judge strict " + " ".join(
        f"{m} {_cell(summary[m]['strict'])}" for m in METHODS)
    lines.append(
        f"LoCoMo F1 memory {_cell(summary['memory']['f1'])} full-context "
        f"{_cell(summary['full-context']['f1'])} retrieval {_cell(summary['retrieval']['f1'])}"
        f"{judges}; prompt tokens per question memory {_cell(summary['memory']['prompt'], 0)} "
        f"full-context {_cell(summary['full-context']['prompt'], 0)} retrieval "
        f"{_cell(summary['retrieval']['prompt'], 0)}; questions {len(rows)}; categories "
        f"{''.join(str(c) for c in categories)}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path,
                        default=Path(os.environ.get("TRULYMEM_LOCOMO", DEFAULT_DATA)))
    parser.add_argument("--sample", default="conv-26",
                        help="a sample_id, several with commas, or all")
    parser.add_argument("--questions", type=int, help="at most N questions a conversation")
    parser.add_argument("--adversarial", action="store_true")
    parser.add_argument("--base-url")
    parser.add_argument("--model", default="local")
    parser.add_argument("--context-tokens", type=int, default=12_000,
                        help="full context's budget (the model's window, less the answer)")
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--keep", type=Path, metavar="FOLDER",
                        help="keep each conversation's memory in FOLDER and reuse it next time")
    parser.add_argument("--judge-base-url", help="an OpenAI-compatible endpoint for the judge")
    parser.add_argument("--judge-model", default="local")
    parser.add_argument("--evidence-only", action="store_true",
                        help="no answers: evidence recall and prompt size of every method")
    parser.add_argument("--methods", default=",".join(METHODS),
                        help="which of memory, full-context, retrieval to ask (full context"
                             " takes minutes a question on a small local model)")
    parser.add_argument("--quick", action="store_true",
                        help="an invented conversation and a loopback model (for CI)")
    args = parser.parse_args(argv)
    args.methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    if not args.methods or set(args.methods) - set(METHODS):
        parser.error(f"--methods: some of {', '.join(METHODS)}")
    args.key = os.environ.get("TRULYMEM_API_KEY", "sk-local")
    args.judge_key = os.environ.get("TRULYMEM_JUDGE_KEY", args.key)
    server = None
    if args.quick:
        from core.testing.past_exports import locomo_export

        server = RememberingModel()
        args.base_url, args.model = server.base_url, "local"
        args.judge_base_url = args.judge_base_url and server.base_url
        folder = Path(tempfile.mkdtemp(prefix="locomo-quick-"))
        args.data = folder / "invented.json"
        locomo_export(args.data)
        args.sample = "all"
    if not args.base_url:
        parser.error("--base-url is needed (or --quick)")
    samples = json.loads(args.data.read_text("utf-8"))
    if args.sample != "all":
        wanted = args.sample.split(",")
        samples = [s for s in samples if s["sample_id"] in wanted]
        if len(samples) != len(wanted):
            parser.error(f"not every one of {args.sample} is in {args.data}")
    try:
        results = [run_sample(sample, args) for sample in samples]
    finally:
        if server is not None:
            server.close()
            shutil.rmtree(args.data.parent, ignore_errors=True)
    print(evidence_report(results) if args.evidence_only else report(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
