"""`trulymem --smoke-test`: proves a build works, end to end, on the machine it runs on.

It starts a scripted OpenAI-compatible server on 127.0.0.1, opens the real window offscreen
on a temporary data folder, plays one full turn through the real openai/httpx stack (the
model commits a memory, then answers), and checks that the reply arrived and that the memory
is in the SQLite file. Exit status 0 means it all worked and no Python warning was raised.
"""

from __future__ import annotations

import os
import ssl
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

TIMEOUT = 60.0
REPLY = "Noted: you like green tea."


def _wait(app, condition, timeout: float = TIMEOUT) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        app.processEvents()
        time.sleep(0.005)
    return True


def _check_code_colours() -> str | None:
    """A Python block gets syntax colours: in a frozen build the lexers are loaded by name
    and fail silently if they were left out. Answers a problem, or None."""
    from PySide6.QtGui import QTextDocument  # noqa: PLC0415

    from app.chat.code_blocks import style_code_blocks  # noqa: PLC0415

    document = QTextDocument()
    document.setMarkdown("```python\ndef f():\n    return 1\n```\n")
    style_code_blocks(document, dark=False, highlight=True, wrap_chars=80)
    block, colours = document.begin(), set()
    fragment = block.begin()
    while not fragment.atEnd():
        colours.add(fragment.fragment().charFormat().foreground().color().name())
        fragment += 1
    return None if len(colours) > 1 else "code blocks are not coloured (lexers missing?)"


def _check_words() -> str | None:
    """The Chinese catalogues and Qt's own Chinese words are inside the build."""
    from PySide6.QtCore import QLibraryInfo, QTranslator  # noqa: PLC0415

    from core import i18n  # noqa: PLC0415

    words = len(i18n.load_catalog(i18n.CHINESE))
    if words < 100:
        return f"the Chinese catalogues hold {words} texts"
    folder = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
    if not QTranslator().load("qtbase_zh_CN", folder):
        return f"Qt's Chinese words are missing from {folder}"
    print(f"smoke test: {words} texts in Chinese, and Qt's own")
    return None


def _check_one_value_in_two_scripts() -> str | None:
    """The dictionary, the places and pinyin the writer compares values with are inside
    the build ("我住在里昂" after "I live in Lyon" is one fact)."""
    from core.meaning.names import same_value  # noqa: PLC0415

    pairs = (("peanuts", "花生"), ("Lyon", "里昂"), ("Lin Wei", "林伟"))
    wrong = [pair for pair in pairs if same_value(*pair) is not True]
    if wrong:
        return f"values in two scripts not told the same: {wrong}"
    print("smoke test: one value in two scripts (dictionary, places, pinyin)")
    return None


def _check_tls() -> str:
    """Build the TLS context the openai client uses for https endpoints: in a frozen build
    this fails if the ssl module or the trust-store package was left out."""
    import importlib  # noqa: PLC0415

    for name in ("httpx2", "httpx"):  # the openai client's HTTP stack, by release
        try:
            context = importlib.import_module(name).create_ssl_context()
        except ImportError:
            continue
        return f"TLS context from {name}: {type(context).__name__}"
    context = ssl.create_default_context()
    return f"TLS context from ssl: {type(context).__name__}"


NATIVE_KEYCHAINS = {"linux": "SecretService", "darwin": "macOS", "win32": "Windows"}


def _check_keychain() -> str | None:
    """The platform's keychain is in the build: keyring finds its backends by its
    package's entry points, which a frozen build must carry, and without them the API key
    would quietly stay in the file on every machine."""
    from importlib.metadata import entry_points  # noqa: PLC0415

    wanted = NATIVE_KEYCHAINS.get(sys.platform)
    if wanted is None:
        return None
    found = {point.name: point for point in entry_points(group="keyring.backends")}
    try:
        found[wanted].load()
        if wanted == "SecretService":
            import secretstorage  # noqa: F401, PLC0415  (keyring hides its absence)
    except (KeyError, ImportError) as error:
        return f"the keychain backend {wanted} is not in this build ({error!r})"
    return None


QT_NOISE = ("This plugin does not support propagateSizeHints",)  # the offscreen platform's


def _check_runtime() -> str | None:
    """The model runtime shipped beside the program starts on this CPU (its version and
    the devices it found); a build without one says so and passes."""
    from core.models.runtime import server_program  # noqa: PLC0415

    program = server_program()
    if program is None:
        print("smoke test: no model runtime shipped")
        return None
    environment = {**os.environ, "LD_LIBRARY_PATH": str(program.parent)}
    try:
        ran = subprocess.run([str(program), "--version"], capture_output=True, text=True,
                             timeout=30, env=environment, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"the model runtime did not run: {error}"
    said = (ran.stdout + ran.stderr).strip().splitlines()
    if ran.returncode != 0:
        return f"the model runtime failed ({ran.returncode}): {' '.join(said[-3:])}"
    print(f"smoke test: model runtime runs: {next((x for x in said if 'version' in x), '')}")
    return None


def _qt_message(_kind: object, _context: object, message: str) -> None:
    """Qt's own messages go to stderr as usual, minus the offscreen platform's notice."""
    if not message.startswith(QT_NOISE):
        print(f"Qt: {message}", file=sys.stderr)


def run() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    # The throwaway folder's key stays in its file, out of the person's keychain.
    os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
    problems: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="trulymem-smoke-") as folder:
            problems += _play_one_turn(Path(folder))
        problems += [p for p in (_check_runtime(),) if p]
        problems += [f"Python warning: {w.category.__name__}: {w.message} "
                     f"({w.filename}:{w.lineno})" for w in caught]
    for problem in problems:
        print(f"smoke test: {problem}", file=sys.stderr)
    if problems:
        return 1
    print(f"smoke test passed in {(time.perf_counter() - started) * 1000:.0f} ms")
    return 0


