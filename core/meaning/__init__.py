"""Recall by meaning: fact vectors from a multilingual embedding model run offline, kept
current by a background indexer and searched beside the full-text index.

Importing this package loads numpy and the engine's bindings; the dispatcher does it on
the backend thread, when the memory opens."""
