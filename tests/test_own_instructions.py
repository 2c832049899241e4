"""The person's own instructions (Settings, Instructions) reach the model with every turn,
at the end of the system message: followed, unlike stored memories, which stay data."""

from core.config import INSTRUCTIONS_MOST
from core.turn.prompts import system_prompt

OWN = "Answer questions about facts in a few words. Call me Sam."


def test_the_instructions_end_every_turns_system_message_and_are_kept(headless, llm):
    llm.play({"text": "Hello!"}, {"text": "Sam."})
    server, client = headless()
    assert client.process_message("Hi there")["success"]
    plain = llm.requests[-1]["messages"][0]["content"]
    assert OWN not in plain and plain == system_prompt(True, True)  # nothing set: as before

    assert client.update_config(None, instructions=f"  {OWN}\n")["success"]
    assert client.process_message("What do you call me?")["success"]
    system = llm.requests[-1]["messages"][0]
    assert system["role"] == "system" and system["content"].startswith(plain)
    assert system["content"].endswith(OWN)  # last, stripped
    assert OWN not in llm.requests[-1]["messages"][-1]["content"]  # not among the memories
    assert client.get_config()["data"]["instructions"] == OWN
    server.shutdown()

    _server, client = headless()  # kept in the config file
    assert client.get_config()["data"]["instructions"] == OWN


def test_instructions_too_long_are_refused_and_the_old_ones_stay(headless):
    _server, client = headless()
    assert client.update_config(None, instructions="Be brief.")["success"]
    refused = client.update_config(None, instructions="x" * (INSTRUCTIONS_MOST + 1))
    assert not refused["success"]
    assert f"{INSTRUCTIONS_MOST} characters at most" in refused["error"]
    assert client.get_config()["data"]["instructions"] == "Be brief."
    assert not client.update_config(None, instructions=["not", "text"])["success"]
