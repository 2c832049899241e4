"""Graph browser benchmark on a store of 100,000 nodes and 300,000 edges.

    QT_QPA_PLATFORM=offscreen python bench/graph_bench.py [--nodes N] [--edges N]

Prints: time to the first rows of the list (target < 300 ms), the longest GUI stall while
scrolling the list to its end (target < 50 ms), time to lay out and draw a 200-node
neighbourhood with its labels (target < 200 ms), the review inbox holding 5,000 changes
the model made (first rows < 300 ms, longest stall while scrolling to its end < 50 ms),
what announcing one change costs the backend, and export and import times. The store is
filled with plain SQL, then the inbox's changes are written by the real tools.
"""

from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path

from options import counts
from PySide6.QtWidgets import QApplication
from qt_probe import GapProbe, offscreen_application, open_ready, wait

from core.protocol.packets import PacketType
from core.store import GraphStore
from core.store.exchange import export_graphml, export_json, import_json
from core.store.text import normalize_name
from core.tools import ToolExecutor

ZH = list("王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗")
GIVEN = ["伟", "芳", "娜", "敏", "静", "丽", "强", "磊", "军", "洋", "明", "小红", "晓东"]
EN = "Alice Bob Carol David Emma Frank Grace Henry Iris Jack Kate Liam Mia Noah".split()
RELATIONS = ["likes", "knows", "lives in", "works at", "visited", "喜欢", "认识", "住在"]


