"""Recall quality: does memory_recall find a person's facts among 20,000 others?

A profile of 30 facts about the user (English and Chinese) is hidden among 20,000
generated memories about other people (bench/store_bench.py's generator). Each fact is
asked for three ways: with its own words, as a model guesses a topic ("user job"), and as
a paraphrase that shares no search term with it (checked here), across the two languages
too. A query hits when the fact is in the first 4,000 characters of the recall. Every
group is run with recall by meaning on and off.

    python bench/recall_quality.py [--distractors N] [--keep FOLDER]

--keep keeps the indexed memory in FOLDER and reuses it on the next run.
Target: paraphrases and bare paraphrases (a topic naming nobody) >= 70 % with meaning;
exact and topic queries >= 96 % either way.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from store_bench import triplet

from core.meaning.indexer import Meaning
from core.store import GraphStore
from core.store.text import query_terms
from core.tools import ToolExecutor

RECALL_CHARS = 4000

# (subject, relation, object), exact words, topic guess, paraphrase sharing no term.
PROFILE = [
    ("User", "plays", "the cello", "cello", "user music hobby",
     "我会什么乐器"),
    ("User", "has a daughter called", "Emma", "Emma", "user family",
     "what are my kids' names"),
    ("User", "is allergic to", "peanuts", "peanuts allergy", "user health food",
     "is there anything I cannot eat safely"),
    ("User", "works as", "a nurse", "nurse", "user job", "what is my profession"),
    ("User", "lives in", "Lyon", "Lyon", "user home city", "where do I reside"),
    ("User", "drives", "a Volvo", "Volvo", "user car", "what vehicle do I own"),
    ("User", "has a cat named", "Miso", "Miso", "user pets", "我养了什么宠物"),
    ("User", "birthday is", "March 3", "birthday", "user birthday date",
     "when was I born"),
    ("User", "is", "vegetarian", "vegetarian", "user diet", "do I eat meat"),
    ("User", "studied chemistry at", "Leeds", "chemistry Leeds", "user education",
     "what did I major in at university"),
    ("User", "runs", "marathons", "marathons", "user sport",
     "which long endurance races do I take part in"),
    ("User", "speaks", "Portuguese", "Portuguese", "user languages",
     "which foreign tongue do I know"),
    ("User", "is married to", "Clara", "Clara", "user spouse", "我的妻子叫什么"),
    ("User", "wakes up at", "5 am", "wakes up", "user morning routine",
     "how early do I get out of bed"),
    ("User", "is afraid of", "heights", "afraid of heights", "user fears",
     "what scares me"),
    ("User", "collects", "vinyl records", "vinyl records", "user collection hobby",
     "what music format do I hoard"),
    ("User", "drinks", "oolong tea", "oolong tea", "user drinks",
     "favourite hot beverage"),
    ("User", "is learning to", "sail", "sail", "user learning",
     "which water sport am I picking up"),
    ("User", "每周三去", "潜水", "潜水", "user sport 运动",
     "what sport do I do every week"),
    ("User", "喜欢吃", "火锅", "火锅", "user food 食物", "我最爱的菜是什么"),
    ("User", "工作单位是", "比亚迪", "比亚迪", "user job 工作", "which company employs me"),
    ("User", "的儿子叫", "小宇", "小宇", "user family 家人", "我家小孩的名字"),
    ("User", "过敏", "猫毛", "猫毛过敏", "user health 健康", "哪些东西会让我不舒服"),
    ("User", "老家在", "重庆", "重庆", "user hometown 家乡", "我是哪里人"),
    ("User", "正在学", "日语", "日语", "user languages 语言", "我在上什么外语课"),
    ("User", "养了", "一只金毛", "金毛", "user pets 宠物", "what breed is my dog"),
    ("User", "周末喜欢", "露营", "露营", "user hobbies 爱好", "户外运动"),
    ("User", "的生日是", "十月八日", "生日", "user birthday", "我哪天出生"),
    ("User", "毕业于", "复旦大学", "复旦", "user education 教育", "我的母校"),
    ("User", "戒了", "香烟", "香烟", "user habits 习惯", "do I smoke"),
]
# Bare paraphrases: a topic in other words, naming nobody ("automobile", "家乡"), as a
# model asks memory_recall; in the profile's order.
BARE = ["musical instrument", "children", "foods that cause a reaction", "occupation",
        "place of residence", "automobile", "pet animal", "date of birth", "diet",
        "university degree subject", "endurance races", "foreign language", "spouse",
        "morning alarm time", "phobia", "music format hoarded", "favourite hot beverage",
        "water sport being picked up", "weekly sport", "最爱的菜", "employer", "孩子",
        "什么东西会引起不适", "家乡", "外语课", "dog breed", "户外活动", "诞辰", "母校",
        "smoking"]
GROUPS = ("exact", "topic", "paraphrase", "bare")
# --look-alikes: the distractors are other people's facts on the person's own topics
# (their instruments, children, allergies, jobs, cities, cars, pets…), one list per
# profile fact in its order, so that a question's topic alone does not find the person.
LOOK_ALIKES = [
    ["the violin", "the piano", "the flute", "drums", "the guitar"],
    ["Lucas", "Mia", "Noah", "Sofia", "Leo"],
    ["shellfish", "pollen", "penicillin", "gluten", "bee stings"],
    ["a teacher", "an engineer", "a lawyer", "a pilot", "a chef"],
    ["Berlin", "Madrid", "Osaka", "Toronto", "Nairobi"],
    ["a Toyota", "a Tesla", "a Ford", "a Honda", "a BMW"],
    ["Tofu", "Biscuit", "Luna", "Pepper", "Max"],
    ["May 9", "July 21", "January 30", "June 2", "April 17"],
    ["vegan", "pescatarian", "diabetic", "teetotal", "lactose intolerant"],
    ["physics at Bristol", "history at York", "law at Durham", "art at Kent",
     "biology at Bath"],
    ["triathlons", "ultramarathons", "cycling races", "half marathons", "relays"],
    ["Italian", "German", "Korean", "Arabic", "Swahili"],
    ["Daniel", "Sara", "Tom", "Julia", "Ahmed"],
    ["6 am", "7 am", "4 am", "8 am", "6:30 am"],
    ["spiders", "the dark", "snakes", "flying", "crowds"],
    ["stamps", "coins", "comic books", "postcards", "old maps"],
    ["green tea", "espresso", "hot chocolate", "chai", "black coffee"],
    ["surf", "row", "kayak", "windsurf", "swim"],
    ["游泳", "攀岩", "打羽毛球", "跑步", "骑车"],
    ["烤鸭", "饺子", "小笼包", "麻辣烫", "烧烤"],
    ["华为", "腾讯", "阿里巴巴", "小米", "京东"],
    ["小明", "小红", "小杰", "小美", "小龙"],
    ["花粉", "海鲜", "牛奶", "尘螨", "青霉素"],
    ["成都", "西安", "长沙", "武汉", "昆明"],
    ["韩语", "法语", "德语", "西班牙语", "俄语"],
    ["一只柯基", "一只布偶猫", "一只鹦鹉", "一只仓鼠", "一只哈士奇"],
    ["钓鱼", "爬山", "骑行", "野餐", "滑雪"],
    ["五月二日", "一月九日", "七月七日", "三月三十日", "十二月一日"],
    ["北京大学", "浙江大学", "南京大学", "武汉大学", "中山大学"],
    ["咖啡", "可乐", "甜食", "酒", "奶茶"],
]
PEOPLE = ["Anna", "Ben", "Chloe", "David", "Elena", "Farid", "Grace", "Hugo", "Ivy",
          "Jonas", "Kira", "Liam", "Maya", "Nils", "Olga", "Pablo", "王芳", "李强",
          "张伟", "刘洋", "陈静", "杨磊"]


def look_alike(rng: random.Random, n: int) -> dict[str, str]:
    """Someone else's fact on one of the person's topics: "Kira 17 plays the violin"."""
    which = rng.randrange(len(PROFILE))
    person = f"{rng.choice(PEOPLE)} {n // len(PEOPLE)}"
    return {"subject": person, "relation": PROFILE[which][1],
            "object": rng.choice(LOOK_ALIKES[which])}


def build(folder: Path, distractors: int, alike: bool = False) -> None:
    """The memory: distractors first (older), the profile among them, all indexed."""
    store = GraphStore(folder / "memory.db")
    executor = ToolExecutor(store)
    rng = random.Random(7)
    calls = max(distractors // 25, len(PROFILE))  # a quick run still holds every fact
    profile_at = set(rng.sample(range(calls), len(PROFILE)))
    facts = iter(PROFILE)
    started = time.perf_counter()
    for call in range(calls):
        make = look_alike if alike else triplet
        batch = [make(rng, call * 25 + i) for i in range(25)]
        if call in profile_at:
            subject, relation, obj, *_ = next(facts)
            batch.append({"subject": subject, "relation": relation, "object": obj})
        result = executor.execute("memory_commit", {"triplets": batch})
        if not result["success"]:
            raise SystemExit(result["error"])
    print(f"committed {distractors + len(PROFILE):,} facts in "
          f"{time.perf_counter() - started:.1f} s", flush=True)
    store.close()


def index(folder: Path) -> None:
    """Run the background indexer until it has caught up."""
    meaning = Meaning(folder / "memory.db")
    started = time.perf_counter()
    meaning.start()
    while True:
        status = meaning.status()
        if status["state"] == "ready":
            break
        if status["state"] == "failed":
            raise SystemExit(status["problem"])
        time.sleep(0.5)
    took = time.perf_counter() - started
    meaning.stop()
    made = meaning.embedded
    print(f"indexed: {status['indexed']:,} facts, {made:,} embedded now in {took:.1f} s"
          + (f" ({made / took:.0f} facts/s)" if made else ""), flush=True)


def check_paraphrases() -> None:
    """A paraphrase that shares a search term with its fact would test words, not meaning."""
    for (subject, relation, obj, *_, said), bare in zip(PROFILE, BARE, strict=True):
        for paraphrase in (said, bare):
            fact = set(query_terms(f"{subject} {relation} {obj}"))
            if shared := set(query_terms(paraphrase)) & fact:
                raise SystemExit(f"{paraphrase!r} shares {shared} with its fact")


def run(folder: Path, with_meaning: bool) -> dict[str, list[bool]]:
    store = GraphStore(folder / "memory.db")
    meaning = None
    if with_meaning:
        meaning = Meaning(folder / "memory.db")
        meaning.start()
        while meaning.status()["state"] == "loading":
            time.sleep(0.05)
        store.meaning = meaning
    executor = ToolExecutor(store)
    hits: dict[str, list[bool]] = {g: [] for g in GROUPS}
    for (subject, relation, obj, *asked), bare in zip(PROFILE, BARE, strict=True):
        edge = store.query_one(
            "SELECT e.id FROM edges e JOIN nodes s ON s.id = e.source_id JOIN nodes t ON"
            " t.id = e.target_id WHERE s.name = ? AND e.relation = ? AND t.name = ?",
            (subject, relation, obj))
        for group, query in zip(GROUPS, [*asked, bare], strict=True):
            result = executor.execute("memory_recall", {"query_intent": query})
            text = result["data"]["result"][:RECALL_CHARS]
            hits[group].append(f"[{edge['id']}]" in text)
    if meaning is not None:
        meaning.stop()
    store.close()
    return hits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--distractors", type=int, default=20_000)
    parser.add_argument("--keep", type=Path, help="keep (and reuse) the memory here")
    parser.add_argument("--misses", action="store_true", help="list the queries missed")
    parser.add_argument("--look-alikes", action="store_true",
                        help="distractors on the person's own topics (others' jobs, pets…)")
    args = parser.parse_args()
    check_paraphrases()
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        if not (folder / "memory.db").exists():
            build(folder, args.distractors, args.look_alikes)
        index(folder)  # catches up, or re-indexes when the model or its text recipe changed
        results = {on: run(folder, on) for on in (True, False)}
    print(f"\n{'query group':<12} {'with meaning':>13} {'words only':>11}")
    for group in GROUPS:
        cells = [f"{sum(results[on][group]) / len(PROFILE):>10.0%}" for on in (True, False)]
        print(f"{group:<12} {cells[0]:>13} {cells[1]:>11}")
    if args.misses:
        for group_index, group in enumerate(GROUPS):
            for fact, hit in zip(PROFILE, results[True][group], strict=True):
                if not hit:
                    query = [*fact[3:], BARE[PROFILE.index(fact)]][group_index]
                    print(f"missed ({group}): {query!r} -> {fact[:3]}")


if __name__ == "__main__":
    main()
