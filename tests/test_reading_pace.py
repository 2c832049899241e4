"""The evidence a question is shown is what the model reads in a few seconds: measured
from llama-server's own count or from the wait for the first chunk, and applied to the
next question through the real turn, the real openai client and a scripted server."""

from __future__ import annotations

import json

import pytest

from core.paths import database_path
from core.protocol.packets import PacketType
from core.recall import TURN_BUDGET, estimate_tokens
from core.store import GraphStore, conversations
from core.turn.pace import (
    ENDPOINTS_KEPT,
    FLOOR,
    KEPT,
    PACE_FILE,
    READING_SECONDS,
    ReadingPace,
)
from tests.test_recall_evidence import say


def test_no_reading_yet_is_the_whole_budget():
    assert ReadingPace().budget(TURN_BUDGET) == TURN_BUDGET


def test_llama_servers_own_count_sets_the_pace():
    pace = ReadingPace()
    pace.heard({"prompt_tokens": 700}, {"prompt_n": 600, "prompt_ms": 12_000.0}, 12.5)
    assert pace.tokens_per_second() == pytest.approx(50.0)
    assert pace.budget(TURN_BUDGET) == int(50 * READING_SECONDS)


@pytest.mark.parametrize("usage", [
    {"prompt_tokens": 1100, "prompt_tokens_details": {"cached_tokens": 500}},  # OpenAI
    {"prompt_tokens": 1100, "prompt_cache_hit_tokens": 500},  # DeepSeek
])
def test_without_a_count_the_new_tokens_over_the_wait_are_the_pace(usage):
    pace = ReadingPace()
    pace.heard(usage, None, 10.0)  # 600 tokens read in 10 s
    assert pace.tokens_per_second() == pytest.approx(60.0)


def test_a_cloud_model_reads_fast_and_keeps_the_whole_budget():
    pace = ReadingPace()
    pace.heard({"prompt_tokens": 1500}, None, 0.8)
    assert pace.budget(TURN_BUDGET) == TURN_BUDGET


@pytest.mark.parametrize(("usage", "timings", "waited"), [
    ({"prompt_tokens": 40}, None, 5.0),  # too few tokens: latency, not pace
    ({"prompt_tokens": 900, "prompt_cache_hit_tokens": 880}, None, 3.0),  # cached
    ({"prompt_tokens": 900}, None, None),  # no first chunk seen
    ({"prompt_tokens": "many"}, None, 2.0),
    (None, {"prompt_n": 10, "prompt_ms": 900.0}, None),
    (None, {"prompt_n": 600, "prompt_ms": 0}, None),
    (None, {"prompt_n": True, "prompt_ms": 100.0}, None),
    ("not a dict", "nor this", -1.0),
])
def test_a_reading_that_says_nothing_of_the_pace_is_left_out(usage, timings, waited):
    pace = ReadingPace()
    pace.heard(usage, timings, waited)
    assert pace.tokens_per_second() is None


def test_the_pace_is_the_median_of_the_latest_and_the_budget_has_a_floor():
    pace = ReadingPace()
    for rate in (5.0, 50.0, 52.0, 48.0, 2_000.0):  # one stall, one cached burst
        pace.heard(None, {"prompt_n": 1000, "prompt_ms": 1000 * 1000 / rate}, None)
    assert pace.tokens_per_second() == pytest.approx(50.0)
    slow = ReadingPace()
    slow.heard(None, {"prompt_n": 1000, "prompt_ms": 100_000.0}, None)  # 10 tokens a second
    assert slow.budget(TURN_BUDGET) == FLOOR


def _evidence(request: dict) -> int:
    """The estimated tokens of earlier conversations' words a request showed."""
    shown = request["messages"][-1]["content"]
    quoted = shown.split("From earlier conversations", 1)[1].split("</memory_snapshot>")[0]
    return estimate_tokens("\n".join(quoted.splitlines()[1:]))


def read_slowly(tmp_path, headless, llm):
    """An earlier conversation of sixty notes, more than any budget shows, and a first
    question whose reading llama-server counts: 600 tokens in 12 s, 50 a second.
    Answers (server, client, the question's answer)."""
    store = GraphStore(database_path(tmp_path / "home"))
    chat = conversations.create(store)
    for n in range(60):
        say(store, chat, ("user", f"Note {n}: the garden needs water and the roses need "
                                  f"pruning before the frost, item {n}."))
    store.close()
    server, client = headless()
    llm.play({"text": "Water.", "timings": {"prompt_n": 600, "prompt_ms": 12_000.0}})
    return server, client, client.process_message("What does the garden need?")


