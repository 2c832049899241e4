"""Full-text search in English, Chinese and mixed text, and its ranking."""

import pytest

from core.store.search import search_edges
from tests.conftest import commit


@pytest.fixture
def memories(run):
    commit(run, ("小明", "喜欢吃", "苹果"), ("小红", "住在", "上海"),
           ("Alice", "works at", "Acme Corp"), ("Bob", "plays", "tennis"),
           ("Tom", "喜欢", "apple pie"))
    commit(run, ("小明喜欢吃苹果", "是", "一句话"))


def found(store, query):
    return [f"{e['source_name']}|{e['relation']}|{e['target_name']}"
            for e in search_edges(store, query)]


@pytest.mark.parametrize(("query", "expected"), [
    ("苹", "小明|喜欢吃|苹果"),          # one character
    ("苹果", "小明|喜欢吃|苹果"),        # two characters, at the end of the text
    ("小明", "小明|喜欢吃|苹果"),        # two characters, at the start
    ("吃苹果", "小明|喜欢吃|苹果"),      # three characters across a word boundary
    ("上海", "小红|住在|上海"),
    ("Acme", "Alice|works at|Acme Corp"),
    ("working", "Alice|works at|Acme Corp"),  # English stems
    ("TENNIS", "Bob|plays|tennis"),
    ("Tom 喜欢 apples", "Tom|喜欢|apple pie"),  # mixed
])
def test_queries_find_their_rows(store, memories, query, expected):
    assert expected in found(store, query)


def test_a_two_character_word_inside_one_long_run_is_found(store, memories):
    assert "小明喜欢吃苹果|是|一句话" in found(store, "苹果")
    assert "小明喜欢吃苹果|是|一句话" in found(store, "喜欢")


def test_unrelated_queries_find_nothing(store, memories):
    assert found(store, "香蕉") == []
    assert found(store, "volcano") == []


def test_more_matching_words_rank_first(store, run):
    commit(run, ("Alice", "likes", "green tea"), ("Alice", "likes", "coffee"),
           ("Bob", "likes", "tea"))
    assert found(store, "Alice green tea")[0] == "Alice|likes|green tea"


def test_among_equally_relevant_rows_the_more_mentioned_comes_first(store, run):
    commit(run, ("Carol", "owns", "a red bike"), ("Dave", "owns", "a red car"))
    for _ in range(5):
        commit(run, ("Dave", "owns", "a red car"))
    assert found(store, "red")[0] == "Dave|owns|a red car"


def test_only_active_edges_are_found_unless_asked(store, run):
    commit(run, ("Eve", "likes", "jazz"))
    run("memory_purge", criteria={"subject": "Eve"})
    assert found(store, "jazz") == []
    assert len(search_edges(store, "jazz", statuses=("deleted",))) == 1


class NearestIsOthers:
    """A vector index whose nearest facts are all other people's (20,000 of them share
    the person's topics): only asking among the person's own facts finds theirs."""

    def __init__(self, others, person_fact):
        self.others, self.person_fact = others, person_fact

    def similar_soon(self, text, count):
        from concurrent.futures import Future

        done = Future()
        done.set_result([(i, 0.9 - n * 0.001) for n, i in enumerate(self.others)][:count])
        return done

    def similar_among(self, text, ids):
        return [(self.person_fact, 0.88)] if self.person_fact in ids else []


def test_a_question_about_the_person_is_asked_of_their_own_facts(store, run):
    run("memory_commit", triplets=[{"subject": "User", "relation": "works as",
                                    "object": "a nurse"}])
    run("memory_commit", triplets=[{"subject": f"Anna {i}", "relation": "works as",
                                    "object": f"job {i}"} for i in range(40)])
    rows = store.query("SELECT e.id, s.name FROM edges e JOIN nodes s ON s.id = e.source_id")
    mine = next(r["id"] for r in rows if r["name"] == "User")
    store.meaning = NearestIsOthers([r["id"] for r in rows if r["id"] != mine], mine)
    about_me = [e["source_name"] for e in search_edges(store, "what is my occupation",
                                                        limit=3)]
    assert about_me[0] == "User"
    about_anna = [e["source_name"] for e in search_edges(store, "what is Anna's occupation",
                                                          limit=3)]
    assert "User" not in about_anna
