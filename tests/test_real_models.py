"""What real models and servers did to the memory, each replayed through the loopback
server: a prompt that defeated caching, a snapshot that missed the person, tool loops,
maintenance run unprompted, errors that lost their words, calls that came as text, and
local servers that keep a dead request alive with keep-alives."""

from __future__ import annotations

import itertools

import pytest

from core.endpoint import profiles
from core.testing.loopback_llm import rendered_prompt, shared_prefix
from core.tools.schemas import CORE_TOOLS


def commit(*triplets):
    return {"name": "memory_commit", "arguments": {"triplets": [
        {"subject": s, "relation": r, "object": o} for s, r, o in triplets]}}


@pytest.fixture
def backend(headless):
    def start(**config):
        client = headless()[1]
        if config:
            assert client.update_config(None, **config)["success"]
        return client

    return start


def test_each_request_repeats_the_previous_one_from_its_start(backend, llm):
    """The instructions and tools come first and never change; the snapshot and the date
    travel in the newest message. So within a turn every request extends the previous
    one, and across turns they share all but the last exchange."""
    client = backend()
    llm.play({"tool_calls": [commit(("I", "live in", "Hangzhou"))]}, {"text": "Noted."},
             {"text": "Hello again."}, {"text": "Sure."})
    for text in ("I live in Hangzhou", "hi", "tell me a joke"):
        assert client.process_message(text)["success"]
    prompts = [rendered_prompt(r) for r in llm.requests]
    assert prompts[1].startswith(prompts[0][:prompts[0].rindex('{"content"')])
    assert llm.requests[0]["messages"][0] == llm.requests[3]["messages"][0]  # byte-identical
    assert llm.requests[0]["tools"] == llm.requests[3]["tools"]
    for before, after in itertools.pairwise(prompts[1:]):
        # everything up to the previous user message is reused
        assert shared_prefix(before, after) > 0.7 * len(before)
    newest = llm.requests[3]["messages"][-1]["content"]
    assert "<memory_snapshot date=" in newest and newest.endswith(
        "tell me a joke\n(Reply to this in English.)")
    assert "<memory_snapshot" not in llm.requests[3]["messages"][0]["content"]


def test_the_snapshot_always_carries_the_persons_core_facts(backend, llm):
    client = backend()
    llm.play({"tool_calls": [commit(("me", "is allergic to", "peanuts"),
                                    ("我", "的宠物叫", "旺财"), ("User", "name is", "Anna"),
                                    ("Anna", "works as", "teacher"))]},
             {"text": "Noted."}, {"text": "…"})
    assert client.process_message("I'm Anna, a teacher; allergic to peanuts; 我的狗叫旺财")[
        "success"]
    assert client.process_message("Do I have any food allergies?")["success"]
    # the window's first message had the whole snapshot; this one its changes
    seen = "\n".join(m["content"] for m in llm.requests[-1]["messages"] if m["role"] == "user")
    for fact in ("User -is allergic to-> peanuts", "User -的宠物叫-> 旺财",
                 "User -name is-> Anna", "Anna -works as-> teacher"):
        assert fact in seen.split("Changes since the snapshot above:")[1]
    rules = llm.requests[-1]["messages"][0]["content"]
    assert "snapshot does not answer" in rules and "memory_recall" in rules


def test_ordinary_turns_offer_the_core_tools_and_maintenance_waits_to_be_asked(backend, llm):
    client = backend(tool_set="core")
    llm.play({"tool_calls": [{"name": "memory_archive", "arguments": {"days": 1}}]},
             {"text": "Here is what I know."},
             {"tool_calls": [{"name": "memory_archive", "arguments": {"days": 1}}]},
             {"text": "Archived."})
    result = client.process_message("What do you remember about me?")
    names = {t["function"]["name"] for t in llm.requests[0]["tools"]}
    assert names == set(CORE_TOOLS) and "memory_archive" not in names
    assert "not offered in this turn" in result["rejected_tools"][0][1]
    result = client.process_message("Please archive the old memories")
    assert "memory_archive" in {t["function"]["name"] for t in llm.requests[2]["tools"]}
    assert result["tool_calls"][0]["name"] == "memory_archive"


