"""Sync between devices through a shared folder: each device a real SQLite file, the
folder a real folder, the files sealed and signed for real."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core.errors import CodedError
from core.store import GraphStore, browse
from core.store.conversations import create as new_conversation
from core.store.text import match_query
from core.sync.hlc import HybridClock
from core.sync.schedule import APPLY_EVERY, SyncSchedule
from core.sync.service import DeviceSync, SyncError
from core.tools.executor import ToolExecutor
from tests.conftest import closed_after


class Device:
    """One device: its own data folder, memory file and view of the shared folder."""

    def __init__(self, root: Path, name: str) -> None:
        self.home = root / name
        self.home.mkdir()
        self.name = name
        self.store = GraphStore(self.home / "graph_memory.db")
        self.sync = DeviceSync(self.store, self.home)
        self.tools = ToolExecutor(self.store)

    def commit(self, *facts: tuple[str, str, str]) -> None:
        result = self.tools.execute("memory_commit", {"triplets": [
            {"subject": s, "relation": r, "object": o} for s, r, o in facts]}, actor="user")
        assert result["success"], result

    def facts(self) -> list[tuple[str, str, str, str]]:
        return sorted((r["s"], r["relation"], r["t"], r["status"]) for r in self.store.query(
            "SELECT s.name AS s, e.relation, t.name AS t, e.status FROM edges e"
            " JOIN nodes s ON s.id = e.source_id JOIN nodes t ON t.id = e.target_id"))

    def state(self) -> dict:
        """What must be the same on every device: the memory and the conversations."""
        return {table: self.store.query(f"SELECT * FROM {table} ORDER BY id")
                for table in ("nodes", "edges", "conversations", "messages")}


@pytest.fixture
def devices(tmp_path):
    yield from closed_after(lambda name: Device(tmp_path, name),
                            lambda device: device.store.close())


@pytest.fixture
def shared(tmp_path) -> Path:
    return tmp_path / "Sync"


def pair(shared: Path, first: Device, *others: Device) -> str:
    code = first.sync.start(shared, first.name)["code"]
    for other in others:
        other.sync.join(shared, code, other.name)
    return code


def settle(*devices: Device) -> None:
    """Sync every device until nothing moves."""
    for _ in range(4):
        for device in devices:
            device.sync.sync_now()


def test_two_memories_made_apart_become_one_with_the_same_person_merged(devices, shared):
    laptop, desktop = devices("laptop"), devices("desktop")
    laptop.commit(("User", "lives in", "Hangzhou"), ("User", "likes", "tea"))
    desktop.commit(("User", "works at", "Acme"), ("User", "likes", "tea"))
    pair(shared, laptop, desktop)
    settle(laptop, desktop)
    expected = [("User", "likes", "tea", "active"), ("User", "likes", "tea", "superseded"),
                ("User", "lives in", "Hangzhou", "active"),
                ("User", "works at", "Acme", "active")]
    assert laptop.facts() == desktop.facts() == expected
    assert laptop.state() == desktop.state()
    assert len(laptop.store.query("SELECT id FROM nodes WHERE name = 'User'")) == 1
    for device in (laptop, desktop):  # the full-text index follows what was applied
        assert device.store.query("SELECT rowid FROM edge_fts WHERE edge_fts MATCH 'acme'")
        assert device.store.integrity_problems() == []


def test_ids_made_on_two_devices_never_meet(devices, shared):
    laptop, desktop = devices("laptop"), devices("desktop")
    laptop.commit(("Ann", "knows", "Bob"))
    desktop.commit(("Cy", "knows", "Dee"))
    pair(shared, laptop, desktop)
    laptop.commit(("Eve", "knows", "Fay"))
    desktop.commit(("Gus", "knows", "Hal"))
    settle(laptop, desktop)
    assert laptop.state() == desktop.state()
    assert len(laptop.facts()) == 4


def test_the_later_write_wins_a_column_on_every_device_and_the_loss_is_listed(
        devices, shared):
    laptop, desktop = devices("laptop"), devices("desktop")
    laptop.commit(("Python", "is", "language"))
    pair(shared, laptop, desktop)
    settle(laptop, desktop)
    node = laptop.store.find_node("Python")["id"]
    with laptop.store.write("correct", actor="user"):
        laptop.store.update("nodes", node, {"description": "a language"})
    with desktop.store.write("correct", actor="user"):
        desktop.store.update("nodes", node, {"description": "a snake"})  # later
    settle(laptop, desktop)
    assert laptop.store.find_node("Python")["description"] == "a snake"
    assert desktop.store.find_node("Python")["description"] == "a snake"
    for device in (laptop, desktop):  # listed once on each, the loser told too
        assert [(c["col"], c["kept"], c["lost"]) for c in device.sync.conflicts()] == [
            ("description", "a snake", "a language")]


def test_a_clock_an_hour_ahead_does_not_win_forever(devices, shared, monkeypatch):
    laptop, desktop = devices("laptop"), devices("desktop")
    laptop.commit(("Tea", "is", "drink"))
    pair(shared, laptop, desktop)
    settle(laptop, desktop)
    node = laptop.store.find_node("Tea")["id"]
    real = HybridClock.tick

    def ahead(self):  # the laptop's clock runs an hour fast
        if self.device == laptop.sync.status()["device"]:
            self.wall = lambda: __import__("time").time() + 3600
        return real(self)

    monkeypatch.setattr(HybridClock, "tick", ahead)
    with laptop.store.write("correct", actor="user"):
        laptop.store.update("nodes", node, {"description": "green"})
    settle(laptop, desktop)
    with desktop.store.write("correct", actor="user"):  # made after seeing the laptop's
        desktop.store.update("nodes", node, {"description": "black"})
    settle(laptop, desktop)
    assert laptop.store.find_node("Tea")["description"] == "black"
    assert desktop.store.find_node("Tea")["description"] == "black"


def test_undo_on_one_device_travels_and_a_removed_row_comes_back_whole(devices, shared):
    laptop, desktop = devices("laptop"), devices("desktop")
    pair(shared, laptop, desktop)
    laptop.commit(("Ann", "likes", "tea"))
    settle(laptop, desktop)
    assert desktop.facts() == [("Ann", "likes", "tea", "active")]
    change = laptop.store.query_one("SELECT max(id) AS id FROM change_log")["id"]
    assert laptop.tools.undo(change)["success"]  # removes the rows it made
    settle(laptop, desktop)
    assert desktop.facts() == laptop.facts() == []
    undo = laptop.store.query_one("SELECT max(id) AS id FROM change_log")["id"]
    assert laptop.tools.undo(undo)["success"]  # a redo: the rows come back whole
    settle(laptop, desktop)
    assert desktop.facts() == laptop.facts() == [("Ann", "likes", "tea", "active")]
    assert laptop.state() == desktop.state()


def test_the_change_log_says_which_device_made_each_change(devices, shared):
    laptop, desktop = devices("laptop"), devices("desktop")
    pair(shared, laptop, desktop)
    laptop.commit(("Ann", "likes", "tea"))
    settle(laptop, desktop)
    laptop_id = laptop.sync.status()["device"]
    rows = desktop.store.query("SELECT device, tool FROM change_log")
    assert rows == [{"device": laptop_id, "tool": "memory_commit"}]
    edge = desktop.store.query_one("SELECT id FROM edges")["id"]
    assert desktop.store.query("SELECT change_id FROM change_rows WHERE tbl = 'edges' AND"
                               " row_id = ?", (edge,))  # the fact's Changes tab


def test_conversations_and_messages_travel(devices, shared):
    laptop, desktop = devices("laptop"), devices("desktop")
    pair(shared, laptop, desktop)
    conversation = new_conversation(laptop.store, "Trip to Hangzhou")
    laptop.store.conn.execute(
        "INSERT INTO messages(id, role, content, created_at, conversation_id) VALUES"
        " (?, 'user', '我们周末去杭州', 1.0, ?)", (laptop.store.new_id("messages"),
                                            conversation))
    settle(laptop, desktop)
    assert desktop.store.query("SELECT title FROM conversations") == [
        {"title": "Trip to Hangzhou"}]
    assert desktop.store.query("SELECT content FROM messages") == [{"content": "我们周末去杭州"}]
    assert desktop.store.query("SELECT rowid FROM message_fts WHERE message_fts MATCH"
                               " ?", (match_query("杭州"),))


def test_what_syncthing_leaves_in_the_folder_is_passed_over(devices, shared):
    """The README's Syncthing walk-through says nothing needs ignoring: its folder marker,
    the temporary file of a file being carried and a conflict copy are not ours."""
    laptop, desktop = devices("laptop"), devices("desktop")
    pair(shared, laptop, desktop)
    laptop.commit(("User", "lives in", "Hangzhou"))
    laptop.sync.sync_now()
    (shared / ".stfolder").mkdir()
    device_dir = next(p for p in shared.iterdir() if p.is_dir() and p.name != ".stfolder")
    written = sorted(device_dir.glob("*.tmsync"))[-1]
    (device_dir / f".syncthing.{written.name}.tmp").write_bytes(written.read_bytes()[:40])
    (device_dir / f"{written.stem}.sync-conflict-20261205-120000-ABCDEFG.tmsync"
     ).write_bytes(b"junk")
    settle(laptop, desktop)
    assert ("User", "lives in", "Hangzhou", "active") in desktop.facts()
    assert not desktop.sync.status()["refused"]


def test_a_joining_memory_keeps_its_history_and_can_still_undo(devices, shared):
    laptop, desktop = devices("laptop"), devices("desktop")
    desktop.commit(("Ann", "likes", "tea"))
    desktop.commit(("Ann", "likes", "coffee"))
    before = desktop.facts()
    pair(shared, laptop, desktop)
    assert desktop.facts() == before
    assert desktop.store.integrity_problems() == []
    last = desktop.store.query_one("SELECT max(id) AS id FROM change_log")["id"]
    assert desktop.tools.undo(last)["success"]
    assert desktop.facts() == [("Ann", "likes", "tea", "active")]
    settle(laptop, desktop)
    assert laptop.facts() == desktop.facts()
    assert (desktop.home / "sync.key").stat().st_mode & 0o077 == 0
    assert list((desktop.home / "backups").glob("*.db"))  # a backup before the first sync


def test_joining_with_a_wrong_code_or_a_folder_without_a_set_is_refused(devices, shared,
                                                                       tmp_path):
    laptop, desktop = devices("laptop"), devices("desktop")
    pair(shared, laptop)
    with pytest.raises(SyncError, match="not the code"):
        desktop.sync.join(shared, "AAAAA-BBBBB-CCCCC-DDDDD-EEEEE-F")
    with pytest.raises(SyncError, match="holds no sync set"):
        desktop.sync.join(tmp_path / "empty", laptop.sync._secrets().code)
    with pytest.raises(CodedError, match="26 letters"):
        desktop.sync.join(shared, "too short")
    assert desktop.sync.status() == {"joined": False}


# -- a hostile folder --------------------------------------------------------------------

@pytest.fixture
def hostile(devices, shared):
    """Two paired devices, the laptop's first fact applied on the desktop; answers
    (laptop, desktop, the laptop's folder in the shared folder)."""
    laptop, desktop = devices("laptop"), devices("desktop")
    pair(shared, laptop, desktop)
    laptop.commit(("Ann", "likes", "tea"))
    settle(laptop, desktop)
    return laptop, desktop, shared / laptop.sync.status()["device"]


def _refused_whole(desktop: Device, reason: str) -> None:
    before = desktop.state()
    result = desktop.sync.sync_now()
    assert len(result["refused"]) == 1, result  # said once, however often it is tried
    assert reason in result["refused"][0]["reason"], result["refused"]
    assert desktop.state() == before
    assert desktop.sync.status()["refused"]


def _next_file(laptop: Device) -> Path:
    laptop.commit(("Ann", "likes", "cake"))
    return Path(laptop.sync.status()["folder"]) / laptop.sync.status()["device"] / \
        laptop.sync.write()["file"]


def test_a_truncated_file_is_refused_and_applied_once_it_is_whole(hostile):
    laptop, desktop, _ = hostile
    path = _next_file(laptop)
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) // 2])
    _refused_whole(desktop, "does not open")
    path.write_bytes(whole)  # the syncing app finished carrying it
    assert desktop.sync.sync_now()["refused"] == []
    assert ("Ann", "likes", "cake", "active") in desktop.facts()
    assert desktop.sync.status()["refused"] == []


