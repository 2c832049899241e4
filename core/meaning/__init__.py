"""Recall by meaning: fact vectors from a multilingual embedding model run offline, kept
current by a background indexer and searched beside the full-text index.

Importing this package loads numpy and the engine's bindings; the backend does it on
the backend thread, when the memory opens."""

import os

# One thread for every OpenMP loop in the process (the engine's and the index's, which
# share one OpenMP runtime; it reads this once, when the first of them loads). With two, a
# query's embedding took 180 ms at p99 once another program kept the second core busy,
# against 20 ms with one (bench/store_bench.py). The index build asks for two explicitly.
os.environ["OMP_NUM_THREADS"] = "1"