def test_local_servers_get_the_compact_set_and_a_low_temperature():
    assert profiles.tool_set("auto", "http://127.0.0.1:8080/v1", "hi") == "compact"
    assert profiles.tool_set("auto", "http://192.168.1.20:11434/v1", "hi") == "compact"
    assert profiles.tool_set("auto", "https://api.deepseek.com", "hi") == "core"
    assert profiles.tool_set("auto", "https://api.deepseek.com", "清理一下旧记忆") == "full"
    assert profiles.tool_set("core", "https://api.deepseek.com", "is that clear?") == "core"
    assert profiles.temperature(None, "http://localhost:1234/v1") == profiles.LOCAL_TEMPERATURE
    assert profiles.temperature(None, "https://api.openai.com/v1") is None
    assert profiles.temperature(0.9, "http://localhost:1234/v1") == 0.9


def test_a_repeated_call_is_not_run_again_and_the_model_is_made_to_answer(backend, llm,
                                                                         tmp_path):
    client = backend()
    same = commit(("User", "likes", "tea"))
    llm.play(*[{"tool_calls": [same]}] * 3, {"text": "Noted: tea."})
    result = client.process_message("I like tea")
    # Told to answer, the model called once more: that call did not run, and the turn
    # ended with an answer made from what it did, without a fourth request.
    assert result["success"] and result["content"] == "Got it, I've noted that."
    assert result["rescued"] == 1 and len(llm.requests) == 3
    assert len(result["tool_calls"]) == 1  # run once; the repeats were not run
    assert result["rejected_tools"][0][1].startswith("Not run: this exact memory_commit")
    choices = [r.get("tool_choice") for r in llm.requests]
    # asked for an answer: a local server gets no tools at all ("none" keeps them in its
    # prompt, and small models then write the call as text)
    assert choices == ["auto", "auto", None] and "tools" not in llm.requests[2]
    recall = client.execute_tool("memory_recall", {"query_intent": "tea"})
    assert "x2" not in recall["data"]["result"]  # one mention, not three


def test_two_invalid_calls_make_the_next_request_ask_for_an_answer(backend, llm):
    client = backend()
    bad = {"name": "memory_purge", "arguments": {"criteria": {"source": "Ann"}}}
    worse = {"name": "memory_purge", "arguments": {"criteria": {"source_contains": "A"}}}
    llm.play({"tool_calls": [bad]}, {"tool_calls": [worse]}, {"text": "Sorry."})
    result = client.process_message("forget Ann")
    assert result["content"] == "Sorry." and result["round_trips"] == 3
    assert [r.get("tool_choice") for r in llm.requests] == ["auto", "auto", None]
    error = result["tool_calls"][0]["result"]
    assert "unknown field 'source'; use subject, relation, object" in error


def test_the_last_round_trip_asks_for_an_answer(backend, llm):
    client = backend(max_round_trips=2)
    llm.play({"tool_calls": [commit(("User", "likes", "tea"))]}, {"text": "Done."})
    assert client.process_message("I like tea")["content"] == "Done."
    assert [r.get("tool_choice") for r in llm.requests] == ["auto", None]


@pytest.mark.parametrize("written", [
    '{"name": "memory_commit", "arguments": {"triplets": [{"subject": "User", '
    '"relation": "likes", "object": "tea"}]}}',
    '<tool_call>\n{"name": "memory_commit", "arguments": {"triplets": [{"subject": "User",'
    ' "relation": "likes", "object": "tea"}]}}\n</tool_call>',
    '```json\n[{"type": "function", "function": {"name": "memory_commit", "parameters": '
    '{"triplets": [{"subject": "User", "relation": "likes", "object": "tea"}]}}}]\n```',
])
def test_a_tool_call_written_as_text_is_run_as_a_call(backend, llm, written):
    client = backend()
    llm.play({"text": written}, {"text": "Noted, you like tea."})
    result = client.process_message("I like tea")
    assert result["success"] and result["content"] == "Noted, you like tea."
    assert result["calls_in_text"] == 1
    assert result["tool_calls"][0]["name"] == "memory_commit"
    assert "1 new" in result["tool_calls"][0]["result"]


def test_a_json_answer_that_is_not_a_known_tool_stays_an_answer(backend, llm):
    client = backend()
    llm.play({"text": '{"name": "Anna", "age": 30}'})
    result = client.process_message("give me JSON")
    assert result["content"] == '{"name": "Anna", "age": 30}' and not result["tool_calls"]


def test_an_error_event_inside_the_stream_shows_the_servers_words_and_keeps_the_text(
        backend, llm):
    client = backend()
    llm.play({"text": "The first half of a long answer. " * 4,
              "error_event": {"message": "CUDA out of memory", "code": 500}})
    result = client.process_message("hi")
    assert not result["success"]
    assert "in the middle of the reply: CUDA out of memory" in result["error"]
    assert result["content"].startswith("The first half")
    last = client.get_history()["history"][-1]
    assert last["partial"] and last["content"] == result["content"]