def _play_one_turn(home: Path) -> list[str]:
    from PySide6.QtCore import qInstallMessageHandler  # noqa: PLC0415

    from app.startup import gui  # noqa: PLC0415  (Qt loads after the platform is chosen)
    from core.config import Config, save_config  # noqa: PLC0415
    from core.store import GraphStore  # noqa: PLC0415
    from core.testing.loopback_llm import ScriptedOpenAIServer  # noqa: PLC0415

    print(f"smoke test: {_check_tls()}")
    llm = ScriptedOpenAIServer()
    llm.play({"tool_calls": [{"name": "memory_commit", "arguments": {"triplets": [
        {"subject": "user", "relation": "likes", "object": "green tea"}]}}]},
        {"text": REPLY})
    save_config(home / "config.json",
                Config(api_key="sk-smoke-test-0000", base_url=llm.base_url, model="smoke"))
    app = gui.make_application()
    qInstallMessageHandler(_qt_message)
    checked = [p for p in (_check_code_colours(), _check_words(), _check_keychain(),
                           _check_one_value_in_two_scripts()) if p]
    window = gui.open_window(home)
    usable: list[bool] = []
    window.usable.connect(lambda: usable.append(True))
    window.show()
    problems = checked
    try:
        if not _wait(app, lambda: bool(usable)):
            return ["the window never became usable"]
        window.turns.send("I like green tea")
        if not _wait(app, lambda: not window.turns.running):
            return ["the turn did not finish"]
        reply = window.chat.messages[-1]
        if reply.error or reply.content != REPLY:
            problems.append(f"unexpected reply {reply.content!r} (error: {reply.error})")
    finally:
        window.close()
        llm.close()
    if window.host.thread.isRunning():
        problems.append("the backend thread is still running after the window closed")
    store = GraphStore(home / "graph_memory.db")
    try:
        facts = store.query("SELECT e.relation, t.name FROM edges e"
                            " JOIN nodes t ON t.id = e.target_id")
    finally:
        store.close()
    if [(f["relation"], f["name"]) for f in facts] != [("likes", "green tea")]:
        problems.append(f"the memory was not written: {facts}")
    else:
        print("smoke test: reply arrived, memory written")
        problems += _recall_by_meaning(home)
        problems += _share_over_mcp(home)
    return problems


def _share_over_mcp(home: Path) -> list[str]:
    """`trulymem mcp` starts from this very program, a client initialises a session over
    its stdin and stdout, and one recall finds the fact the turn stored."""
    import anyio  # noqa: PLC0415
    import mcp_types as types  # noqa: PLC0415
    from mcp import Client  # noqa: PLC0415
    from mcp.client.stdio import StdioServerParameters  # noqa: PLC0415

    from core.config import load_config, save_config, updated  # noqa: PLC0415

    config, _warning = load_config(home / "config.json")
    save_config(home / "config.json", updated(config, share_memory=True))
    program = [] if getattr(sys, "frozen", False) else ["-m", "app.main"]
    server = StdioServerParameters(command=sys.executable,
                                   args=[*program, "mcp", "--home", str(home)])

    async def recall() -> str:
        with anyio.fail_after(TIMEOUT):
            async with Client(server, client_info=types.Implementation(
                    name="smoke test", version="1")) as client:
                result = await client.call_tool("memory_recall",
                                                {"query_intent": "green tea"})
                return result.content[0].text

    started = time.perf_counter()
    try:
        answer = anyio.run(recall)
    except Exception as error:  # any failure is the finding
        return [f"trulymem mcp failed: {type(error).__name__}: {error}"]
    if "green tea" not in answer:
        return [f"trulymem mcp recalled {answer!r}"]
    print(f"smoke test: trulymem mcp started and recalled in "
          f"{(time.perf_counter() - started) * 1000:.0f} ms")
    return []


def _recall_by_meaning(home: Path) -> list[str]:
    """The bundled embedding model finds the fact from a question sharing no word with it."""
    from core.meaning import engine  # noqa: PLC0415
    from core.meaning.indexer import Meaning  # noqa: PLC0415
    from core.store import GraphStore  # noqa: PLC0415
    from core.store.search import search_edges  # noqa: PLC0415

    if engine.problem():
        return [f"recall by meaning is unavailable: {engine.problem()}"]
    store = GraphStore(home / "graph_memory.db")
    meaning = Meaning(store.path)
    meaning.start()
    try:
        if not meaning.wait_idle(TIMEOUT):
            return ["the indexer did not catch up"]
        store.meaning = meaning
        started = time.perf_counter()
        found = search_edges(store, "what hot drink do I enjoy", limit=1)
        took = (time.perf_counter() - started) * 1000
    finally:
        meaning.stop()
        store.close()
    if not found or found[0]["target_name"] != "green tea":
        return [f"recall by meaning did not find the fact: {found}"]
    print(f"smoke test: recall by meaning found it in {took:.0f} ms")
    return []
