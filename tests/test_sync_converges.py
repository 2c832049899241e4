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
from core.sync import folder as layout
from core.sync.service import DeviceSync
from core.tools import corrections
from core.tools.executor import ToolExecutor

NAMES = ["User", "Ann", "Bob", "Hangzhou", "Paris", "tea", "杭州", "Acme"]
RELATIONS = ["likes", "lives in", "works at", "knows"]

OPERATIONS = st.lists(st.tuples(
    st.integers(0, 2),
    st.sampled_from(["commit", "commit", "rename", "delete_edge", "delete_node", "undo",
                     "message", "describe", "merge", "write", "deliver", "apply"]),
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
        try:
            if kind == "commit":
                self.tools.execute("memory_commit", {"triplets": [{
                    "subject": rng.choice(NAMES), "relation": rng.choice(RELATIONS),
                    "object": rng.choice(NAMES)}]}, actor="user")
            elif kind == "rename" and nodes:
                with store.write("correct_memory", actor="user"):
                    corrections.rename_node(store, rng.choice(nodes),
                                            rng.choice(NAMES) + rng.choice(["", "2"]))
            elif kind == "merge" and len(nodes) > 1:
                keep, gone = rng.sample(nodes, 2)
                with store.write("correct_memory", actor="user"):
                    corrections.merge_nodes(store, keep, gone)
            elif kind == "describe" and nodes:
                with store.write("correct_memory", actor="user"):
                    store.update("nodes", rng.choice(nodes), {"description": str(pick)})
            elif kind == "delete_edge" and edges:
                with store.write("correct_memory", actor="user"):
                    corrections.delete_edge(store, rng.choice(edges))
            elif kind == "delete_node" and nodes:
                with store.write("correct_memory", actor="user"):
                    corrections.delete_node(store, rng.choice(nodes))
            elif kind == "undo":
                last = browse.last_undoable(store)
                if last is not None:
                    store.undo(last)
            elif kind == "message":
                conversation = new_conversation(store, f"chat {pick}")
                store.conn.execute(
                    "INSERT INTO messages(id, role, content, created_at, conversation_id)"
                    " VALUES (?, 'user', ?, ?, ?)",
                    (store.new_id("messages"), f"message {pick}", float(pick), conversation))
            elif kind == "write":
                self.sync.write()
            elif kind == "apply":
                self.sync.apply_all()
        except CodedError:
            pass  # a correction this memory refuses (a name taken, nothing to undo)

    def state(self) -> dict:
        return {table: self.store.query(f"SELECT * FROM {table} ORDER BY id")
                for table in ("nodes", "edges", "conversations", "messages")}


def _differences(one: dict, other: dict) -> list:
    """The rows two states hold differently, for a readable failure."""
    found = []
    for table in one:
        mine = {r["id"]: r for r in one[table]}
        theirs = {r["id"]: r for r in other[table]}
        for row_id in sorted(set(mine) | set(theirs)):
            if mine.get(row_id) != theirs.get(row_id):
                a, b = mine.get(row_id) or {}, theirs.get(row_id) or {}
                found.append((table, row_id, {k: (a.get(k), b.get(k)) for k in set(a) | set(b)
                                              if a.get(k) != b.get(k)}))
    return found


def deliver(source: Device, target: Device, rng: random.Random, everything: bool) -> None:
    """Copy some (or all) of `source`'s files into `target`'s copy of the folder."""
    theirs = source.folder()
    device = source.sync.status()["device"]
    for seq, path in sorted(layout.numbered_files(theirs, device).items()):
        if everything or rng.random() < 0.5:
            into = target.folder() / device / path.name
            into.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, into)  # again when it is there already: no matter


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(OPERATIONS)
def test_three_devices_converge_whatever_the_order_files_arrive_in(tmp_path_factory,
                                                                   operations):
    root = tmp_path_factory.mktemp("devices")
    devices = [Device(root, name) for name in ("laptop", "desktop", "phone")]
    try:
        for index, device in enumerate(devices):  # each starts with memories of its own
            device.do("commit", index)
        code = devices[0].sync.start(root / "laptop-sync", "laptop")["code"]
        for index, device in enumerate(devices[1:], 1):
            folder = root / f"{index}-sync"
            shutil.copytree(root / "laptop-sync", folder)  # its copy of the shared folder
            device.sync.join(folder, code, f"device{index}")
        for who, kind, pick in operations:
            device = devices[who]
            if kind == "deliver":
                source = devices[(who + 1 + pick % 2) % 3]
                deliver(source, device, random.Random(pick), everything=False)
            else:
                device.do(kind, pick)
        for _ in range(3):  # everything arrives at last
            for device in devices:
                device.sync.write()
            for source in devices:
                for target in devices:
                    if source is not target:
                        deliver(source, target, random.Random(0), everything=True)
            for device in devices:
                device.sync.apply_all()
        for device in devices:
            assert device.sync.status()["refused"] == []
            assert device.store.integrity_problems() == []
        first = devices[0].state()
        for device in devices[1:]:
            assert _differences(device.state(), first) == []
    finally:
        for device in devices:
            device.store.close()
