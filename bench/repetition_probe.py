"""Do a server's repetition controls keep a small local model from looping?

    python bench/repetition_probe.py --base-url http://127.0.0.1:8766/v1 [--runs 3]

Sends the eval conversation's statements the way the tool loop does (the compact
instructions and tools, streamed) to a local OpenAI-compatible server, once with no
repetition control, once with `frequency_penalty` (OpenAI's parameter) and once with
llama.cpp's `repeat_penalty`, each at the app's local temperature and token cap, and
prints for each setting how many replies looped (the app's own `repetition_start`), how
many came as tool calls, and the tokens and seconds they took.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from openai import OpenAI  # noqa: E402

from core.eval.conversation import TURNS  # noqa: E402
from core.tools.schemas import openai_tools  # noqa: E402
from core.turn.prompts import system_prompt, turn_message  # noqa: E402
from core.turn.repetition import repetition_start  # noqa: E402

SETTINGS = {
    "none": {},
    "frequency_penalty 0.5": {"frequency_penalty": 0.5},
    "repeat_penalty 1.15": {"extra_body": {"repeat_penalty": 1.15}},
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", default="http://127.0.0.1:8766/v1")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--max-tokens", type=int, default=1024)
    args = parser.parse_args()
    client = OpenAI(base_url=args.base_url, api_key="sk-local", timeout=900)
    statements = [turn.text for turn in TURNS if not turn.answer_words]
    print(f"{len(statements)} statements × {args.runs} runs per setting, "
          f"max_tokens {args.max_tokens}")
    print(f"{'setting':<24} {'looped':>7} {'calls':>6} {'tokens p50':>11} {'max':>6}"
          f" {'s p50':>6} {'s max':>6}")
    for name, extra in SETTINGS.items():
        looped = calls = 0
        tokens, seconds = [], []
        for _ in range(args.runs):
            for text in statements:
                started = time.perf_counter()
                reply = client.chat.completions.create(
                    model="local", temperature=0.3, max_tokens=args.max_tokens,
                    tools=openai_tools("compact"), **extra,
                    messages=[{"role": "system", "content": system_prompt(compact=True)},
                              {"role": "user", "content": turn_message("(empty)", text)}])
                seconds.append(time.perf_counter() - started)
                message = reply.choices[0].message
                tokens.append(reply.usage.completion_tokens if reply.usage else 0)
                calls += bool(message.tool_calls)
                looped += repetition_start(message.content or "") is not None
        print(f"{name:<24} {looped:>7} {calls:>6} {statistics.median(tokens):>11.0f}"
              f" {max(tokens):>6} {statistics.median(seconds):>6.1f} {max(seconds):>6.1f}")


if __name__ == "__main__":
    main()