def test_a_replayed_file_is_refused(hostile):
    laptop, desktop, folder = hostile
    first = sorted(folder.glob("*.tmsync"))[0]
    shutil.copy(first, folder / "0000000099.tmsync")
    seq = laptop.sync.status()["seq"]
    shutil.copy(first, folder / f"{seq + 1:010d}.tmsync")
    _refused_whole(desktop, "not its name's")


def test_a_file_from_an_unpaired_device_is_refused(hostile, devices, tmp_path):
    _laptop, desktop, folder = hostile
    stranger = devices("stranger")
    stranger.commit(("Mallory", "owns", "everything"))
    stranger.sync.start(tmp_path / "elsewhere")
    their = next((tmp_path / "elsewhere").glob("*/*.tmsync"))
    (folder.parent / their.parent.name).mkdir()
    shutil.copy(their, folder.parent / their.parent.name / their.name)
    _refused_whole(desktop, "does not open with this sync set's key")


def test_a_file_with_a_forged_device_is_refused(hostile, devices, shared):
    laptop, desktop, folder = hostile
    # A file of the desktop's own, put in the laptop's folder as the laptop's next one
    desktop.commit(("Eve", "is", "here"))
    theirs = shared / desktop.sync.status()["device"] / desktop.sync.write()["file"]
    seq = laptop.sync.status()["seq"]
    other = devices("third")
    other.sync.join(shared, laptop.sync._secrets().code)
    shutil.copy(theirs, folder / f"{seq + 1:010d}.tmsync")
    before = other.state()
    result = other.sync.sync_now()
    assert any("names another device" in r["reason"] for r in result["refused"])
    assert other.state() == before


