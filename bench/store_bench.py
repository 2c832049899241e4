"""Graph store benchmark: recall latency, commit throughput, bytes per edge, recall size.

Builds stores of 10,000 and 100,000 edges (and 1,000,000 with --million) from generated
mixed English and Chinese memories, through the same tool calls the model makes.

    python bench/store_bench.py [--million] [--queries N] [--no-meaning] [--embed-all]

Targets at 100,000 edges: recall p50 < 5 ms, p99 < 25 ms; >= 1,000 commit calls/s.

Recall by meaning (unless --no-meaning), at 100,000 and 1,000,000 edges: the indexer's
throughput (a sample of EMBED_SAMPLE facts embedded for real; --embed-all embeds every
fact, about 12 minutes per 100,000), the index's build and load time, recall p50 and p99
with the query's embedding, with the other core idle and busy, the resident memory the
vectors and the model add, and commit calls/s while the indexer works.
Targets: recall p50 < 25 ms and p99 < 60 ms at 100,000; p99 < 150 ms at 1,000,000.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from core.store import GraphStore
from core.tools import ToolExecutor

EN_FIRST = ("Alice Bob Carol David Emma Frank Grace Henry Iris Jack Kate Liam Mia Noah Olivia "
            "Paul Quinn Ruby Sam Tina Uma Victor Wendy Xavier Yara Zoe").split()
EN_LAST = ("Smith Jones Brown Taylor Wilson Davies Evans Thomas Johnson Roberts Walker Wright "
           "Robinson Thompson White Hughes Edwards Green Hall Wood").split()
ZH_SURNAME = list("王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗")
ZH_GIVEN = ["伟", "芳", "娜", "敏", "静", "丽", "强", "磊", "军", "洋", "勇", "艳", "杰", "娟",
            "涛", "明", "超", "秀英", "华", "小红", "小明", "晓东", "建国", "志强"]
THINGS_EN = ("green tea|coffee|jazz|hiking|the piano|chess|Italian food|sci-fi novels|tennis|"
             "photography|red wine|cats|gardening|yoga|football|spicy noodles|old films|"
             "machine learning|ancient history|watercolour painting|rock climbing|baking bread|"
             "the violin|board games|cycling|marathon running|sushi|birdwatching").split("|")
THINGS_ZH = ("苹果|绿茶|火锅|书法|太极拳|京剧|围棋|篮球|咖啡|旅游|摄影|饺子|古典音乐|爬山|钓鱼|"
             "红烧肉|乒乓球|唐诗|武侠小说|广场舞|烤鸭|茶艺|二胡|游泳|电影|编程").split("|")
PLACES = ("Berlin|Paris|London|Tokyo|New York|Shanghai|Beijing|上海|北京|深圳|杭州|成都|广州|"
          "Sydney|Toronto|Madrid|Rome|西安|南京|武汉").split("|")
ORGS = ("Acme Corp|Globex|Initech|Umbrella Labs|Stark Industries|腾讯|阿里巴巴|华为|字节跳动|"
        "小米|Tsinghua University|北京大学|Oxford|MIT").split("|")
EN_RELATIONS = ["likes", "dislikes", "lives in", "works at", "studied at", "is friends with",
                "is married to", "visited", "plays", "is learning", "owns", "wants to try"]
ZH_RELATIONS = ["喜欢", "讨厌", "住在", "在…工作", "毕业于", "是…的朋友", "去过", "正在学",
                "想尝试", "养了"]


def person(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return f"{rng.choice(EN_FIRST)} {rng.choice(EN_LAST)}"
    return rng.choice(ZH_SURNAME) + rng.choice(ZH_GIVEN)


def triplet(rng: random.Random, serial: int) -> dict:
    """One realistic memory; the serial makes details unique, as real memories are."""
    subject = person(rng)
    chinese = rng.random() < 0.5
    relation = rng.choice(ZH_RELATIONS if chinese else EN_RELATIONS)
    pick = rng.random()
    if "住" in relation or relation in ("lives in", "visited", "去过"):
        obj = rng.choice(PLACES)
    elif "工作" in relation or relation in ("works at", "studied at", "毕业于"):
        obj = rng.choice(ORGS)
    elif "朋友" in relation or "friends" in relation or "married" in relation:
        obj = person(rng)
    elif pick < 0.5:
        obj = rng.choice(THINGS_ZH if chinese else THINGS_EN)
    else:  # a detailed, unique memory such as "jazz concert #4411" or "火锅店 4411号"
        obj = (f"{rng.choice(THINGS_ZH)}店 {serial}号" if chinese
               else f"{rng.choice(THINGS_EN)} event #{serial}")
    return {"subject": subject, "relation": relation, "object": obj,
            "confidence": round(rng.uniform(0.6, 1.0), 2)}


def queries(rng: random.Random, n: int) -> list[dict]:
    templates = [
        lambda: f"what does {person(rng)} like",
        lambda: f"{person(rng)} 喜欢什么",
        lambda: f"who lives in {rng.choice(PLACES)}",
        lambda: f"谁在{rng.choice(ORGS)}工作",
        lambda: f"{rng.choice(THINGS_EN)}",
        lambda: f"{rng.choice(THINGS_ZH)}",
        lambda: f"friends of {person(rng)}",
        lambda: f"{person(rng)} {rng.choice(THINGS_EN)} {rng.choice(PLACES)}",
    ]
    out = []
    for _ in range(n):
        args = {"query_intent": rng.choice(templates)()}
        if rng.random() < 0.2:
            args["seed_entities"] = [person(rng)]
        out.append(args)
    return out


def build(executor: ToolExecutor, edges: int, rng: random.Random, start: int) -> int:
    """Commit memories in calls of 25 triplets until the store holds `edges` edges."""
    serial = start
    store = executor.store
    while True:
        have = store.query_one("SELECT count(*) AS n FROM edges")["n"]
        if have >= edges:
            return serial
        batch = [triplet(rng, serial + i) for i in range(min(25, edges - have))]
        serial += len(batch)
        result = executor.execute("memory_commit", {"triplets": batch})
        if not result["success"]:
            raise SystemExit(result["error"])


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def measure(executor: ToolExecutor, rng: random.Random, n_queries: int) -> dict:
    store = executor.store
    recall_ms, sizes = [], []
    for args in queries(rng, n_queries):
        started = time.perf_counter()
        result = executor.execute("memory_recall", args)
        recall_ms.append((time.perf_counter() - started) * 1000)
        sizes.append(len(result["data"]["result"]))
    commits = 1000
    started = time.perf_counter()
    for i in range(commits):
        executor.execute("memory_commit", {"triplets": [triplet(rng, 10_000_000 + i)]})
    commit_rate = commits / (time.perf_counter() - started)
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    edge_count = store.query_one("SELECT count(*) AS n FROM edges")["n"]
    return {
        "edges": edge_count,
        "recall_p50_ms": statistics.median(recall_ms),
        "recall_p99_ms": percentile(recall_ms, 99),
        "commit_calls_per_s": commit_rate,
        "bytes_per_edge": store.path.stat().st_size / edge_count,
        "recall_chars_median": statistics.median(sizes),
    }


EMBED_SAMPLE = 3000


def resident_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def spin(stop) -> None:
    while not stop.is_set():
        pass


def fill_vectors(store: GraphStore, model: str) -> int:
    """Give every fact still without a vector a near copy of a real one (the same crowded
    cone the model's vectors live in), stored as the indexer stores them."""
    from core.meaning.vectors import (
        chunks,
        fact_texts,
        facts_needing_vectors,
        matrix_of,
        save_vectors,
    )

    real = matrix_of([r["vector"] for r in store.query(
        "SELECT vector FROM edge_vectors LIMIT 5000")]).astype(np.float32)
    rng = np.random.default_rng(3)
    missing = list(facts_needing_vectors(store.conn, model))
    for group in chunks(missing, 20_000):
        texts = fact_texts(store.conn, group)
        vectors = real[rng.integers(0, len(real), len(texts))]
        vectors += rng.normal(0, 0.02, vectors.shape).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        save_vectors(store.conn, model, texts, vectors)
    return len(missing)


def recall_latency(executor: ToolExecutor, rng: random.Random, n: int) -> tuple[float, float]:
    times = []
    for args in queries(rng, n):
        started = time.perf_counter()
        executor.execute("memory_recall", {"query_intent": args["query_intent"]})
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), percentile(times, 99)


