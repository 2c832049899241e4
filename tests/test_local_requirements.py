"""Before a model of the app's own is offered or started, what this computer lacks is
said plainly: the runtime, the model's file, free memory, the CPU."""

from __future__ import annotations

import io

from core.cli import TerminalChat
from core.models import local
from core.models.catalogue import CATALOGUE


def test_what_is_missing_is_said_in_plain_words(tmp_path, monkeypatch):
    monkeypatch.setenv("TRULYMEM_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("TRULYMEM_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setattr(local, "free_memory_gb", lambda: 1.8)
    said = local.problems(CATALOGUE[0])
    assert any("packaging/build_runtime.py" in s for s in said)
    assert any("trulymem models get qwen2.5-coder-1.5b-instruct" in s for s in said)
    assert "this computer has 1.8 GB of memory free; qwen2.5-coder-1.5b-instruct needs " \
           "2.5 GB" in said
    served = local.serve(CATALOGUE[0].id, tmp_path)
    assert not served["success"] and "1.8 GB" in served["error"]
    assert not local.serve("gpt-5", tmp_path)["success"]


def test_a_cpu_without_sse42_is_told(monkeypatch, tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor : 0\nflags : fpu vme sse sse2 ssse3\n")
    real = local.Path

    monkeypatch.setattr(local, "Path", lambda p: cpuinfo if p == "/proc/cpuinfo" else real(p))
    assert "SSE4.2" in (local.cpu_problem() or "")


def test_the_terminal_says_why_the_own_model_does_not_run(tmp_path, monkeypatch):
    monkeypatch.setenv("TRULYMEM_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("TRULYMEM_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.delenv("TRULYMEM_API_KEY", raising=False)
    chat = TerminalChat(tmp_path / "home", out=io.StringIO())
    try:
        warning = chat.start("local", "qwen2.5-coder-1.5b-instruct") or ""
    finally:
        chat.close()
    assert "the model on this computer does not run" in warning
    assert "no API key" not in warning
