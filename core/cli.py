"""`trulymem --cli`: chat in a terminal through BackendClient, for servers and scripts.

Lines typed (or piped) are messages; lines starting with `/` are commands. The reply streams
to stdout as it arrives; tool calls and errors go to stderr so a script can keep stdout as
the conversation. Ctrl+C during a turn stops the turn, at the prompt it quits.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from core.config import load_config
from core.errors import ErrorCode
from core.events import Event
from core.i18n import N_, set_language, tr
from core.paths import config_path, data_home
from core.protocol.client import BackendClient
from core.protocol.packets import PacketType
from core.protocol.server import BackendServer
from core.redaction import scrub_known

HELP = N_("""Commands:
  /help                 this list
  /status               endpoint, model and memory counts
  /limits [name=N ...]  show or change the per-turn tool limits
  /tool NAME [JSON]     run a memory tool yourself (never limited)
  /history              the saved conversation
  /clear                clear the saved conversation (the memory stays)
  /quit                 leave (so does end of input)""")


class Scrubbed:
    """A terminal stream that writes no known key, whatever a server or model said."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(scrub_known(text))

    def flush(self) -> None:
        self.stream.flush()


class TerminalChat:
    """One terminal conversation: a BackendServer on its own thread, driven line by line."""

    def __init__(self, home: str | Path | None, out: TextIO = sys.stdout,
                 err: TextIO = sys.stderr) -> None:
        self.out, self.err = Scrubbed(out), Scrubbed(err)
        self._streamed = False
        self.server = BackendServer(home=home, progress=self._progress)
        self.client = BackendClient(self.server)
        self.turn_running = threading.Event()

    def _progress(self, event: str, data: dict[str, Any]) -> None:
        """Runs on the backend thread while a turn streams."""
        shown = {Event.TEXT: self._text, Event.TOOL_FINISHED: self._tool_finished,
                 Event.TOOL_REJECTED: self._tool_rejected,
                 Event.CALLS_IN_TEXT: self._calls_in_text}.get(event)
        if shown is not None:
            shown(data)

    def _text(self, data: dict[str, Any]) -> None:
        self.out.write(data["delta"])
        self.out.flush()
        self._streamed = True

    def _tool_finished(self, data: dict[str, Any]) -> None:
        self.err.write(f"\n  [{data['name']} {data['duration_ms']:.0f} ms] "
                       f"{_first_line(data['result'])}\n")

    def _tool_rejected(self, data: dict[str, Any]) -> None:
        self.err.write("\n  " + tr("[{name} rejected] {reason}", name=data["name"],
                                    reason=data["reason"]) + "\n")

    def _calls_in_text(self, data: dict[str, Any]) -> None:
        self.err.write("\n  " + tr("[the model wrote its call to {names} as text, above; "
                                    "it was run as a call]",
                                    names=", ".join(data["names"])) + "\n")

    def start(self, base_url: str | None, model: str | None) -> str | None:
        """Start the backend; answers a warning worth showing, if any."""
        self.server.start(api_key=os.environ.get("TRULYMEM_API_KEY") or None,
                          base_url=base_url, model=model)
        status = self.client.get_status()
        problems = [status.get("config_warning"), status.get("store_error"),
                    status.get("store_notice")]
        if status.get("local_problem"):  # the app's own runtime: why its model does not run
            problems.append(tr("the model on this computer does not run: {problem}",
                               problem=status["local_problem"]))
        elif not status.get("client_initialized"):
            problems.append(tr("no API key: set it with TRULYMEM_API_KEY or in the config "
                               "file ({file}); /tool works without one",
                               file=self.server.backend.settings.config_file))
        return "\n".join(p for p in problems if p) or None

    def send(self, text: str) -> bool:
        """Play one turn; True when it succeeded."""
        self._streamed = False
        self.turn_running.set()
        try:
            answer = self.client.process_message(text)
        finally:
            self.turn_running.clear()
        if answer["success"]:
            if not self._streamed:
                self.out.write(answer["content"])
            self.out.write("\n")
            self.out.flush()
            return True
        if self._streamed:
            self.out.write("\n")
        if answer["code"] == ErrorCode.CANCELLED:  # the person's own stop is not a failure
            self.err.write(tr("(stopped)") + "\n")
            return True
        self.err.write(tr("error: {error}", error=answer["error"]) + "\n")
        return False

    def command(self, line: str) -> bool:
        """Run one `/command`; False ends the session."""
        name, _, rest = line[1:].strip().partition(" ")
        actions: dict[str, Callable[[str], None]] = {
            "help": lambda _: self._say(tr(HELP)), "status": self._status,
            "limits": self._limits, "tool": self._tool, "history": self._history,
            "clear": self._clear}
        if name in ("quit", "exit", "q"):
            return False
        action = actions.get(name)
        if action is None:
            self.err.write(tr("unknown command /{name}; /help lists them", name=name) + "\n")
        else:
            action(rest.strip())
        return True

    def _say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def _status(self, _rest: str) -> None:
        status = self.client.get_status()
        config = status.get("config") or {}
        key = config.get("api_key")
        key = tr("set") if key == "set" else key or tr("not set")  # "set": a short key
        self._say(tr("{base_url}  model {model}  key {key}", base_url=config.get("base_url"),
                     model=config.get("model"), key=key))
        state = self.client.request(PacketType.MEMORY_STATE)
        if state["success"]:
            self._say(tr("Memory: {counts}", counts=state["data"]["counts_line"]))
            self._say(tr("Waiting for your review: {count}",
                         count=state["data"]["review_count"]))
        else:
            self.err.write(tr("error: {error}", error=state["error"]) + "\n")

    def _limits(self, rest: str) -> None:
        if rest:
            try:
                changes = {k: int(v) for k, v in (p.split("=", 1) for p in rest.split())}
            except ValueError:
                self.err.write(tr("usage: /limits persona_update_max=2 memory_update_max=10")
                               + "\n")
                return
            answer = self.client.update_tool_limits(**changes)
            if not answer["success"]:
                self.err.write(tr("error: {error}", error=answer["error"]) + "\n")
                return
        answer = self.client.get_tool_limits()
        self._say("  ".join(f"{k}={v}" for k, v in answer["data"].items()))

    def _tool(self, rest: str) -> None:
        name, _, arguments = rest.partition(" ")
        if not name:
            self.err.write(tr("usage: /tool NAME {json arguments}") + "\n")
            return
        answer = self.client.execute_tool(name, arguments.strip() or "{}")
        if answer["success"]:
            self._say(answer["result"])
        else:
            self.err.write(tr("error: {error}", error=answer["error"]) + "\n")

    def _history(self, _rest: str) -> None:
        for message in self.client.get_history().get("history") or []:
            role = {"user": tr("user"), "assistant": tr("assistant")}.get(message["role"],
                                                                          message["role"])
            self._say(f"{role}: {message['content']}")

    def _clear(self, _rest: str) -> None:
        answer = self.client.save_history([])
        self._say(tr("conversation cleared") if answer["success"]
                  else tr("error: {error}", error=answer["error"]))

    def close(self) -> None:
        self.client.shutdown()