def test_a_paired_device_cannot_sign_in_anothers_name(hostile, shared):
    laptop, desktop, folder = hostile
    # The desktop holds the set key, and writes a file claiming to be the laptop's.
    from core.sync import sealed

    seq = laptop.sync.status()["seq"]
    forged = sealed.seal(desktop.sync._secrets().key,
                         {"set": laptop.sync.status()["set"], "device": folder.name,
                          "seq": seq + 1, "slot": 1, "name": "laptop", "schema": 17,
                          "seen": {}}, {"device": folder.name, "changes": []},
                         sealed.new_signing_key())
    (folder / f"{seq + 1:010d}.tmsync").write_bytes(forged)
    _refused_whole(desktop, "signed by another key")


def test_a_two_gigabyte_file_is_refused_without_being_read(hostile):
    laptop, desktop, folder = hostile
    seq = laptop.sync.status()["seq"]
    with open(folder / f"{seq + 1:010d}.tmsync", "wb") as huge:
        huge.truncate(2 << 30)  # sparse: no disk is used
    _refused_whole(desktop, "larger than a change file can be")


def test_a_file_from_a_newer_version_is_refused_and_nothing_is_applied(hostile):
    laptop, desktop, folder = hostile
    from core.sync import sealed

    seq = laptop.sync.status()["seq"]
    kept = laptop.sync._secrets()
    newer = sealed.seal(kept.key, {"set": kept.key.set_id, "device": folder.name,
                                   "seq": seq + 1, "slot": 1, "name": "laptop",
                                   "schema": 999, "seen": {}},
                        {"device": folder.name, "changes": []}, kept.signing)
    (folder / f"{seq + 1:010d}.tmsync").write_bytes(newer)
    _refused_whole(desktop, "update TrulyMEM on this device")


