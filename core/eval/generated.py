"""Play generated conversations (`core.eval.generator`) against an endpoint and score them
by kind, for fixed seeds (regressions) and fresh ones (the truth), with the gap between.

    trulymem --eval --conversations N [--seed S] [--fresh M] [--base-url URL --model NAME]

Without --base-url each conversation plays against the loopback server with the scripted
small model of `core.eval.scripted`, which makes the mistakes real small models made.
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.eval.generator import generate
from core.eval.recorder import RecordingProxy
from core.eval.run import _endpoint_config, _play, score_cost, served_endpoint
from core.eval.scoring import WRONG_KINDS, score_conversation
from core.eval.scripted import steps
from core.store import GraphStore
from core.testing.loopback_llm import ScriptedOpenAIServer


@dataclass(frozen=True)
class Endpoint:
    """Where to play: None is the loopback server with the scripted small model."""

    base_url: str | None = None
    model: str | None = None
    api_key: str | None = None
    writer: str = "auto"


TARGETS = {"facts": 0.90, "wrong_each": 0.02, "forgets": 0.95, "answers": 0.80,
           "gap": 0.05}


def play_one(seed: int, endpoint: Endpoint, say: Callable[[str], None]) -> dict[str, Any]:
    """One conversation of `seed`, played and scored."""
    conversation = generate(seed)
    base_url, model, api_key, writer = (endpoint.base_url, endpoint.model, endpoint.api_key,
                                        endpoint.writer)
    scripted = None
    if base_url is None:
        scripted = ScriptedOpenAIServer()
        for turn_steps in steps(conversation):
            scripted.play(*turn_steps)
        base_url, model, api_key = scripted.base_url, "local-model", "sk-eval-scripted"
        writer = "extract"
    else:
        base_url, api_key = served_endpoint(base_url, model, api_key)
    proxy = RecordingProxy(base_url)
    try:
        with tempfile.TemporaryDirectory(prefix="trulymem-eval-") as folder:
            home = Path(folder)
            _endpoint_config(home, base_url, proxy.base_url, model=model, api_key=api_key,
                             writer=writer)
            played = _play(home, lambda _line: None, conversation.turns)
            store = GraphStore(home / "graph_memory.db", read_only="the eval only reads")
            try:
                score = score_conversation(store, conversation, played)
            finally:
                store.close()
        score["prefix_share"] = score_cost(proxy.records, played)["prefix_share_median"]
    finally:
        proxy.close()
        if scripted is not None:
            scripted.close()
    score["seed"], score["language"] = seed, conversation.language
    score["played"] = played
    say(describe_one(score))
    return score


def total(scores: list[dict[str, Any]]) -> dict[str, Any]:
    """The scores of many conversations as rates."""
    stored = sum(s["stored"] for s in scores) or 1
    seconds = [x for s in scores for x in s["seconds"]]
    first = [x for s in scores for x in s["first_text"]]
    forgets = sum(s["forgets"] for s in scores) or 1
    return {
        "conversations": len(scores),
        "facts": sum(s["facts_present"] for s in scores) / max(
            1, sum(s["facts_expected"] for s in scores)),
        "wrong": {k: sum(s["wrong"][k] for s in scores) / stored for k in WRONG_KINDS},
        "destroyed": sum(s["destroyed"] for s in scores),
        "forgets": sum(s["forgets_applied"] for s in scores) / forgets,
        "answers": sum(s["answers_right"] for s in scores) / max(
            1, sum(s["answers_asked"] for s in scores)),
        "parroted": sum(len(s["parroted"]) for s in scores),
        "asked_again": sum(s["asked_again"] for s in scores),
        "turns": sum(len(s["seconds"]) for s in scores),
        "unanswered": sum(s["unanswered"] for s in scores),
        "median_seconds": statistics.median(seconds) if seconds else 0.0,
        "median_first_text": statistics.median(first) if first else 0.0,
        "prefix_share": statistics.median([s["prefix_share"] for s in scores])
        if scores else 0.0,
    }


def run_generated(count: int, seed: int | None = None, fresh: int = 0,
                  endpoint: Endpoint | None = None, say: Callable[[str], None] = print
                  ) -> dict[str, Any]:
    """`count` conversations from `seed` on (fixed), then `fresh` from seeds nobody chose
    (printed, to play one again); the totals of each and the gap."""
    fixed_seeds = list(range(seed if seed is not None else 1, (seed or 1) + count))
    drawn = random.Random(time.time_ns())
    fresh_seeds = [drawn.randrange(10**6, 10**9) for _ in range(fresh)]
    report: dict[str, Any] = {}
    for label, seeds in (("fixed", fixed_seeds), ("fresh", fresh_seeds)):
        if not seeds:
            continue
        say(f"{label} seeds: {', '.join(map(str, seeds))}")
        scores = [play_one(s, endpoint or Endpoint(), say) for s in seeds]
        report[label] = {"seeds": seeds, "total": total(scores), "scores": scores}
        say(describe_total(label, report[label]["total"]))
    if "fixed" in report and "fresh" in report:
        report["gap"] = {k: report["fixed"]["total"][k] - report["fresh"]["total"][k]
                         for k in ("facts", "forgets", "answers")}
        say("gap (fixed − fresh): " + ", ".join(
            f"{k} {v * 100:+.1f} points" for k, v in report["gap"].items()))
    return report


def describe_one(score: dict[str, Any]) -> str:
    wrong = ", ".join(f"{k} {v}" for k, v in score["wrong"].items() if v) or "none"
    lines = [f"seed {score['seed']} ({score['language']}): facts {score['facts_present']}/"
             f"{score['facts_expected']}, wrong: {wrong}, destroyed {score['destroyed']}, "
             f"forgets {score['forgets_applied']}/{score['forgets']}, answers "
             f"{score['answers_right']}/{score['answers_asked']}, parroted "
             f"{len(score['parroted'])}, median turn "
             f"{statistics.median(score['seconds']) if score['seconds'] else 0:.1f} s"]
    missing = [k for k, v in score["facts"].items() if not v]
    if missing:
        lines.append("  missing: " + ", ".join(missing))
    for kind, rows in score["wrong_lines"].items():
        if rows:
            lines.append(f"  {kind}: " + "; ".join(rows[:4]))
    if score["destroyed_facts"]:
        lines.append("  destroyed: " + ", ".join(score["destroyed_facts"]))
    played = {t["turn"]: t for t in score.get("played", [])}
    for n in score["parroted"]:
        lines.append(f"  parroted at turn {n}: {played[n]['text'][:60]!r} → "
                     f"{' '.join(played[n]['reply'].split())[:60]!r}")
    for n, groups in score.get("missed", []):
        lines.append(f"  not answered at turn {n}: {played[n]['text'][:50]!r} → "
                     f"{' '.join(played[n]['reply'].split())[:70]!r} (wanted {groups})")
    return "\n".join(lines)


def describe_total(label: str, t: dict[str, Any]) -> str:
    wrong = ", ".join(f"{k} {v:.1%}" for k, v in t["wrong"].items())
    return "\n".join([
        f"{label}: {t['conversations']} conversations, {t['turns']} turns",
        f"  facts present {t['facts']:.1%} (target >= {TARGETS['facts']:.0%}); wrong of "
        f"the facts stored: {wrong} (each <= {TARGETS['wrong_each']:.0%})",
        f"  true facts destroyed {t['destroyed']} (target 0); forgets applied "
        f"{t['forgets']:.1%} (>= {TARGETS['forgets']:.0%}); answers {t['answers']:.1%} "
        f"(>= {TARGETS['answers']:.0%})",
        f"  parroted replies {t['parroted']} (target 0; {t['asked_again']} caught and "
        f"asked again); turns without an answer "
        f"{t['unanswered']}; median turn {t['median_seconds']:.1f} s, first text "
        f"{t['median_first_text']:.1f} s; prefix reuse {t['prefix_share']:.0%}",
    ])
