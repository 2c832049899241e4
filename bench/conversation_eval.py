"""The conversation eval (same as `trulymem --eval`): a scripted conversation, scored.

    python bench/conversation_eval.py [--base-url URL --model NAME]   (key: $TRULYMEM_API_KEY)

Without --base-url it plays against the loopback server's scripted model, in about ten
seconds; against a real endpoint it takes as long as the model does. See core/eval/run.py
for what each figure means.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.eval.run import run_eval

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url")
    parser.add_argument("--model")
    args = parser.parse_args()
    run_eval(args.base_url, args.model, os.environ.get("TRULYMEM_API_KEY"))
