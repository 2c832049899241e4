"""Play the eval's conversation against an endpoint and score what it left behind.

    trulymem --eval [--base-url URL --model NAME]   (the key: $TRULYMEM_API_KEY)

Without --base-url it plays against the loopback server with a scripted model (what CI
runs). The memory is scored on the facts expected at the end, wrong or duplicated facts,
replacements and forgets done, the tasks and their states, and answers containing the
expected words; the cost on round trips, prompt tokens, how much of each prompt repeats
the previous request from its start (what a prefix cache can reuse: computed from the
requests themselves, and the server's own count where it reports one), refusals and the
time each turn took. Everything runs in a temporary data folder; your memory is never
touched.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.config import Config, save_config
from core.endpoint import profiles
from core.eval.conversation import (
    FACTS,
    FORGOTTEN,
    PERSON,
    STALE,
    SUPERSEDED,
    TASKS,
    TURNS,
    ScriptedModel,
)
from core.eval.recorder import RecordingProxy
from core.eval.tokens import counted_with, token_count
from core.events import Event
from core.models import local
from core.protocol.client import BackendClient
from core.protocol.server import BackendServer
from core.store import GraphStore
from core.testing.loopback_llm import ScriptedOpenAIServer, rendered_prompt, shared_prefix
from core.tools import TOOL_NAMES
from core.turn.text_calls import read_reply
from core.writer import grounding

TARGETS = {"overhead_core": 1500, "overhead_compact": 800, "prefix_share": 0.85,
           "round_trips": 4}


def _endpoint_config(home: Path, base_url: str, proxy_url: str, *, model: str | None,
                     api_key: str | None, writer: str) -> str:
    """The throwaway folder's settings, as a person would set them for this endpoint;
    answers the tool set. The temperature is left unset, as a person leaves it: the turn
    then chats at 0.3 with a local server and answers a question of fact at 0 (a saved
    0.3 had the eval answer every question at 0.3, unlike the app)."""
    tool_set = profiles.tool_set("auto", base_url, "")
    local = profiles.is_local(base_url)
    save_config(home / "config.json", Config(
        api_key=api_key or "", base_url=proxy_url, model=model or "",
        tool_set=tool_set, temperature=None,
        first_token_timeout=600.0 if local else 120.0,
        request_timeout=120.0 if local else 60.0,
        turn_timeout=1800.0 if local else 300.0, memory_writer=writer))
    return tool_set


def served_endpoint(base_url: str, model: str | None,
                    api_key: str | None) -> tuple[str, str | None]:
    """`local` (the app's own runtime) as the address of its running server, as the
    window starts it; any other address as it is."""
    if not local.is_own(base_url):
        return base_url, api_key
    served = local.serve(model or "", Path(tempfile.gettempdir()) / "trulymem-eval-logs")
    if not served["success"]:
        raise SystemExit(f"trulymem: {served['error']}")
    return served["data"]["base_url"], api_key or local.LOCAL


def run_eval(base_url: str | None = None, model: str | None = None,
             api_key: str | None = None, say: Callable[[str], None] = print, *,
             writer: str = "auto", requests_file: str | None = None) -> dict[str, Any]:
    """Play, score and report; answers the figures as data. `requests_file`: every
    request as it went out, with the server's usage, one JSON object a line (to see
    what a model was shown when it answered wrong)."""
    scripted = None
    if base_url is None:
        scripted = ScriptedOpenAIServer()
        scripted.cache_usage = True
        for steps in ScriptedModel().steps:
            scripted.play(*steps)
        base_url, model, api_key = scripted.base_url, "scripted-model", "sk-eval-scripted"
    else:
        base_url, api_key = served_endpoint(base_url, model, api_key)
    proxy = RecordingProxy(base_url)
    try:
        with tempfile.TemporaryDirectory(prefix="trulymem-eval-") as folder:
            home = Path(folder)
            tool_set = _endpoint_config(home, base_url, proxy.base_url, model=model,
                                        api_key=api_key, writer=writer)
            turns = _play(home, say)
            store = GraphStore(home / "graph_memory.db", read_only="the eval only reads")
            try:
                memory = score_memory(store)
            finally:
                store.close()
        cost = score_cost(proxy.records, turns)
        if requests_file:
            with open(requests_file, "w", encoding="utf-8") as out:
                out.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in proxy.records)
    finally:
        proxy.close()
        if scripted is not None:
            scripted.close()
    report = {"endpoint": "scripted loopback model" if scripted else base_url,
              "model": model, "tool_set": tool_set,
              "writer": profiles.memory_writer(writer, base_url, model or ""),
              "memory": memory, "cost": cost,
              "answers": _answers(turns), "turns": turns}
    say(describe(report))
    return report


def _play(home: Path, say: Callable[[str], None], turns: Any = TURNS
          ) -> list[dict[str, Any]]:
    first_text: list[float] = []  # when the turn's first reply text reached the person
    written: list[dict[str, Any]] = []  # what the memory-writing step did after the answer
    written_now = threading.Event()

    def progress(kind: str, data: dict[str, Any]) -> None:
        if kind == "text" and not first_text:
            first_text.append(time.perf_counter())
        if kind == Event.MEMORY_WRITTEN:
            written.append(data)
            written_now.set()

    def start() -> tuple[BackendServer, BackendClient]:
        """As the window runs it: the answer first, the memory writing after it."""
        server = BackendServer(home=home, progress=progress)
        server.backend.write_memory_after_answer = True
        server.backend.settings.use_keychain = False  # a throwaway folder: the key stays in it
        server.start()
        return server, BackendClient(server)

    server, client = start()
    played = []
    try:
        for n, turn in enumerate(turns, 1):
            if turn.restart:
                server.shutdown()
                server, client = start()
            first_text.clear()
            written.clear()
            written_now.clear()
            started = time.perf_counter()
            answer = client.process_message(turn.text)
            seconds = time.perf_counter() - started
            if answer.get("memory_pending"):  # the person reads; the memory is written
                written_now.wait(server.backend.config.turn_timeout)
            later = [c["name"] for w in written for c in w.get("tool_calls") or []]
            rejected = answer.get("rejected_tools") or []
            played.append({
                "turn": n, "text": turn.text, "reply": answer.get("content") or "",
                "error": answer.get("error"), "seconds": round(seconds, 2),
                "round_trips": answer.get("round_trips", 0),
                "tools": [c["name"] for c in answer.get("tool_calls") or []] + later,
                "calls": [(c["name"], c.get("arguments"),
                           str(c.get("result") or c.get("error"))[:300])
                          for w in written for c in w.get("tool_calls") or []],
                "refused": len(rejected),
                "repeats": (answer.get("refused_why") or []).count("repeat"),
                "calls_in_text": answer.get("calls_in_text", 0),
                "rescued": answer.get("rescued", 0),
                "asked_again": answer.get("parroted", 0),
                "first_text": round(first_text[0] - started, 2) if first_text else None,
                "call_shown": bool(read_reply(answer.get("content") or "", set(TOOL_NAMES))
                                   .calls),
                "restart": turn.restart, "answer_words": list(turn.answer_words)})
            say(f"turn {n:2}: {seconds:6.1f} s, {played[-1]['round_trips']} round trips, "
                f"tools {', '.join(played[-1]['tools']) or '-'}"
                + (f", error: {answer['error']}" if answer.get("error") else ""))
    finally:
        server.shutdown()
    return played


def score_memory(store: GraphStore) -> dict[str, Any]:
    edges = store.query(
        "SELECT e.status, s.name AS subject, e.relation, t.name AS object, e.source_id,"
        " e.target_id FROM edges e JOIN nodes s ON s.id = e.source_id JOIN nodes t ON"
        " t.id = e.target_id WHERE e.category = 'general'")
    active = [e for e in edges if e["status"] == "active"]

    def text(edge: dict[str, Any]) -> str:
        return f"{edge['subject']} {edge['relation']} {edge['object']}".lower()

    def about_person(edge: dict[str, Any]) -> bool:
        return edge["subject"].lower() in PERSON or edge["object"].lower() in PERSON

    stored = {f.label: any(all(w in text(e) for w in f.words)
                           and (about_person(e) or not f.about_person) for e in active)
              for f in FACTS}
    replaced = {f"{old} -> {new}": (
        any(old.lower() in e["object"].lower() and e["status"] == "superseded" for e in edges)
        and any(new.lower() in e["object"].lower() for e in active)
        and not any(old.lower() in e["object"].lower() for e in active))
        for old, new in SUPERSEDED}
    forgotten = {word: not any(word in text(e) for e in active) for word in FORGOTTEN}
    said = grounding.said_text([t.text for t in TURNS])
    unsaid = [text(e) for e in active
              if not (grounding.grounded(e["subject"], said)
                      and grounding.grounded(e["object"], said))]
    wrong = [text(e) for e in active if any(word in text(e) for word in STALE)]
    pairs: dict[tuple[int, int], int] = {}
    for edge in active:
        key = (edge["source_id"], edge["target_id"])
        pairs[key] = pairs.get(key, 0) + 1
    tasks = store.query("SELECT name, description, state FROM nodes WHERE kind = 'task'"
                        " AND deleted_at IS NULL")
    task_scores = {}
    for word, state in TASKS:
        found = [t for t in tasks if word in f"{t['name']} {t['description']}".lower()]
        task_scores[word] = bool(found) and (state is None or found[0]["state"] == state)
    return {"facts_stored": sum(stored.values()), "facts_expected": len(FACTS),
            "facts": stored, "wrong_facts": wrong, "unsaid_facts": unsaid,
            "duplicates": sum(n - 1 for n in pairs.values() if n > 1),
            "replaced": replaced, "forgotten": forgotten, "tasks": task_scores,
            "active_facts": len(active)}


def score_cost(records: list[dict[str, Any]], turns: list[dict[str, Any]]) -> dict[str, Any]:
    """Figures per request from the requests as they went out."""
    requests = [r for r in records if "messages" in r["body"]]
    rows, previous = [], {}  # the last prompt of each kind (its instructions): the chat's
    # and the extraction step's requests alternate, and a server caches each in a slot
    for record in requests:
        prompt = rendered_prompt(record["body"])
        kind = str((record["body"].get("messages") or [{}])[0].get("content"))[:200]
        tokens = token_count(prompt)
        before = previous.get(kind, "")
        shared = token_count(prompt[:shared_prefix(before, prompt)]) if before else 0
        usage = record["usage"] or {}
        cached = usage.get("prompt_cache_hit_tokens", (usage.get("prompt_tokens_details")
                                                       or {}).get("cached_tokens"))
        rows.append({"tokens": tokens, "shared": shared, "server_prompt_tokens":
                     usage.get("prompt_tokens"), "server_cached": cached,
                     "first_of_kind": not before})
        previous[kind] = prompt
    first = requests[0]["body"] if requests else {"messages": [{"content": ""}], "tools": []}
    overhead = token_count(first["messages"][0]["content"]) + token_count(
        json.dumps(first.get("tools") or [], ensure_ascii=False, separators=(",", ":")))
    # Ordinary requests: not the first of the run, nor the first after the restart (the
    # server's cache may survive a restart of the app, but nothing promises it).
    restart_at = sum(t["round_trips"] for t in turns if not t["restart"]
                     and t["turn"] < next((u["turn"] for u in turns if u["restart"]), 10**6))
    ordinary = [r["shared"] / r["tokens"] for i, r in enumerate(rows)
                if i not in (0, restart_at) and r["tokens"] and not r["first_of_kind"]]
    cached = [r["server_cached"] for r in rows if r["server_cached"] is not None]
    return {"requests": len(rows), "prompt_tokens": sum(r["tokens"] for r in rows),
            "overhead_tokens": overhead, "tokens_counted_with": counted_with(),
            "prefix_share_median": statistics.median(ordinary) if ordinary else 0.0,
            "prefix_share_mean": statistics.fmean(ordinary) if ordinary else 0.0,
            "server_cached_tokens": sum(cached) if cached else None,
            "server_prompt_tokens": sum(r["server_prompt_tokens"] or 0 for r in rows),
            "max_round_trips": max((t["round_trips"] for t in turns), default=0),
            "round_trips": sum(t["round_trips"] for t in turns),
            "refused": sum(t["refused"] for t in turns),
            "repeats": sum(t["repeats"] for t in turns),
            "calls_in_text": sum(t["calls_in_text"] for t in turns),
            "rescued": sum(t["rescued"] for t in turns),
            "calls_shown": sum(t["call_shown"] for t in turns),
            "no_answer": sum(not t["reply"].strip() or bool(t["error"]) for t in turns),
            "seconds": [t["seconds"] for t in turns],
            "first_text": [t["first_text"] for t in turns if t["first_text"] is not None],
            "per_request": rows}


def _answers(turns: list[dict[str, Any]]) -> dict[str, Any]:
    asked = [t for t in turns if t["answer_words"]]
    good = [t for t in asked
            if all(w.lower() in t["reply"].lower() for w in t["answer_words"])]
    return {"right": len(good), "asked": len(asked),
            "missed": [t["text"] for t in asked if t not in good],
            "replies": {t["text"]: " ".join(t["reply"].split())[:120] for t in asked
                        if t not in good}}


def describe(report: dict[str, Any]) -> str:
    memory, cost, answers = report["memory"], report["cost"], report["answers"]
    seconds, first = cost["seconds"], cost["first_text"]
    target = TARGETS["overhead_compact" if report["tool_set"] == "compact"
                     else "overhead_core"]
    lines = [
        f"Endpoint: {report['endpoint']} · model {report['model']} · tool set "
        f"{report['tool_set']} · memory written by "
        f"{'tool calls' if report['writer'] == 'tools' else 'the extraction step'}",
        f"Memory: {memory['facts_stored']}/{memory['facts_expected']} expected facts "
        f"stored; {len(memory['wrong_facts'])} wrong; {len(memory['unsaid_facts'])} the "
        f"person did not say; {memory['duplicates']} duplicated; "
        f"{memory['active_facts']} active facts in all",
        "  missing: " + (", ".join(k for k, v in memory["facts"].items() if not v) or "none"),
        "  not said: " + ("; ".join(memory["unsaid_facts"]) or "none"),
        "  wrong: " + ("; ".join(memory["wrong_facts"]) or "none"),
        "  replaced: " + ", ".join(f"{k} {'yes' if v else 'NO'}"
                                   for k, v in memory["replaced"].items()),
        "  forgotten: " + ", ".join(f"{k} {'yes' if v else 'NO'}"
                                    for k, v in memory["forgotten"].items()),
        "  tasks: " + ", ".join(f"{k} {'yes' if v else 'NO'}"
                                for k, v in memory["tasks"].items()),
        f"Answers: {answers['right']}/{answers['asked']} contain the expected words"
        + (f" (missed: {'; '.join(answers['missed'])})" if answers["missed"] else ""),
        *(f"  {asked} → {reply}" for asked, reply in answers.get("replies", {}).items()),
        f"Cost: {cost['requests']} requests, {cost['round_trips']} round trips (most in one "
        f"turn: {cost['max_round_trips']}, target <= {TARGETS['round_trips']}), "
        f"{cost['prompt_tokens']:,} prompt tokens ({cost['tokens_counted_with']})",
        f"  instructions + tools: {cost['overhead_tokens']:,} tokens (target <= {target})",
        f"  prompt repeating the previous request from its start: median "
        f"{cost['prefix_share_median']:.0%}, mean {cost['prefix_share_mean']:.0%} "
        f"(target >= {TARGETS['prefix_share']:.0%})",
        "  server's cache hits: " + (f"{cost['server_cached_tokens']:,} of "
                                     f"{cost['server_prompt_tokens']:,} prompt tokens"
                                     if cost["server_cached_tokens"] is not None
                                     else "not reported"),
        f"  refused calls {cost['refused']}, identical repeats {cost['repeats']}, calls "
        f"written as text {cost['calls_in_text']}, answers made by the app when the model "
        f"would only call {cost['rescued']}",
        f"  turns without an answer {cost['no_answer']}, replies that were calls shown "
        f"{cost['calls_shown']}",
        f"  seconds per turn: median {statistics.median(seconds):.1f}, max "
        f"{max(seconds):.1f}" if seconds else "",
        f"  seconds to the first text: median {statistics.median(first):.1f}, max "
        f"{max(first):.1f}" if first else "",
    ]
    return "\n".join(line for line in lines if line)