def test_a_file_waits_for_the_files_it_had_seen(devices, shared, tmp_path):
    laptop, desktop, phone = devices("laptop"), devices("desktop"), devices("phone")
    pair(shared, laptop, desktop, phone)
    laptop.commit(("Ann", "likes", "tea"))
    laptop.sync.write()
    desktop.sync.apply_all()
    with desktop.store.write("correct", actor="user"):  # an edit of the laptop's fact
        edge = desktop.store.query_one("SELECT id FROM edges")["id"]
        desktop.store.update("edges", edge, {"confidence": 0.5})
    desktop.sync.write()
    laptop_folder = shared / laptop.sync.status()["device"]
    aside = tmp_path / "aside"
    shutil.move(laptop_folder, aside)  # the laptop's files have not reached the phone
    phone.sync.apply_all()
    assert phone.facts() == []  # the desktop's edit waits for the fact it edits
    waiting = phone.store.query_one("SELECT seq FROM sync_devices WHERE device = ?",
                                    (desktop.sync.status()["device"],))
    assert waiting is None or waiting["seq"] < desktop.sync.status()["seq"]
    shutil.move(aside, laptop_folder)
    phone.sync.apply_all()
    assert phone.store.query("SELECT confidence FROM edges") == [{"confidence": 0.5}]
    settle(laptop, desktop, phone)
    assert phone.state() == laptop.state() == desktop.state()


# -- a folder that does not grow without end ---------------------------------------------

