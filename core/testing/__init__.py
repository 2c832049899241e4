"""Test support that ships with the app: the loopback OpenAI-compatible server."""
