"""What a new user meets first: a DeepSeek model that exists (old configs migrate, thinking
is a setting), a model-not-found answer in plain words, the token counts the provider
nests, every mode in --help, sharing switched on from a terminal, and a quit on SIGTERM
that saves like the window's Quit."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from app.main import parse_args
from core.config import load_config
from core.endpoint import profiles
from core.endpoint.client import make_client
from core.paths import config_path
from core.share.run import main as mcp_main
from core.turn.llm import ChatSession, TurnOptions

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("retired", "thinking"), [("deepseek-chat", False),
                                                   ("deepseek-reasoner", True)])
def test_a_retired_deepseek_model_migrates_once_and_says_so(tmp_path, retired, thinking):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"version": 2, "api_key": "sk-kept-123456789",
                                "model": retired, "max_round_trips": 9}))
    config, warning = load_config(path)
    assert config.model == "deepseek-flash" and config.thinking is thinking
    assert config.api_key == "sk-kept-123456789" and config.max_round_trips == 9
    assert retired in warning and "deepseek-flash" in warning
    written = json.loads(path.read_text())
    assert written["version"] == 3
    again, told = load_config(path)  # said once: the file was saved in the new form
    assert told is None and again.model == "deepseek-flash"
    assert again.thinking is thinking


def test_thinking_is_sent_to_deepseek_as_its_documented_option_and_nowhere_else():
    assert profiles.request_options(False, "https://api.deepseek.com") == {
        "thinking": {"type": "disabled"}}  # DeepSeek thinks unless told not to
    assert profiles.request_options(True, "https://api.deepseek.com/v1") == {
        "thinking": {"type": "enabled"}}
    assert profiles.request_options(True, "https://api.openai.com/v1") == {}
    assert profiles.request_options(True, "http://127.0.0.1:8080/v1") == {}


def session(llm) -> ChatSession:
    return ChatSession(make_client("sk-test-000000000", llm.base_url, 10), "deepseek-v4-flash",
                       llm.base_url)


def test_the_request_carries_the_option_and_reasoning_goes_back_within_the_turn(llm):
    llm.play({"reasoning": "I should store it.", "tool_calls": [
        {"name": "memory_recall", "arguments": {"query_intent": "tea"}}]},
        {"reasoning": "Now answer.", "text": "You like tea."})
    options = TurnOptions([{"type": "function", "function": {
        "name": "memory_recall", "parameters": {"type": "object"}}}],
        extra_body={"thinking": {"type": "enabled"}})
    result = session(llm).run([{"role": "user", "content": "tea?"}],
                              lambda _n, _a: {"success": True, "data": {"result": "none"}},
                              lambda *_: None, options)
    assert result.error is None and result.content == "You like tea."
    assert all(r["thinking"] == {"type": "enabled"} for r in llm.requests)
    called = next(m for m in llm.requests[1]["messages"] if m.get("tool_calls"))
    assert called["reasoning_content"] == "I should store it."


def test_nested_token_counts_are_kept_in_the_turns_usage(llm):
    llm.cache_usage = True
    llm.play({"text": "one"})
    result = session(llm).run([{"role": "user", "content": "hi"}], lambda *_: {},
                              lambda *_: None, TurnOptions([]))
    assert result.usage["prompt_tokens_details"] == {"cached_tokens": 0}
    assert result.usage["prompt_cache_miss_tokens"] == result.usage["prompt_tokens"]


@pytest.mark.parametrize("answer", [
    {"status": 404, "message": "The model `deepseek-chat` does not exist or you do not have "
                               "access to it.", "code": "model_not_found"},
    {"status": 400, "message": "Model Not Exist", "code": "invalid_request_error"},
    {"status": 404, "message": "model 'llama3.1' not found"}])
def test_a_model_that_does_not_exist_is_said_plainly(llm, answer):
    llm.play(answer)
    result = session(llm).run([{"role": "user", "content": "hi"}], lambda *_: {},
                              lambda *_: None, TurnOptions([]))
    assert result.code == "model_not_found"
    assert "has no model named deepseek-v4-flash" in result.error
    assert "choose one it offers" in result.error


def test_another_refusal_is_not_taken_for_a_missing_model(llm):
    llm.play({"status": 400, "message": "messages: at least one is required"})
    result = session(llm).run([{"role": "user", "content": "hi"}], lambda *_: {},
                              lambda *_: None, TurnOptions([]))
    assert result.code == "endpoint" and "400" in result.error


def test_help_lists_every_mode(capsys):
    with pytest.raises(SystemExit):
        parse_args(["--help"])
    shown = capsys.readouterr().out
    for mode in ("trulymem mcp", "--cli", "--tool", "--eval"):
        assert mode in shown.split("modes:")[1], mode


def test_sharing_is_switched_on_and_off_from_a_terminal(tmp_path, capsys):
    home = tmp_path / "home"
    assert mcp_main(["--home", str(home), "--enable"]) == 0
    config, _ = load_config(config_path(home))
    assert config.share_memory and len(config.share_token) >= 16
    assert config.share_token in capsys.readouterr().out
    assert mcp_main(["--home", str(home), "--disable"]) == 0
    assert not load_config(config_path(home))[0].share_memory
    assert mcp_main(["--home", str(home)]) == 3  # off: nothing served
    assert "--enable" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_quits_like_the_windows_quit(tmp_path, number):
    home = tmp_path / "home"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    process = subprocess.Popen([sys.executable, "-m", "app.main", "--home", str(home),
                                "--say-when-ready"], cwd=ROOT, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().strip() == "ready"  # the handshake
        process.send_signal(number)
        _out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, err
    settings = home / "window.ini"
    assert settings.exists() and "geometry" in settings.read_text()  # state saved
    assert list((home / "backups").glob("graph_memory-*.db"))  # the last backup ran


def test_a_command_takes_the_options_given_before_it():
    from app.main import split_command

    assert split_command(["--home", "/x", "import-history", "f.zip"]) == (
        "import-history", ["--home", "/x", "f.zip"])
    assert split_command(["sync", "--home", "/x", "--status"]) == (
        "sync", ["--home", "/x", "--status"])
    assert split_command(["--home", "sync", "--status"]) == (None, ["--home", "sync",
                                                                     "--status"])
    assert split_command(["--ask", "sync", "--home", "/x"]) == (None, ["--ask", "sync",
                                                                       "--home", "/x"])
    assert split_command(["--tool", "memory_recall", "{}"]) == (
        None, ["--tool", "memory_recall", "{}"])
