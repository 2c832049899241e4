"""One chat turn: the streaming tool loop, the memory snapshot, the prompts."""