def _first_line(text: str, width: int = 100) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= width else line[: width - 1] + "…"


def _tolerate_bad_text() -> None:
    """Invalid UTF-8 typed or piped in, or a lone surrogate in a reply, must not end the
    chat: such characters are shown as U+FFFD instead."""
    for stream in (sys.stdin, sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")


def run(home: str | Path | None, base_url: str | None = None, model: str | None = None,
        stdin: TextIO = sys.stdin) -> int:
    _tolerate_bad_text()
    # The words in the config's language from the first line on (only looked at here: the
    # backend reads the file as ever, and tells its problems in that language).
    set_language(load_config(config_path(data_home(home)), look_only=True)[0].language)
    chat = TerminalChat(home)
    warning = chat.start(base_url, model)
    interactive = stdin.isatty()
    if warning:
        chat.err.write(warning + "\n")
    if interactive:
        chat.err.write(tr("TrulyMEM terminal chat. /help lists commands, Ctrl+D leaves.")
                       + "\n")

    def interrupt(_signum: int, _frame: Any) -> None:
        if chat.turn_running.is_set():
            chat.client.cancel()
        else:
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, interrupt) \
        if threading.current_thread() is threading.main_thread() else None
    failures = 0
    try:
        while True:
            if interactive:
                chat.err.write("> ")
                chat.err.flush()
            line = stdin.readline()
            if not line:
                break
            text = line.strip()
            if not text:
                continue
            if text.startswith("/"):
                if not chat.command(text):
                    break
                continue
            failures += not chat.send(text)
    except KeyboardInterrupt:
        chat.err.write("\n")
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
        chat.close()
    return 1 if failures and not interactive else 0

