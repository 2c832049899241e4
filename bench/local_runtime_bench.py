"""The app's own runtime against the same model under a `llama-server` started by hand.

    python bench/local_runtime_bench.py [--model ID] [--by-hand URL] [--runs N]
    python bench/local_runtime_bench.py --quick      (CI: nothing to measure without a model)

Starts the catalogue model as the app does (`core.models.local.serve`, with the time from
asking to a healthy server) and asks it the same short chat request `--runs` times,
streamed: time to the first token and to the whole answer, and the server's memory in use
(its resident set). With `--by-hand URL` (a llama-server started by hand on the same model
and threads) the same requests go there too, for comparison. The last line is one summary
a script can read.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import openai

from core.models import local
from core.models.catalogue import DEFAULT, Model, find

SYSTEM = {"role": "system", "content": "You are a helpful assistant. Answer briefly."}
ASKED = ("Name three things to pack for a rainy hike.", "How do I keep basil alive indoors?",
         "What is a good name for a grey cat?", "Suggest a quick dinner with eggs.",
         "How long should I steep green tea?", "Give me one tip for learning the cello.")


def timed(base_url: str, runs: int) -> tuple[list[float], list[float]]:
    client = openai.OpenAI(api_key="sk-local", base_url=base_url, max_retries=0, timeout=600)
    firsts, wholes = [], []
    for run in range(runs):  # a new question each time: the prompt cache reuses only the start
        started = time.perf_counter()
        first = None
        messages = [SYSTEM, {"role": "user", "content": ASKED[run % len(ASKED)]}]
        stream = client.chat.completions.create(model="local", messages=messages,
                                                stream=True, temperature=0, max_tokens=48)
        for chunk in stream:
            if first is None and chunk.choices and chunk.choices[0].delta.content:
                first = time.perf_counter() - started
        wholes.append(time.perf_counter() - started)
        firsts.append(first or wholes[-1])
    return firsts, wholes


def small_model(gguf: Path) -> Model:
    """Any GGUF file as a model of the catalogue, in a models folder of its own."""
    folder = Path(tempfile.mkdtemp())
    (folder / gguf.name).symlink_to(gguf.resolve())
    os.environ["TRULYMEM_MODELS_DIR"] = str(folder)
    model = Model(id="bench-model", name=gguf.name, repo="", file=gguf.name,
                  size=gguf.stat().st_size, sha256="", ram_gb=0.5, licence="", languages="",
                  tools="", measured="")
    local.find = lambda name: model if name == model.id else None  # type: ignore[assignment]
    return model


def resident_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default=DEFAULT)
    parser.add_argument("--by-hand", help="the base URL of a llama-server started by hand")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    model = find(args.model)
    if args.quick and os.environ.get("TRULYMEM_TEST_GGUF"):
        model = small_model(Path(os.environ["TRULYMEM_TEST_GGUF"]))  # CI's real small one
    missing = local.problems(model) if model else [f"no model {args.model}"]
    if missing:
        print(f"local runtime bench: 0 runs, nothing to measure here ({'; '.join(missing)})")
        return 0
    started = time.perf_counter()
    served = local.serve(model.id, Path(tempfile.mkdtemp()))
    ready = time.perf_counter() - started
    if not served["success"]:
        print(f"local runtime bench: {served['error']}")
        return 1
    runs = 1 if args.quick else args.runs
    firsts, wholes = timed(served["data"]["base_url"], runs + 1)  # the first warms the cache
    memory = resident_mb(served["data"]["pid"])  # setpriv became llama-server (exec)
    first, whole = statistics.median(firsts[1:]), statistics.median(wholes[1:])
    line = (f"the app's runtime ({model.id}): ready in {ready:.1f} s; first token median "
            f"{first:.2f} s, whole answer {whole:.2f} s over {runs} runs; server memory "
            f"{memory:.0f} MB")
    print(line)
    summary = f"LOCAL RUNTIME ready {ready:.1f} first {first:.2f} whole {whole:.2f} " \
              f"rss {memory:.0f}"
    if args.by_hand:
        hand_first, hand_whole = timed(args.by_hand, runs + 1)
        print(f"by hand: first token median {statistics.median(hand_first[1:]):.2f} s, "
              f"whole answer {statistics.median(hand_whole[1:]):.2f} s")
        summary += (f" by-hand-first {statistics.median(hand_first[1:]):.2f} "
                    f"by-hand-whole {statistics.median(hand_whole[1:]):.2f}")
    local.stop_all()
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
