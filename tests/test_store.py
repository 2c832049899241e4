"""The store itself: pragmas, name matching, transactions, migrations, damaged files."""

import sqlite3

import pytest

from core.store import LATEST_VERSION, GraphStore, StoreError
from core.store.schema import migrate
from core.store.text import search_text
from tests.conftest import commit


def test_connection_uses_wal_foreign_keys_and_a_busy_timeout(store):
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert store.conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 1000
    assert store.schema_version() == LATEST_VERSION


def test_spellings_of_one_name_are_one_node_and_the_first_spelling_is_kept(run, store):
    commit(run, ("Xiao Ming", "likes", "apples"))
    commit(run, (" xiao  ming ", "likes", "pears"))
    commit(run, ("ＸＩＡＯ ＭＩＮＧ", "lives in", "Beijing"))
    nodes = store.query("SELECT name, mention_count FROM nodes WHERE norm_name = 'xiao ming'")
    assert nodes == [{"name": "Xiao Ming", "mention_count": 3}]


def test_a_failing_tool_call_writes_nothing(executor, store, run):
    run("task_create", task_id="t1", description="d")
    before = store.dump()
    result = executor.execute("task_create", {"task_id": "t1", "description": "again"})
    assert not result["success"] and "already" in result["error"]
    assert store.dump() == before
    assert store.query("SELECT count(*) AS n FROM change_log")[0]["n"] == 1


def test_an_exception_inside_a_write_rolls_everything_back(store):
    before = store.dump()
    with pytest.raises(RuntimeError), store.write("test"):
        store.upsert_node("half written")
        raise RuntimeError("crash in the middle")
    assert store.dump() == before
    assert store.query("SELECT count(*) AS n FROM change_log")[0]["n"] == 0


def _v1_file(path):
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, target=1)
    conn.executescript("""
        INSERT INTO nodes(id, name, norm_name, kind, created_at, updated_at)
            VALUES (1, 'AI', 'ai', 'persona', 1, 1), (2, '小明', '小明', 'entity', 1, 1),
                   (3, 'tutor', 'tutor', 'entity', 1, 1), (4, '苹果', '苹果', 'entity', 1, 1);
        INSERT INTO edges(source_id, target_id, relation, norm_relation, created_at, updated_at)
            VALUES (1, 3, 'role', 'role', 1, 1), (2, 4, '喜欢吃', '喜欢吃', 1, 1);
    """)
    conn.close()


def test_a_file_from_schema_version_1_is_migrated_and_searchable(tmp_path, run):
    path = tmp_path / "old.db"
    _v1_file(path)
    store = GraphStore(path)
    try:
        assert store.migrated_from == 1
        assert store.schema_version() == LATEST_VERSION
        edges = store.query("SELECT relation, category, mention_count FROM edges ORDER BY id")
        assert edges == [{"relation": "role", "category": "persona", "mention_count": 1},
                         {"relation": "喜欢吃", "category": "general", "mention_count": 1}]
        from core.tools import ToolExecutor
        result = ToolExecutor(store).execute("memory_recall", {"query_intent": "苹果"})
        assert "小明 -喜欢吃-> 苹果" in result["data"]["result"]
        assert store.integrity_problems() == []
    finally:
        store.close()


def test_a_reply_stopped_before_version_12_reads_as_stopped_not_failed(tmp_path):
    path = tmp_path / "stopped.db"
    old = sqlite3.connect(path, isolation_level=None)
    old.create_function("search_text", 1, search_text, deterministic=True)
    migrate(old, target=11)  # a file as version 11 left it
    old.execute("INSERT INTO messages (role, content, partial, error, created_at) VALUES"
                " ('assistant', 'Once upon', 1, 'cancelled', 0)")
    old.close()
    store = GraphStore(path)
    try:
        assert store.query("SELECT partial, error FROM messages") == [
            {"partial": 1, "error": None}]
    finally:
        store.close()


def test_a_file_from_a_newer_version_is_refused_not_guessed_at(tmp_path):
    path = tmp_path / "future.db"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {LATEST_VERSION + 1}")
    conn.close()
    with pytest.raises(StoreError, match="newer than this program"):
        GraphStore(path)


def test_a_file_that_is_not_a_database_gives_a_clear_error(tmp_path):
    path = tmp_path / "garbage.db"
    path.write_bytes(b"this is not sqlite" * 500)
    with pytest.raises(StoreError, match="damaged"):
        GraphStore(path)


def test_a_locked_database_answers_busy_and_writes_nothing(tmp_path, clock):
    path = tmp_path / "g.db"
    store = GraphStore(path, clock=clock)
    store.conn.execute("PRAGMA busy_timeout = 50")
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        from core.tools import ToolExecutor
        result = ToolExecutor(store).execute("memory_commit", {
            "triplets": [{"subject": "a", "relation": "b", "object": "c"}]})
        assert not result["success"]
        assert "busy" in result["error"]
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert store.dump() == {"nodes": [], "edges": []}
    store.close()


def test_quick_check_is_clean_after_logged_writes(store, run):
    from tests.conftest import commit

    commit(run, ("a", "r", "b"), ("b", "r", "c"))
    assert store.conn.execute("PRAGMA quick_check").fetchall()[0][0] == "ok"
    assert store.query("SELECT tbl, row_id FROM change_rows WHERE change_id = 1")
