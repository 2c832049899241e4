"""A restore killed at any step leaves a whole memory where the app looks for it, and
the next start finishes what the person asked for; a memory file that is missing while
backups or kept copies exist is told, never silently replaced by an empty one."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from core.protocol.packets import PacketType
from core.protocol.server import BackendServer
from core.store import GraphStore
from core.store.backups import backup_folder, make_backup
from core.store.opening import open_checked
from core.store.restoring import journal_path, kept_aside_files, partial_path
from core.tools import ToolExecutor


def _memory_with(path: Path, *things: str) -> None:
    store = GraphStore(path)
    try:
        tools = ToolExecutor(store)
        for thing in things:
            assert tools.execute("memory_commit", {"triplets": [
                {"subject": "User", "relation": "likes", "object": thing}]})["success"]
    finally:
        store.close()


def _liked(path: Path) -> list[str]:
    store = GraphStore(path, read_only="the test reads")
    try:
        return sorted(r["name"] for r in store.query(
            "SELECT t.name FROM edges e JOIN nodes t ON t.id = e.target_id"
            " WHERE e.status = 'active'"))
    finally:
        store.close()


@pytest.fixture
def home(tmp_path) -> Path:
    """A memory that likes tea, backed up, and then also likes coffee."""
    folder = tmp_path / "home"
    folder.mkdir()
    db = folder / "graph_memory.db"
    _memory_with(db, "tea")
    store = GraphStore(db)
    try:
        make_backup(store.conn, backup_folder(db))
    finally:
        store.close()
    _memory_with(db, "coffee")
    return folder


# Each step of a restore where the process may die: after the named function returned,
# or (for os.replace) just before the swap itself.
KILL_POINTS = ["_copy_whole", "_write_journal", "_keep_aside", "os.replace"]
CHILD = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from core.store import restoring
    from core.store.backups import backup_files, backup_folder

    db, point = Path(sys.argv[1]), sys.argv[2]

    def die():
        os.kill(os.getpid(), signal.SIGKILL)

    if point == "os.replace":
        real = os.replace
        def replace(source, target, *args, **kwargs):
            if Path(target) == db:
                die()
            return real(source, target, *args, **kwargs)
        restoring.os.replace = replace
    else:
        step = getattr(restoring, point)
        def then_die(*args, **kwargs):
            step(*args, **kwargs)
            die()
        setattr(restoring, point, then_die)
    restoring.restore(db, backup_files(backup_folder(db))[0])
""")


@pytest.mark.parametrize("point", KILL_POINTS)
def test_a_restore_killed_at_any_step_leaves_a_whole_memory(home, point):
    db = home / "graph_memory.db"
    child = subprocess.run([sys.executable, "-c", CHILD, str(db), point],
                           capture_output=True, text=True, timeout=120, check=False)
    assert child.returncode == -9, child.stderr
    assert db.exists()  # never a moment without the memory file
    opened = open_checked(db, 30)
    try:
        assert opened.store is not None and opened.error is None
        assert opened.store.quick_check() == []
    finally:
        if opened.store is not None:
            opened.store.close()
    liked = _liked(db)
    if point == "_copy_whole":  # killed before the journal: the memory is as it was
        assert liked == ["coffee", "tea"] and opened.notice is None
    else:  # the journal was written: the restore the person asked for is finished
        assert liked == ["tea"], point
        assert "it was finished now" in opened.notice
        kept = kept_aside_files(db)
        assert len(kept) == 1 and kept[0].name in opened.notice
        assert _liked(kept[0]) == ["coffee", "tea"]  # what they had is kept
    assert not journal_path(db).exists()
    # a copy no journal names is a leftover, removed once no restore can be writing it
    assert not partial_path(db).exists() or point == "_copy_whole"


def test_an_old_kind_of_interrupted_restore_is_finished_at_start(home):
    """The earlier restore moved the memory aside and was killed before moving the
    restored copy in: no memory file, a whole `.restoring` copy beside it."""
    db = home / "graph_memory.db"
    restoring_copy = partial_path(db)
    store = GraphStore(restoring_copy)
    store.close()
    _memory_with(restoring_copy, "tea")
    db.rename(db.with_name(f"{db.name}.before-restore-20261203-120000"))
    opened = open_checked(db, 30)
    try:
        assert opened.store is not None and "finished now" in opened.notice
    finally:
        opened.store.close()
    assert _liked(db) == ["tea"]


def test_a_missing_memory_with_backups_is_told_with_the_way_back(home):
    db = home / "graph_memory.db"
    db.unlink()
    server = BackendServer(home=home)
    server.start()
    try:
        status = server.backend.status()
        assert "missing" in status["store_error"] and "1 backup" in status["store_error"]
        assert not db.exists()  # nothing empty was made in its place
        listed = server.dispatcher.handle(_packet(PacketType.LIST_BACKUPS))
        name = listed.data["backups"][0]["name"]
        restored = server.dispatcher.handle(_packet(PacketType.RESTORE_BACKUP,
                                                    {"name": name}))
        assert restored.success, restored.error
        assert server.backend.store is not None and _liked(db) == ["tea"]
    finally:
        server.shutdown()


def test_a_missing_memory_with_only_a_kept_copy_comes_back_from_it(home):
    db = home / "graph_memory.db"
    for backup in backup_folder(db).iterdir():
        backup.unlink()
    aside = db.with_name(f"{db.name}.before-restore-20261203-120000")
    db.rename(aside)
    server = BackendServer(home=home)
    server.start()
    try:
        assert "1 copy kept aside" in server.backend.status()["store_error"]
        listed = server.dispatcher.handle(_packet(PacketType.LIST_BACKUPS)).data
        assert [c["name"] for c in listed["kept_aside"]] == [aside.name]
        back = server.dispatcher.handle(_packet(PacketType.UNDO_RESTORE,
                                                {"kept_aside": aside.name}))
        assert back.success, back.error
        assert _liked(db) == ["coffee", "tea"]
    finally:
        server.shutdown()


def test_a_first_start_still_makes_a_new_memory(tmp_path):
    opened = open_checked(tmp_path / "graph_memory.db", 30)
    try:
        assert opened.store is not None and opened.error is None
    finally:
        opened.store.close()


def _packet(kind: PacketType, body: dict | None = None):
    from core.protocol.packets import Packet

    return Packet.make(kind, body)
