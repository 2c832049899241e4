"""Three devices edit offline and their files arrive late, twice, out of order or not at
all until the end: once everything has arrived, every device holds the same memory and
the same conversations, and nothing applied was refused (a property test)."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.errors import CodedError
from core.store import GraphStore, browse
from core.store.conversations import create as new_conversation
from core.sync.service import PRUNE_AGE, DeviceSync
from core.tools import corrections
from core.tools.executor import ToolExecutor

NAMES = ["User", "Ann", "Bob", "Hangzhou", "Paris", "tea", "杭州", "Acme"]
RELATIONS = ["likes", "lives in", "works at", "knows"]

OPERATIONS = st.lists(st.tuples(
    st.integers(0, 2),
    st.sampled_from(["commit", "commit", "rename", "delete_edge", "delete_node", "undo",
                     "message", "describe", "merge", "write", "prune", "deliver",
                     "apply"]),
    st.integers(0, 10_000)), min_size=5, max_size=40)


class Device:
    def __init__(self, root: Path, name: str) -> None:
        self.home = root / name
        self.home.mkdir()
        self.store = GraphStore(self.home / "graph_memory.db")
        self.sync = DeviceSync(self.store, self.home)
        self.tools = ToolExecutor(self.store)

    def folder(self) -> Path:
        return Path(self.sync.status()["folder"])

    def do(self, kind: str, pick: int) -> None:
        store, rng = self.store, random.Random(pick)
        nodes = [r["id"] for r in store.query("SELECT id FROM nodes ORDER BY id")]
        edges = [r["id"] for r in store.query("SELECT id FROM edges ORDER BY id")]
        corrected = {
            "rename": lambda: corrections.rename_node(
                store, rng.choice(nodes), rng.choice(NAMES) + rng.choice(["", "2"])),
            "describe": lambda: store.update("nodes", rng.choice(nodes),
                                             {"description": str(pick)}),
            "delete_edge": lambda: corrections.delete_edge(store, rng.choice(edges)),
            "delete_node": lambda: corrections.delete_node(store, rng.choice(nodes)),
            "merge": lambda: corrections.merge_nodes(store, *rng.sample(nodes, 2)),
        }
        needs = {"delete_edge": edges, "merge": nodes[1:]}
        try:
            if kind in corrected and (needs.get(kind, nodes)):
                with store.write("correct_memory", actor="user"):
                    corrected[kind]()
            elif kind in ("commit", "undo", "message", "write", "prune", "apply"):
                getattr(self, f"_{kind}")(rng, pick)
        except CodedError:
            pass  # a correction this memory refuses (a name taken, nothing to undo)

    def _commit(self, rng: random.Random, _pick: int) -> None:
        self.tools.execute("memory_commit", {"triplets": [{
            "subject": rng.choice(NAMES), "relation": rng.choice(RELATIONS),
            "object": rng.choice(NAMES)}]}, actor="user")

    def _undo(self, _rng: random.Random, _pick: int) -> None:
        last = browse.last_undoable(self.store)
        if last is not None:
            self.store.undo(last)

    def _message(self, _rng: random.Random, pick: int) -> None:
        store = self.store
        conversation = new_conversation(store, f"chat {pick}")
        store.conn.execute(
            "INSERT INTO messages(id, role, content, created_at, conversation_id)"
            " VALUES (?, 'user', ?, ?, ?)",
            (store.new_id("messages"), f"message {pick}", float(pick), conversation))

    def _write(self, _rng: random.Random, _pick: int) -> None:
        self.sync.write()

    def _prune(self, _rng: random.Random, _pick: int) -> None:
        """Its files so far are old: they go, a snapshot stays."""
        self.sync.prune_age = 0
        self.sync.write()
        self.sync.prune_age = PRUNE_AGE

    def _apply(self, _rng: random.Random, _pick: int) -> None:
        self.sync.apply_all()

    def state(self) -> dict:
        return {table: self.store.query(f"SELECT * FROM {table} ORDER BY id")
                for table in ("nodes", "edges", "conversations", "messages")}


def _differences(one: dict, other: dict) -> list:
    """The rows two states hold differently, for a readable failure."""
    found = []
    for table, rows in one.items():
        mine = {r["id"]: r for r in rows}
        theirs = {r["id"]: r for r in other[table]}
        for row_id in sorted(set(mine) | set(theirs)):
            if mine.get(row_id) != theirs.get(row_id):
                a, b = mine.get(row_id) or {}, theirs.get(row_id) or {}
                found.append((table, row_id, {k: (a.get(k), b.get(k)) for k in set(a) | set(b)
                                              if a.get(k) != b.get(k)}))
    return found


def deliver(source: Device, target: Device, rng: random.Random, everything: bool) -> None:
    """Carry some (or all) of `source`'s files into `target`'s copy of the folder, as a
    syncing app would: new files, rewritten ones, and removals (pruned files)."""
    theirs = source.folder()
    device = source.sync.status()["device"]
    into = target.folder() / device
    into.mkdir(parents=True, exist_ok=True)
    present = {p.name for p in (theirs / device).iterdir() if not p.name.startswith(".")}
    for path in sorted((theirs / device).iterdir()):
        if path.name in present and (everything or rng.random() < 0.5):
            shutil.copyfile(path, into / path.name)  # again when it is there: no matter
    for path in into.iterdir():
        if path.name not in present and (everything or rng.random() < 0.5):
            path.unlink()


# Derandomized: the same examples on every run, so CI never fails on a new draw; the
# exploratory runs behind the README's figures drew hundreds more at random.
@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(OPERATIONS)
def test_three_devices_converge_whatever_the_order_files_arrive_in(tmp_path_factory,
                                                                   operations):
    root = tmp_path_factory.mktemp("devices")
    devices = [Device(root, name) for name in ("laptop", "desktop", "phone")]
    try:
        _pair(root, devices)
        for who, kind, pick in operations:
            if kind == "deliver":
                source = devices[(who + 1 + pick % 2) % 3]
                deliver(source, devices[who], random.Random(pick), everything=False)
            else:
                devices[who].do(kind, pick)
        for _ in range(3):  # everything arrives at last
            _everything_arrives(devices)
        for device in devices:
            assert device.sync.status()["refused"] == []
            assert device.store.integrity_problems() == []
        first = devices[0].state()
        for device in devices[1:]:
            assert _differences(device.state(), first) == []
        # no acknowledged write is lost: every change any device logged is on every device
        logged = [{r["id"] for r in d.store.query("SELECT id FROM change_log")}
                  for d in devices]
        assert logged[0] == logged[1] == logged[2] == set().union(*logged)
    finally:
        for device in devices:
            device.store.close()


def _pair(root: Path, devices: list[Device]) -> None:
    """Each starts with memories of its own, then joins the laptop's set through its own
    copy of the shared folder."""
    for index, device in enumerate(devices):
        device.do("commit", index)
    code = devices[0].sync.start(root / "laptop-sync", "laptop")["code"]
    for index, device in enumerate(devices[1:], 1):
        folder = root / f"{index}-sync"
        shutil.copytree(root / "laptop-sync", folder)
        device.sync.join(folder, code, f"device{index}")


def _everything_arrives(devices: list[Device]) -> None:
    for device in devices:
        device.sync.write()
    for source in devices:
        for target in devices:
            if source is not target:
                deliver(source, target, random.Random(0), everything=True)
    for device in devices:
        device.sync.apply_all()
