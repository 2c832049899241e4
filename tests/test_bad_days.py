"""Bad days for the data: damaged, empty or full files, racing starts, and the backups that
get the person out of them."""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from core.protocol.packets import PacketType
from core.store import GraphStore, backups, exchange, exchange_format
from core.tools import ToolExecutor
from tests.conftest import ask, make_dispatcher

STARTER = ("import sys\nfrom core.store import GraphStore\n"
           "print(GraphStore(sys.argv[1]).schema_version())\n")


def fill(path, facts=200) -> None:
    store = GraphStore(path)
    try:
        executor = ToolExecutor(store)
        for start in range(0, facts, 50):
            assert executor.execute("memory_commit", {"triplets": [
                {"subject": f"person {i}", "relation": "likes", "object": f"item {i}"}
                for i in range(start, start + 50)]})["success"]
    finally:
        store.close()


def damage(path) -> None:
    """Overwrite part of a page holding facts, as a failing disk would."""
    with sqlite3.connect(path) as conn:
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'edges'"
                            ).fetchone()[0]
    conn.close()
    with open(path, "r+b") as handle:
        handle.seek((root - 1) * 4096 + 8)
        handle.write(bytes(range(256)) * 2)


@pytest.fixture
def opened(hosted):
    return hosted


def test_processes_starting_together_on_a_fresh_folder_all_work(tmp_path):
    path = tmp_path / "fresh" / "graph_memory.db"
    path.parent.mkdir()
    children = [subprocess.Popen([sys.executable, "-c", STARTER, str(path)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for _ in range(12)]
    results = [(child.communicate(), child.returncode) for child in children]
    assert all(code == 0 for _, code in results), [err for (_, err), _ in results]
    store = GraphStore(path)
    try:
        assert {out.strip() for (out, _), _ in results} == {str(store.schema_version())}
    finally:
        store.close()


def test_a_full_disk_says_so_keeps_the_memory_readable_and_recovers(store, run):
    pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
    store.conn.execute(f"PRAGMA max_page_count = {pages + 2}")
    executor = ToolExecutor(store)
    failed = None
    for i in range(50):
        result = executor.execute("memory_commit", {"triplets": [
            {"subject": f"s{i}", "relation": "note", "object": "x" * 3000 + str(i)}]})
        if not result["success"]:
            failed = result["error"]
            break
    assert failed is not None and "the disk is full; nothing was saved" in failed
    assert "no transaction is active" not in failed
    assert executor.execute("memory_recall", {"query_intent": "s0"})["success"]
    store.conn.execute("PRAGMA max_page_count = 1073741823")  # space is back
    run("memory_commit", triplets=[{"subject": "after", "relation": "is", "object": "saved"}])
    assert store.integrity_problems() == []


def test_a_damaged_database_opens_read_only_and_is_never_written(tmp_path, opened):
    home = tmp_path / "home"
    home.mkdir()
    fill(home / "graph_memory.db")
    damage(home / "graph_memory.db")
    before = (home / "graph_memory.db").read_bytes()
    dispatcher = opened(home)
    status = ask(dispatcher, PacketType.GET_STATUS).data
    assert "damaged" in status["store_warning"] and "Restore a backup" in status["store_warning"]
    refused = ask(dispatcher, PacketType.EXECUTE_TOOL, {"tool_name": "memory_commit",
                                                        "arguments": {"triplets": [
                                                            {"subject": "a", "relation": "b",
                                                             "object": "c"}]}})
    assert not refused.success and "opened read-only" in refused.error
    assert "Restore a backup" in refused.error
    assert ask(dispatcher, PacketType.EXECUTE_TOOL,
               {"tool_name": "memory_introspect"}).success  # what can be read, is
    dispatcher.backend.close()
    assert (home / "graph_memory.db").read_bytes() == before


def test_backups_are_private_hourly_at_most_and_taken_at_exit(tmp_path, opened):
    dispatcher = opened()
    commit = {"tool_name": "memory_commit", "arguments": {"triplets": [
        {"subject": "Ann", "relation": "likes", "object": "tea"}]}}
    assert ask(dispatcher, PacketType.EXECUTE_TOOL, commit).success
    folder = tmp_path / "home" / "backups"
    assert len(backups.backup_files(folder)) == 1  # the first one right away
    commit["arguments"]["triplets"][0]["object"] = "coffee"
    assert ask(dispatcher, PacketType.EXECUTE_TOOL, commit).success
    assert len(backups.backup_files(folder)) == 1  # not again within the hour
    dispatcher.backend.close()
    saved = backups.backup_files(folder)
    assert len(saved) == 2  # and at exit, since the memory changed
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in saved)
    listed = backups.describe(saved[0])
    assert listed["facts"] == 2 and listed["problem"] is None

    again = opened()
    again.backend.close()  # nothing changed: no new backup
    assert len(backups.backup_files(folder)) == 2


def test_old_backups_are_pruned_to_the_last_seven_and_one_a_week(tmp_path):
    folder = tmp_path / "backups"
    folder.mkdir()
    now = time.time()
    for hours in [*range(10), *(24 * d for d in (2, 5, 9, 12, 16, 20, 26, 40))]:
        moment = now - hours * 3600 - 60
        name = f"graph_memory-{time.strftime('%Y%m%d-%H%M%S', time.localtime(moment))}.db"
        (folder / name).write_bytes(b"")
    policy = backups.BackupPolicy(keep_last=7, keep_weeks=4)
    removed = backups.prune(folder, now, policy)
    kept = backups.backup_files(folder)
    ages = sorted(round((now - backups.made_at(p)) / 86400, 1) for p in kept)
    assert len(kept) == 7 + 3  # week 1's newest is among the last seven
    assert max(ages) < 28 and len(removed) == 18 - 10


def test_restoring_a_backup_keeps_the_current_file_aside(tmp_path, opened):
    dispatcher = opened()
    for thing in ("tea", "coffee"):
        assert ask(dispatcher, PacketType.EXECUTE_TOOL, {"tool_name": "memory_commit",
                                                         "arguments": {"triplets": [
                                                             {"subject": "Ann", "relation":
                                                              "likes", "object": thing}]}})
    listed = ask(dispatcher, PacketType.LIST_BACKUPS).data["backups"]
    assert [b["facts"] for b in listed] == [1]
    refused = ask(dispatcher, PacketType.RESTORE_BACKUP, {"name": "../graph_memory.db"})
    assert not refused.success and "no backup called" in refused.error
    restored = ask(dispatcher, PacketType.RESTORE_BACKUP, {"name": listed[0]["name"]})
    assert restored.success, restored.error
    assert restored.data["facts"] == 1
    aside = restored.data["kept_aside"]
    assert os.path.exists(aside) and stat.S_IMODE(os.stat(aside).st_mode) == 0o600
    facts = ask(dispatcher, PacketType.EXECUTE_TOOL, {"tool_name": "memory_introspect"})
    assert facts.data["edges"] == {"general/active": 1}
    # The file kept aside still holds both facts.
    kept = GraphStore(aside, read_only="kept aside")
    try:
        assert kept.query_one("SELECT count(*) AS n FROM edges")["n"] == 2
    finally:
        kept.close()


def test_an_empty_database_file_with_backups_is_reported_not_started_afresh(tmp_path, opened):
    dispatcher = opened()
    assert ask(dispatcher, PacketType.EXECUTE_TOOL, {"tool_name": "memory_commit",
                                                     "arguments": {"triplets": [
                                                         {"subject": "Ann", "relation": "likes",
                                                          "object": "tea"}]}}).success
    dispatcher.backend.close()
    for suffix in ("-wal", "-shm"):
        (tmp_path / "home" / f"graph_memory.db{suffix}").unlink(missing_ok=True)
    (tmp_path / "home" / "graph_memory.db").write_bytes(b"")
    dispatcher = opened()
    status = ask(dispatcher, PacketType.GET_STATUS).data
    assert "is empty (0 bytes), but 1 backup exists" in status["store_error"]
    assert (tmp_path / "home" / "graph_memory.db").stat().st_size == 0
    name = ask(dispatcher, PacketType.LIST_BACKUPS).data["backups"][0]["name"]
    assert ask(dispatcher, PacketType.RESTORE_BACKUP, {"name": name}).success
    assert ask(dispatcher, PacketType.GET_STATUS).data["store_error"] is None


@pytest.mark.parametrize("kind", ["device", "fifo", "folder"])
def test_import_reads_regular_files_only(tmp_path, store, kind):
    path = tmp_path / "memory.json"
    if kind == "device":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)  # no writer: reading it would wait for ever
    else:
        path.mkdir()
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(3):
        with pytest.raises(exchange.ExchangeError, match="not a regular file"):
            exchange.import_json(store, path)
    assert len(os.listdir("/proc/self/fd")) == before  # no descriptor left open