def test_a_server_killed_mid_reply_is_not_called_unreachable(backend, llm):
    client = backend()
    llm.play({"text": "Half of an answer that goes on for a while. " * 4, "reset": True})
    result = client.process_message("hi")
    assert not result["success"] and "cannot reach" not in result["error"]
    assert "broke off in the middle of the reply" in result["error"]
    assert result["content"].startswith("Half of an answer")


def test_keep_alives_do_not_keep_a_silent_model_waiting(backend, llm):
    client = backend(first_token_timeout=0.5)
    llm.play({"text": "too late", "keepalive": 5}, {"text": "on time"})
    result = client.process_message("hi")
    assert result["error"].startswith("timeout: the model did not start answering within 0.5")
    assert len(llm.requests) == 1
    assert client.process_message("again")["content"] == "on time"


def test_a_stall_after_the_first_token_is_reported_and_the_text_kept(backend, llm):
    llm.slots = False  # a server that cannot say it is still generating (Ollama)
    client = backend(request_timeout=0.3)
    llm.play({"text": "x" * 60, "chunk_delay": 0.4}, {"text": "next"})
    result = client.process_message("hi")
    assert result["error"].startswith("timeout: the model stopped sending for 0.3")
    assert result["content"].startswith("x")
    assert client.get_history()["history"][-1]["error"].startswith("timeout")


def test_a_turn_that_runs_out_of_time_is_recorded_as_a_timeout(backend, llm):
    client = backend(turn_timeout=0.5)
    llm.play({"text": "y" * 400, "chunk_delay": 0.05}, {"text": "next"})
    result = client.process_message("hi")
    assert result["error"].startswith("timeout: the turn took longer than 0.5")
    recorded = client.get_history()["history"][-1]
    assert recorded["error"].startswith("timeout") and recorded["error"] != "cancelled"


def test_a_local_server_is_sent_a_low_temperature_and_a_reply_cap(backend, llm):
    client = backend()
    llm.play({"text": "hi"})
    client.process_message("hello")
    assert llm.requests[0]["temperature"] == profiles.LOCAL_TEMPERATURE
    assert llm.requests[0]["max_tokens"] == profiles.LOCAL_MAX_TOKENS  # no endless runs
    assert profiles.max_tokens("https://api.deepseek.com") is None


def test_llama_server_serving_any_name_gets_no_false_not_listed_warning(backend, llm):
    client = backend()
    llm.models = ["qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"]
    answer = client.test_connection(model="local-model")
    assert answer["success"] and answer["data"]["model_found"]
    assert "answers whatever model name is set" in answer["data"]["message"]


def test_an_empty_stream_is_asked_again_without_streaming(backend, llm):
    """llama-cpp-python's function-calling formats answer a streamed request that wants a
    tool with a stream of nothing ("automatic streaming tool choice is not supported");
    the same request without streaming works."""
    client = backend()
    llm.play({"empty_stream": True}, {"tool_calls": [commit(("User", "likes", "tea"))]},
             {"text": "Noted."})
    result = client.process_message("I like tea")
    assert result["success"] and result["content"] == "Noted."
    assert [r["stream"] for r in llm.requests] == [True, False, True]
    assert "1 new" in result["tool_calls"][0]["result"]


def test_a_tool_calling_message_carries_text_content_never_null(backend, llm):
    client = backend()
    llm.play({"tool_calls": [commit(("User", "likes", "tea"))]}, {"text": "Noted."})
    client.process_message("I like tea")
    sent = llm.requests[1]["messages"][-2]
    assert sent["role"] == "assistant" and sent["tool_calls"] and sent["content"] == ""


@pytest.mark.slow
def test_a_rate_limit_is_said_as_one_and_its_back_off_is_not_a_silent_model(backend, llm):
    client = backend(first_token_timeout=1.0)
    busy = {"status": 429, "message": "slow down", "headers": {"Retry-After": "1.5"}}
    llm.play(busy, busy, {"text": "Here now."})  # 3 s of back-off, first token at 1 s
    assert client.process_message("hi")["content"] == "Here now."
    llm.play({"status": 429, "message": "quota", "headers": {"Retry-After": "120"}})
    result = client.process_message("again")
    assert "rate-limiting" in result["error"] and "try again in 120 s" in result["error"]
    assert len(llm.requests) == 4  # a long Retry-After is not waited out