def build_store(path: Path, nodes: int, edges: int) -> None:
    rng = random.Random(7)
    store = GraphStore(path)
    now = time.time()
    with store.conn:
        store.conn.execute("BEGIN")
        rows = []
        for i in range(nodes):
            base = (rng.choice(ZH) + rng.choice(GIVEN)) if i % 2 else rng.choice(EN)
            name = f"{base} {i}"
            rows.append((i + 1, name, normalize_name(name), "entity", None,
                         rng.randint(1, 50), now - rng.random() * 3e7, now))
        store.conn.executemany("INSERT INTO nodes(id, name, norm_name, kind, type,"
                               " mention_count, created_at, updated_at)"
                               " VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
        seen, rows = set(), []
        hub_edges = min(260, nodes - 1)  # node 1 is a hub: its neighbourhood hits the cap
        while len(rows) < edges:
            n = len(rows)
            source = 1 if n < hub_edges else rng.randint(1, nodes)
            target = n + 2 if n < hub_edges else rng.randint(1, nodes)
            relation = rng.choice(RELATIONS)
            key = (source, normalize_name(relation), target)
            if source == target or key in seen:
                continue
            seen.add(key)
            rows.append((source, target, relation, key[1], now, now, now))
        store.conn.executemany("INSERT INTO edges(source_id, target_id, relation,"
                               " norm_relation, valid_from, created_at, updated_at)"
                               " VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    store.close()


def fill_inbox(path: Path, changes: int) -> None:
    """`changes` model changes in turns of ten, each turn with the message that caused it."""
    store = GraphStore(path)
    tools = ToolExecutor(store)
    now = time.time()
    store.conn.execute("INSERT INTO conversations(title, created_at, updated_at)"
                       " VALUES ('Bench', ?, ?)", (now, now))
    for n in range(changes):
        turn = f"bench-turn-{n // 10}"
        if n % 10 == 0:
            store.conn.execute(
                "INSERT INTO messages(role, content, turn_id, created_at, conversation_id)"
                " VALUES ('user', ?, ?, ?, 1)", (f"Message {n // 10}: about 小明 and friends",
                                                 turn, now))
        tools.execute("memory_commit", {"triplets": [
            {"subject": f"Inbox person {n}", "relation": "likes", "object": f"thing {n % 97}",
             "confidence": 0.4 if n % 13 == 0 else 1.0},
            {"subject": f"Inbox person {n}", "relation": "lives in", "object": "上海"}]},
            turn_id=turn, actor="model")
    store.close()


def review_inbox(app: QApplication, home: Path) -> dict[str, float]:
    window = open_ready(app, home, (1400, 900))
    review = window.browser.review
    figures = {}
    started = time.perf_counter()
    window.open_review()
    wait(app, lambda: review.model.rowCount() > 0 and not window.host.busy)
    figures["first_rows_ms"] = (time.perf_counter() - started) * 1000
    figures["count"] = review.count
    probe = GapProbe()
    probe.start()
    started = time.perf_counter()
    bar = review.tree.verticalScrollBar()
    while review.more or review.loading or bar.value() < bar.maximum():
        bar.setValue(bar.maximum())
        app.processEvents()
    figures["scroll_s"] = time.perf_counter() - started
    figures["scroll_stall_ms"] = probe.stop()
    figures["shown"] = len(review._changes())
    window.close()
    return figures


def announce_cost(home: Path) -> tuple[float, float]:
    """What announcing a change costs the backend: the first count of the memory, then
    a commit with its event (counts kept from each change's row images)."""
    from core.backend import Backend
    from core.protocol.dispatcher import Dispatcher
    from core.protocol.packets import Packet

    dispatcher = Dispatcher(Backend(home / "graph_memory.db", home / "config.json"))
    dispatcher.backend.open()
    try:
        started = time.perf_counter()
        dispatcher.handle(Packet.make(PacketType.MEMORY_STATE))
        first = (time.perf_counter() - started) * 1000
        events: list[str] = []
        # memory_changed belongs to no packet: it comes on the backend's own channel
        dispatcher.backend.events = lambda event, _data: events.append(event)
        started = time.perf_counter()
        for n in range(20):
            dispatcher.handle(Packet.make(PacketType.EXECUTE_TOOL, {
                "tool_name": "memory_commit", "arguments": {"triplets": [
                    {"subject": f"Timing {n}", "relation": "likes", "object": "tea"}]}}))
        assert events.count("memory_changed") == 20
        return first, (time.perf_counter() - started) / 20 * 1000
    finally:
        dispatcher.backend.close()


def draw_neighbourhood(app: QApplication, window, node_id: int = 1) -> tuple[float, int]:
    """Milliseconds to lay out and draw the neighbourhood of `node_id` (node 1 is the hub
    of `build_store`, with more neighbours than a picture holds), and how many it drew."""
    answers: list[dict] = []
    window.host.send(PacketType.GET_SUBGRAPH, {"node_id": node_id, "depth": 1},
                     answers.append)
    wait(app, lambda: bool(answers))
    graph = answers[0]["data"]
    started = time.perf_counter()
    window.browser.view.show_graph(graph)
    window.browser.view.viewport().repaint()
    return (time.perf_counter() - started) * 1000, len(graph["nodes"])


def browse(app: QApplication, home: Path) -> dict[str, float]:
    window = open_ready(app, home, (1400, 900))
    browser = window.browser
    model = browser.model
    figures = {}

    started = time.perf_counter()
    window.open_graph()
    wait(app, lambda: model.rowCount() > 0 and model.index(0, 0).data() != "…")
    figures["first_rows_ms"] = (time.perf_counter() - started) * 1000
    figures["total"] = len(model.ids)

    probe = GapProbe()
    probe.start()
    started = time.perf_counter()
    bar = browser.list.verticalScrollBar()
    while model.canFetchMore() or bar.value() < bar.maximum():
        bar.setValue(bar.maximum())
        app.processEvents()
    wait(app, lambda: not window.host.busy)
    figures["scroll_s"] = time.perf_counter() - started
    figures["scroll_stall_ms"] = probe.stop()
    figures["rows_shown"] = model.rowCount()

    figures["draw_ms"], figures["drawn_nodes"] = draw_neighbourhood(app, window)
    figures["labels"] = sum(d.label.isVisible() for d in browser.view.node_items.values())
    window.close()
    return figures


def exchange(home: Path) -> dict[str, float]:
    figures = {}
    store = GraphStore(home / "graph_memory.db")
    try:
        started = time.perf_counter()
        figures["json_bytes"] = export_json(store, home / "export.json")["bytes"]
        figures["export_json_s"] = time.perf_counter() - started
        started = time.perf_counter()
        export_graphml(store, home / "export.graphml")
        figures["export_graphml_s"] = time.perf_counter() - started
    finally:
        store.close()
    empty = GraphStore(home / "imported.db")
    try:
        started = time.perf_counter()
        import_json(empty, home / "export.json")
        figures["import_s"] = time.perf_counter() - started
    finally:
        empty.close()
    return figures


def main() -> None:
    args = counts(__doc__, nodes=100_000, edges=300_000, inbox=5_000)
    app = offscreen_application()
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        started = time.perf_counter()
        build_store(home / "graph_memory.db", args.nodes, args.edges)
        print(f"built a store of {args.nodes:,} nodes and {args.edges:,} edges in "
              f"{time.perf_counter() - started:.1f} s")
        started = time.perf_counter()
        fill_inbox(home / "graph_memory.db", args.inbox)
        print(f"wrote {args.inbox:,} model changes for the inbox in "
              f"{time.perf_counter() - started:.1f} s")
        f = browse(app, home)
        print(f"first rows of the list: {f['first_rows_ms']:.0f} ms for {f['total']:,} nodes "
              "(target < 300 ms)")
        print(f"scrolled to the end ({f['rows_shown']:,} rows, {f['scroll_s']:.1f} s): "
              f"longest GUI stall {f['scroll_stall_ms']:.1f} ms (target < 50 ms)")
        print(f"neighbourhood of {f['drawn_nodes']} nodes ({f['labels']} labels always "
              f"shown) laid out and drawn in {f['draw_ms']:.0f} ms (target < 200 ms)")
        r = review_inbox(app, home)
        print(f"review inbox of {r['count']:,} changes: first rows {r['first_rows_ms']:.0f} ms "
              f"(target < 300 ms); scrolled to the end ({r['shown']:,} changes, "
              f"{r['scroll_s']:.1f} s): longest GUI stall {r['scroll_stall_ms']:.1f} ms "
              "(target < 50 ms)")
        first, commit = announce_cost(home)
        print(f"counting the memory once: {first:.0f} ms; then a commit with its "
              f"announcement (counts and review count): {commit:.1f} ms")
        e = exchange(home)
        print(f"export JSON {e['export_json_s']:.1f} s ({e['json_bytes'] / 1e6:.0f} MB), "
              f"export GraphML {e['export_graphml_s']:.1f} s, import JSON into an empty "
              f"store {e['import_s']:.1f} s")


if __name__ == "__main__":
    main()