def test_a_file_that_cannot_be_read_is_said_so(store):
    with pytest.raises(exchange.ExchangeError, match="cannot read mem"):
        exchange.import_json(store, Path("/proc/self/mem"))  # regular by stat, EIO on read


def test_import_tells_too_large_from_not_json(tmp_path, store, monkeypatch):
    monkeypatch.setattr(exchange_format, "MAX_FILE_BYTES", 1000)
    big = tmp_path / "big.json"
    big.write_text("{" + " " * 2000 + "}")
    with pytest.raises(exchange.ExchangeError, match="too large"):
        exchange.import_json(store, big)
    broken = tmp_path / "broken.json"
    broken.write_text("{nope")
    with pytest.raises(exchange.ExchangeError, match="not valid JSON"):
        exchange.import_json(store, broken)


OPEN_AS_OTHER_USER = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from core.store.opening import open_checked
opened = open_checked(Path(sys.argv[1]), 30)
assert opened.store is not None, opened.error
print(opened.store.query_one("SELECT count(*) AS n FROM edges")["n"])
print(opened.warning)
from core.store import StoreError
try:
    with opened.store.write("memory_commit"):
        pass
    print("written")
except StoreError as refusal:
    print("refused:", refusal)
"""


def _nobody():
    try:
        import pwd

        return pwd.getpwnam("nobody")
    except (ImportError, KeyError):
        return None


@pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0 or _nobody() is None
                    or not os.path.exists("/usr/bin/python3"),
                    reason="a folder that cannot be written needs another user than root")
def test_a_data_folder_that_cannot_be_written_opens_the_memory_read_only():
    # Not under tmp_path: pytest keeps its folders private, so the other user could not
    # reach this one.
    outer = Path(tempfile.mkdtemp(prefix="trulymem-ro-"))
    try:
        _open_read_only_folder_as_nobody(outer)
    finally:
        for path in (outer, *outer.rglob("*")):
            path.chmod(0o700)
        shutil.rmtree(outer)


def _open_read_only_folder_as_nobody(outer: Path) -> None:
    folder = outer / "home"
    folder.mkdir()
    fill(folder / "graph_memory.db", facts=50)  # closed cleanly: no -wal, no -shm left
    nobody = _nobody()
    for path in (folder, *folder.iterdir()):
        os.chown(path, nobody.pw_uid, nobody.pw_gid)
    folder.chmod(0o500)
    outer.chmod(0o755)
    # A copy of the package the other user can read: the checkout may sit in a private
    # folder (CI clones into one).
    source = Path(__file__).resolve().parent.parent / "core"
    root = outer / "src"
    shutil.copytree(source, root / "core", ignore=shutil.ignore_patterns("__pycache__"))
    for path in (root, *root.rglob("*")):
        path.chmod(0o755 if path.is_dir() else 0o644)
    done = subprocess.run(["/usr/bin/python3", "-c", OPEN_AS_OTHER_USER,
                           str(folder / "graph_memory.db"), str(root)],
                          capture_output=True, text=True, user=nobody.pw_uid,
                          group=nobody.pw_gid, extra_groups=[], cwd="/", check=False)
    lines = done.stdout.splitlines()
    assert lines[:1] == ["50"], done.stdout + done.stderr
    assert "cannot be written" in lines[1] and "read-only" in lines[1]
    assert lines[2].startswith("refused: the data folder") and "cannot be written" in lines[2]


def test_files_a_killed_import_or_backup_left_are_removed_at_start(tmp_path):
    from core.store.opening import LEFTOVER_SECONDS, open_checked

    db = tmp_path / "graph_memory.db"
    folder = tmp_path / "backups"
    folder.mkdir()
    stale = [tmp_path / "graph_memory.db.import-staging",
             tmp_path / "graph_memory.db.import-staging-journal",
             folder / ".graph_memory-20261201-010101.db.partial",
             folder / ".graph_memory-20261201-010101.db.partial-journal"]
    fresh = folder / ".graph_memory-20261202-010101.db.partial"  # another program's, now
    old = time.time() - LEFTOVER_SECONDS - 60
    for path in [*stale, fresh]:
        path.write_bytes(b"x" * 1000)
    for path in stale:
        os.utime(path, (old, old))
    opened = open_checked(db, 30)
    opened.store.close()
    assert not any(p.exists() for p in stale)
    assert fresh.exists()


def test_an_empty_memory_file_without_backups_is_told_and_kept_aside(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "graph_memory.db").write_bytes(b"")
    dispatcher = make_dispatcher(home / "graph_memory.db", home / "config.json", home=home)
    dispatcher.backend.open()
    try:
        status = ask(dispatcher, PacketType.GET_STATUS).data
        assert status["graph_initialized"] and not status["store_error"]
        assert "was empty (0 bytes)" in status["store_notice"]
        kept = list(home.glob("graph_memory.db.empty-*"))
        assert len(kept) == 1 and kept[0].stat().st_size == 0
        assert kept[0].name in status["store_notice"]
        assert ask(dispatcher, PacketType.EXECUTE_TOOL, {"tool_name": "memory_commit",
               "arguments": {"triplets": [{"subject": "User", "relation": "likes",
                                           "object": "tea"}]}}).success
    finally:
        dispatcher.backend.close()


@pytest.fixture
def small_disk():
    """A real 2 MB disk (tmpfs), where this machine lets the tests mount one (as root)."""
    folder = Path(tempfile.mkdtemp(prefix="trulymem-full-"))
    mounted = os.name == "posix" and os.geteuid() == 0 and shutil.which("mount") and \
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(folder)],
                       capture_output=True, check=False).returncode == 0
    if not mounted:
        folder.rmdir()
        pytest.skip("mounting a small disk needs root and mount")
    yield folder
    subprocess.run(["umount", str(folder)], check=False)
    folder.rmdir()


def test_starting_on_a_full_disk_says_the_disk_is_full(small_disk):
    """SQLite says "disk I/O error" when it cannot make its WAL index on a full disk; the
    advice was to restore a backup, which fails the same way."""
    from core.store.opening import open_checked

    home = small_disk / "home"
    home.mkdir()
    store = GraphStore(home / "graph_memory.db")
    ToolExecutor(store).execute("memory_commit", {"triplets": [
        {"subject": "User", "relation": "likes", "object": "tea"}]})
    store.close()
    with open(small_disk / "filler", "wb", buffering=0) as filler, pytest.raises(OSError):
        while True:
            filler.write(b"x" * 4096)
    opened = open_checked(home / "graph_memory.db", 30)
    said = opened.warning or opened.error
    assert "is full" in said and "Free some space" in said, said
    assert "Restore a backup" not in said
    if opened.store is not None:  # readable still: what it knew is there
        assert opened.store.query_one("SELECT count(*) AS n FROM edges")["n"] == 1
        opened.store.close()


def test_a_restore_says_what_it_replaces_and_can_be_undone(tmp_path, opened):
    dispatcher = opened()

    def fact(thing: str) -> None:
        assert ask(dispatcher, PacketType.EXECUTE_TOOL, {"tool_name": "memory_commit",
                                                         "arguments": {"triplets": [
                                                             {"subject": "Ann", "relation":
                                                              "likes", "object": thing}]}})

    def chat(text: str) -> None:
        ask(dispatcher, PacketType.NEW_CONVERSATION)
        assert ask(dispatcher, PacketType.SAVE_HISTORY, {"messages": [
            {"role": "user", "content": text}, {"role": "assistant", "content": "Noted."}]})

    chat("I like tea")
    fact("tea")
    folder = tmp_path / "home" / "backups"
    shutil.rmtree(folder)  # the automatic one came after the first packet: one of now
    backups.make_backup(dispatcher.backend.store.conn, folder)
    fact("coffee")
    chat("I like coffee too")
    listed = ask(dispatcher, PacketType.LIST_BACKUPS).data
    [backup] = listed["backups"]
    assert (backup["facts"], backup["conversations"], backup["messages"]) == (1, 1, 2)
    now = listed["current"]
    assert (now["facts"], now["conversations"], now["messages"]) == (2, 2, 4)
    assert now["last_message_at"] >= backup["last_message_at"] > 0

    restored = ask(dispatcher, PacketType.RESTORE_BACKUP, {"name": backup["name"]})
    assert (restored.data["facts"], restored.data["conversations"]) == (1, 1)
    assert len(ask(dispatcher, PacketType.LIST_CONVERSATIONS).data["conversations"]) == 1
    assert "I like coffee too" not in str(ask(dispatcher, PacketType.GET_HISTORY).data)

    for elsewhere in ("/etc/passwd", "../graph_memory.db", backup["name"],
                      str(tmp_path / "graph_memory.db.before-restore-20260101-000000"), 7):
        refused = ask(dispatcher, PacketType.UNDO_RESTORE, {"kept_aside": elsewhere})
        assert not refused.success and refused.code in ("not_found", "invalid"), elsewhere
    undone = ask(dispatcher, PacketType.UNDO_RESTORE,
                 {"kept_aside": restored.data["kept_aside"]})
    assert undone.success, undone.error
    assert (undone.data["facts"], undone.data["conversations"]) == (2, 2)
    assert os.path.exists(undone.data["kept_aside"])  # the restored state is kept too
    history = ask(dispatcher, PacketType.GET_HISTORY).data
    assert "I like coffee too" in str(history)


def test_a_turn_whose_memory_write_failed_says_nothing_was_saved(headless, llm):
    """The model wrote "Noted." after its write failed on a full disk: the person reads
    under the reply that nothing was saved, there and in the history."""
    import threading

    server, client = headless()
    store = server.backend.store
    asked, answered = threading.Event(), threading.Event()
    # a value longer than a page: it needs a new page, which the full disk refuses
    llm.play({"hold": asked, "tool_calls": [{"name": "persona_update", "arguments": {
        "attributes": [{"attribute": "background", "value": "a long story " * 400}]}}]},
        {"hold": answered, "text": "Noted."})
    turn = threading.Thread(target=lambda: reply.update(client.process_message(
        "call yourself a storyteller")))
    reply: dict = {}
    turn.start()
    try:
        _until(lambda: len(llm.requests) >= 1)  # the message is stored, the model asked
        pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
        store.conn.execute(f"PRAGMA max_page_count = {pages}")  # the disk is full now
        asked.set()
        _until(lambda: len(llm.requests) >= 2)  # the write was tried and failed
        store.conn.execute("PRAGMA max_page_count = 1073741823")  # room for the reply
    finally:
        asked.set()
        answered.set()
        turn.join(60)
    assert reply["success"], reply
    assert reply["content"].startswith("Noted.")
    assert "Not saved to the memory: the disk is full" in reply["content"], reply
    assert reply["not_saved"]
    kept = client.get_history()["history"][-1]["content"]
    assert "Not saved to the memory" in kept


def _until(condition, seconds: float = 60.0) -> None:
    """A handshake: wait until `condition()` holds (fails the test after `seconds`)."""
    import threading
    import time

    pause, give_up = threading.Event(), time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < give_up, "the handshake never came"
        pause.wait(0.01)


def test_a_missing_import_file_is_not_found(headless, tmp_path):
    _server, client = headless()
    answer = client.request(PacketType.IMPORT_MEMORY, {"path": str(tmp_path / "gone.json")})
    assert not answer["success"] and answer["code"] == "not_found", answer
    assert "gone.json" in answer["error"]
