"""Misbehaving endpoints: stalls, errors with reasons, redirects, broken text, bad keys."""

from __future__ import annotations

import pytest

from core.config import Config, ConfigError, updated
from core.protocol.packets import PacketType


@pytest.fixture
def client(headless):
    return headless()[1]


def test_the_servers_own_reason_is_shown(client, llm):
    llm.play({"status": 400, "code": "context_length_exceeded",
              "message": "This model's maximum context length is 65536 tokens."})
    result = client.process_message("a very long message")
    assert not result["success"]
    assert "(400: This model's maximum context length is 65536 tokens.)" in result["error"]


def test_a_redirect_is_not_followed_and_says_where_it_pointed(client, llm):
    llm.play({"redirect": "http://127.0.0.2:9/v1/chat/completions"})
    result = client.process_message("where does this go?")
    assert not result["success"]
    assert "redirected to http://127.0.0.2:9/v1/chat/completions" in result["error"]
    assert "was not sent there" in result["error"]
    assert len(llm.requests) == 1


def test_a_rate_limit_is_retried_after_the_servers_retry_after(client, llm):
    llm.play({"status": 429, "headers": {"Retry-After": "0"}}, {"text": "there you go"})
    assert client.process_message("hi")["content"] == "there you go"
    assert len(llm.requests) == 2


def test_the_turn_time_limit_stops_a_turn_keeps_what_arrived_and_says_timeout(client, llm):
    assert client.update_config(None, turn_timeout=0.5)["success"]
    llm.play({"text": "first words, then a very long pause " * 4, "chunk_delay": 0.1})
    result = client.process_message("tell me everything")
    assert not result["success"]
    assert result["error"].startswith("timeout: the turn took longer than 0.5 s")
    history = client.get_history()["history"]
    assert history[-1]["content"].startswith("first words")  # what streamed is kept


def test_a_reply_with_a_lone_surrogate_is_kept(client, llm):
    llm.play({"text": "half a pair: \ud83d and the rest"})
    result = client.process_message("hi")
    assert result["success"], result
    saved = client.get_history()["history"][-1]["content"]
    assert saved == "half a pair: \ufffd and the rest"


@pytest.mark.parametrize("key", ["sk-abc def", "sk-ключ", "sk-\x07bell"])
def test_a_key_an_http_header_cannot_carry_is_refused_plainly(key):
    with pytest.raises(ConfigError, match="HTTP header cannot carry"):
        updated(Config(), api_key=key)


def test_validation_errors_give_the_reason_first(fail):
    assert fail("memory_commit", triplets=[
        {"subject": "a", "relation": "b", "object": "c"}] * 100).endswith(
        "triplets: at most 50 items (got 100)")
    assert fail("memory_commit", triplets=[{"subject": "a", "relation": "b", "object": "c"}],
                entity_types={f"k{i}": "T" for i in range(60)}).endswith(
        "entity_types: at most 50 entries (got 60)")
    assert fail("memory_recall", query_intent="x", scope="everything").endswith(
        "scope: must be one of all, persona, tasks (got 'everything')")


@pytest.mark.slow
def test_what_is_sent_again_fits_a_budget_and_history_keeps_everything(client, llm):
    huge = "log line\n" * 1_000_000  # about 9 MB pasted once
    llm.play({"text": "That is a long log."}, {"text": "Sure."})
    assert client.process_message(huge)["success"]
    assert client.process_message("and now a short question")["success"]
    later = sum(len(str(m.get("content") or "")) for m in llm.requests[-1]["messages"][1:])
    assert later < 30_000  # not the 9 MB again
    shown = client.get_history()["history"][0]["content"]
    assert len(shown) < 250_000 and "more characters not shown" in shown


@pytest.mark.slow
def test_arguments_are_kept_at_a_sane_size_in_history(client, llm):
    junk = "x" * 25_000
    llm.play({"tool_calls": [{"name": "memory_commit", "arguments": junk}]}, {"text": "ok"})
    assert client.process_message("hi")["success"]
    kept = client.get_history()["history"][-1]["tool_calls"][0]["arguments"]
    assert len(kept) < 21_000 and "more characters" in kept


def test_arguments_are_kept_at_a_sane_size_in_the_change_log(store, run):
    triplets = [{"subject": f"s{i}", "relation": "r", "object": "o" * 1000} for i in range(50)]
    run("memory_commit", triplets=triplets)
    stored = store.query_one("SELECT arguments FROM change_log")["arguments"]
    assert len(stored) < 25_000 and "characters, the first" in stored


SECRET = "sk-live-Zq81kD0mPp3xYw7RtVb2Nc5H"


@pytest.mark.parametrize("answer", [
    {"status": 401, "message": f"Incorrect API key provided: {SECRET}. You can find yours…"},
    {"status": 400, "message": f"bad header Authorization: Bearer {SECRET}"}])
def test_a_key_the_endpoint_echoes_is_never_shown_or_stored(headless, llm, answer):
    server, client = headless(api_key=SECRET)
    llm.play(answer)
    reply = client.process_message("hello")
    assert not reply["success"] and reply["code"] == "endpoint"
    assert SECRET not in reply["error"] and SECRET[8:20] not in reply["error"]
    assert "…" in reply["error"]  # the server's words stay, with the key cut out
    stored = server.backend.store.query("SELECT error FROM messages")
    assert stored and all(SECRET not in (row["error"] or "") for row in stored)
    exported = client.request(PacketType.EXPORT_CONVERSATION)["data"]["markdown"]
    assert SECRET not in exported


def test_key_shaped_words_are_scrubbed_and_ordinary_words_kept():
    from core.redaction import scrub

    assert scrub("key sk-proj-abcdef123456 was wrong") == "key sk-… was wrong"
    assert scrub("Authorization: Bearer tok.en-123") == "Authorization: Bearer …"
    assert scrub("given 4f1c2a9b8e7d6c5b4a3f2e1d0c9b8a7f6e5d") == "given …"
    assert scrub("model 'llama3.1' not found", "other-key") == "model 'llama3.1' not found"