def test_a_slow_model_is_shown_less_of_the_earlier_conversations_next_time(
        tmp_path, llm, headless):
    _server, client, _answer = read_slowly(tmp_path, headless, llm)
    first = next(r for r in llm.requests if "What does the garden need?" in str(r))
    client.request(PacketType.NEW_CONVERSATION)
    llm.play({"text": "Pruning."})
    client.process_message("What do the roses need?")
    second = next(r for r in llm.requests if "What do the roses need?" in str(r))
    assert _evidence(first) > 50 * READING_SECONDS  # the whole budget, before any reading
    assert 0 < _evidence(second) <= 50 * READING_SECONDS


def _read_at(pace: ReadingPace, rate: float) -> None:
    pace.heard(None, {"prompt_n": 1000, "prompt_ms": 1000 * 1000 / rate}, None)


def test_the_readings_are_kept_for_the_next_start_of_the_same_model_and_endpoint(tmp_path):
    kept = tmp_path / PACE_FILE
    first = ReadingPace(kept, "local @ http://127.0.0.1:8080/v1")
    for rate in (48.0, 50.0, 52.0):
        _read_at(first, rate)
    again = ReadingPace(kept, "local @ http://127.0.0.1:8080/v1")
    assert again.tokens_per_second() == pytest.approx(50.0)
    assert again.budget(TURN_BUDGET) == int(50 * READING_SECONDS)
    # another endpoint's model is not this one, however alike its name
    assert ReadingPace(kept, "local @ https://api.example.com/v1").tokens_per_second() is None
    for rate in range(100, 100 + 2 * KEPT):
        _read_at(again, float(rate))
    assert len(json.loads(kept.read_text())["local @ http://127.0.0.1:8080/v1"]) == KEPT


@pytest.mark.parametrize("text", [
    "{not json", "[1, 2]", '{"m @ e": "fast"}', '{"m @ e": [null, -3, true, "9", 1e999]}',
    '{"m @ e": [' + "9" * 400 + "]}", "[" * 100_000,
    "\u0000" * 3])
def test_a_damaged_pace_file_is_no_reading_and_the_next_one_mends_it(tmp_path, text):
    kept = tmp_path / PACE_FILE
    kept.write_text(text)
    pace = ReadingPace(kept, "m @ e")
    assert pace.tokens_per_second() is None
    _read_at(pace, 40.0)
    assert ReadingPace(kept, "m @ e").tokens_per_second() == pytest.approx(40.0)


def test_the_file_keeps_the_latest_endpoints_only(tmp_path):
    kept = tmp_path / PACE_FILE
    for n in range(ENDPOINTS_KEPT + 5):
        _read_at(ReadingPace(kept, f"m @ e{n}"), 50.0)
    names = list(json.loads(kept.read_text()))
    assert len(names) == ENDPOINTS_KEPT
    assert names[-1] == f"m @ e{ENDPOINTS_KEPT + 4}" and "m @ e0" not in names


def test_a_folder_that_cannot_be_written_leaves_the_pace_in_memory(tmp_path):
    pace = ReadingPace(tmp_path / "missing" / "deeper" / PACE_FILE, "m @ e")
    _read_at(pace, 40.0)
    assert pace.tokens_per_second() == pytest.approx(40.0)


def test_the_first_question_after_a_restart_is_shown_what_the_model_reads_in_time(
        tmp_path, llm, headless):
    server, _client, _answer = read_slowly(tmp_path, headless, llm)
    server.shutdown()
    _server, client = headless()  # the app started again on the same folder
    client.request(PacketType.NEW_CONVERSATION)
    llm.play({"text": "Pruning."})
    client.process_message("What do the roses need?")
    asked = next(r for r in llm.requests if "What do the roses need?" in str(r))
    assert 0 < _evidence(asked) <= 50 * READING_SECONDS


def test_the_turns_record_says_what_recall_showed_and_the_budget_that_cut_it(
        tmp_path, llm, headless):
    """The dock shows why an answer had little to go on: the memories and earlier
    messages shown, their tokens, the budget and the pace that set it, kept with the
    reply in the database and read back."""
    _server, client, answer = read_slowly(tmp_path, headless, llm)
    first = answer["data"]["usage"]["recall"]
    assert first["budget"] == TURN_BUDGET and first["reads_per_second"] == 50
    assert first["turns"] > 0 and 0 < first["tokens"] <= TURN_BUDGET
    client.request(PacketType.NEW_CONVERSATION)
    llm.play({"text": "Pruning."})
    client.process_message("What do the roses need?")
    stored = client.request(PacketType.GET_HISTORY)["data"]["history"][-1]["usage"]
    assert stored["recall"]["budget"] == int(50 * READING_SECONDS)
    assert 0 < stored["recall"]["tokens"] <= stored["recall"]["budget"]
    assert stored["recall"]["turns"] < first["turns"]