def test_a_device_away_while_the_others_pruned_their_files_catches_up_from_a_snapshot(
        devices, shared):
    laptop, desktop, phone = devices("laptop"), devices("desktop"), devices("phone")
    pair(shared, laptop, desktop, phone)
    settle(laptop, desktop, phone)
    laptop.sync.prune_age = 0  # every file but the newest is old enough to go
    for n in range(5):
        laptop.commit((f"Friend {n}", "knows", "User"))
        laptop.sync.write()
    desktop.sync.sync_now()
    laptop_folder = shared / laptop.sync.status()["device"]
    assert sorted(p.name for p in laptop_folder.glob("*.tmsync"))[-1] == "snapshot.tmsync"
    assert len(list(laptop_folder.glob("0*.tmsync"))) == 1  # the rest were pruned
    result = phone.sync.sync_now()  # away all along: its next files are gone
    assert result["refused"] == []
    assert phone.facts() == laptop.facts() == desktop.facts()
    assert len(phone.facts()) == 5
    assert list((phone.home / "backups").glob("*.db"))  # a backup before the snapshot
    laptop.commit(("Friend 9", "knows", "User"))  # and the files after it apply as usual
    settle(laptop, desktop, phone)
    assert phone.state() == laptop.state() == desktop.state()


def test_a_device_joining_after_files_were_pruned_starts_from_the_snapshots(devices,
                                                                           shared):
    laptop, desktop = devices("laptop"), devices("desktop")
    code = pair(shared, laptop)
    laptop.sync.prune_age = 0
    for n in range(3):
        laptop.commit((f"Friend {n}", "knows", "User"))
        laptop.sync.write()
    desktop.commit(("User", "likes", "tea"))
    desktop.sync.join(shared, code, "desktop")
    settle(laptop, desktop)
    assert desktop.state() == laptop.state()
    assert len(desktop.facts()) == 4


def test_files_every_device_applied_are_removed_a_hundred_at_a_time(devices, shared):
    laptop, desktop = devices("laptop"), devices("desktop")
    pair(shared, laptop, desktop)
    folder = shared / laptop.sync.status()["device"]
    for n in range(105):
        laptop.commit((f"Friend {n}", "knows", "User"))
        laptop.sync.write()
        if n % 20 == 0:
            desktop.sync.sync_now()  # says, in its next file, how far it applied
    settle(laptop, desktop)
    laptop.commit(("Friend last", "knows", "User"))
    settle(laptop, desktop)
    assert len(list(folder.glob("0*.tmsync"))) < 20
    assert (folder / "snapshot.tmsync").exists()
    assert desktop.state() == laptop.state()


def test_a_device_that_leaves_keeps_its_memory_and_may_join_again(devices, shared):
    laptop, desktop = devices("laptop"), devices("desktop")
    code = pair(shared, laptop, desktop)
    laptop.commit(("Ann", "likes", "tea"))
    settle(laptop, desktop)
    before = desktop.state()
    assert desktop.sync.leave() == {"left": str(shared.resolve())}
    assert desktop.sync.status() == {"joined": False}
    assert desktop.state() == before
    assert not (desktop.home / "sync.key").exists()
    desktop.commit(("Bob", "likes", "coffee"))
    assert desktop.store.query("SELECT * FROM sync_outbox") == []  # no longer recorded
    assert browse.last_undoable(desktop.store) is not None  # every change is its own now
    laptop.commit(("Cy", "likes", "water"))
    laptop.sync.write()
    desktop.sync.join(shared, code, "desktop again")
    settle(laptop, desktop)
    assert desktop.state() == laptop.state()
    assert len(laptop.facts()) == 3


def test_the_window_writes_after_each_change_and_looks_every_two_minutes(devices, shared):
    laptop, desktop = devices("laptop"), devices("desktop")
    pair(shared, laptop, desktop)
    now = [1000.0]
    told = []
    keeper = SyncSchedule(laptop.home, clock=lambda: now[0])
    assert keeper.maybe_apply(laptop.store, lambda *event: told.append(event)) is not None
    assert keeper.maybe_apply(laptop.store, lambda *event: None) is None  # not due yet
    laptop.commit(("Ann", "likes", "tea"))
    assert keeper.after_packet(laptop.store, lambda *event: told.append(event))
    assert not keeper.after_packet(laptop.store, lambda *event: None)  # nothing new
    desktop.sync.apply_all()
    assert desktop.facts() == [("Ann", "likes", "tea", "active")]
    desktop.commit(("Bob", "likes", "coffee"))
    desktop.sync.write()
    now[0] += APPLY_EVERY
    assert keeper.maybe_apply(laptop.store, lambda *event: None)["applied_rows"] > 0
    assert ("Bob", "likes", "coffee", "active") in laptop.facts()
    assert told[-1][0] == "sync" and told[-1][1]["joined"]
    quiet = SyncSchedule(laptop.home, automatic=False)  # a command: only when asked
    laptop.commit(("Cy", "likes", "water"))
    assert not quiet.after_packet(laptop.store, lambda *event: None)
    assert quiet.maybe_apply(laptop.store, lambda *event: None) is None