def measure_meaning(executor: ToolExecutor, rng: random.Random, n_queries: int,
                    embed_all: bool) -> None:
    """Recall by meaning on the store as it is now (see the module docstring)."""
    from core.meaning import engine
    from core.meaning.indexer import Meaning

    store = executor.store
    edges = store.query_one("SELECT count(*) AS n FROM edges")["n"]
    before = resident_mb()
    meaning = Meaning(store.path)
    started = time.perf_counter()
    meaning.start()
    goal = edges if embed_all else min(EMBED_SAMPLE, edges)
    while meaning.embedded < goal and meaning.status()["state"] != "ready":
        time.sleep(0.05)
    took = time.perf_counter() - started
    rate = meaning.embedded / took
    meaning.stop()
    print(f"  indexing: {meaning.embedded:,} facts embedded at {rate:,.0f} facts/s "
          f"(one core); all {edges:,} would take {edges / rate / 60:.1f} min", flush=True)
    filled = fill_vectors(store, engine.model_id())
    if filled:
        print(f"  (the other {filled:,} vectors are near copies of real ones)")
    Path(f"{store.path}.vectors.json").unlink(missing_ok=True)

    for start in ("build", "load"):
        meaning = Meaning(store.path)
        started = time.perf_counter()
        meaning.start()
        meaning.wait_idle(3600)
        print(f"  index {start} at start: {time.perf_counter() - started:.1f} s "
              f"({meaning.status()['indexed']:,} vectors)", flush=True)
        if start == "build":
            meaning.stop()
    store.meaning = meaning
    p50, p99 = recall_latency(executor, rng, n_queries)
    print(f"  recall with meaning: p50 {p50:.1f} ms, p99 {p99:.1f} ms", flush=True)
    stop = multiprocessing.Event()
    busy = multiprocessing.Process(target=spin, args=(stop,))
    busy.start()
    try:
        p50, p99 = recall_latency(executor, rng, n_queries)
    finally:
        stop.set()
        busy.join()
    print(f"  recall with meaning, other core busy: p50 {p50:.1f} ms, p99 {p99:.1f} ms")
    print(f"  resident memory added by the model and {meaning.status()['indexed']:,} "
          f"vectors: {resident_mb() - before:.0f} MB", flush=True)
    store.on_commit.append(lambda change: meaning.changed(change.touched()))
    commits = 500
    started = time.perf_counter()
    for i in range(commits):
        executor.execute("memory_commit", {"triplets": [triplet(rng, 20_000_000 + i)]})
    print(f"  commit calls/s while the indexer embeds them: "
          f"{commits / (time.perf_counter() - started):,.0f}", flush=True)
    store.on_commit.clear()
    meaning.stop()
    store.meaning = None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--million", action="store_true", help="also build 1,000,000 edges")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000],
                        help="edges to build, in steps (CI runs a small one)")
    parser.add_argument("--queries", type=int, default=1000, help="recalls per size")
    parser.add_argument("--no-meaning", action="store_true", help="words only")
    parser.add_argument("--embed-all", action="store_true",
                        help="embed every fact instead of a sample")
    args = parser.parse_args()
    sizes = list(args.sizes) + ([1_000_000] if args.million else [])
    rng = random.Random(42)
    print(f"{'edges':>9} {'build s':>8} {'recall p50':>11} {'recall p99':>11} "
          f"{'commits/s':>10} {'bytes/edge':>11} {'recall chars':>13}")
    with tempfile.TemporaryDirectory() as folder:
        store = GraphStore(Path(folder) / "bench.db")
        executor = ToolExecutor(store)
        serial = 0
        for size in sizes:
            started = time.perf_counter()
            serial = build(executor, size, rng, serial)
            built = time.perf_counter() - started
            figures = measure(executor, rng, args.queries)
            print(f"{figures['edges']:>9,} {built:>8.1f} {figures['recall_p50_ms']:>8.2f} ms "
                  f"{figures['recall_p99_ms']:>8.2f} ms {figures['commit_calls_per_s']:>10,.0f} "
                  f"{figures['bytes_per_edge']:>11,.0f} {figures['recall_chars_median']:>13,.0f}",
                  flush=True)
            if not args.no_meaning and size >= 100_000:
                measure_meaning(executor, rng, min(args.queries, 300), args.embed_all)
        store.close()


if __name__ == "__main__":
    main()
