"""Per-turn limits on the model's tool calls."""

import pytest

from core.tools import REGISTRY, TOOL_NAMES
from core.tools.limits import CALL_LIMITS, DEFAULT_LIMITS, ToolLimiter, category_of
from core.tools.schemas import PARAMETERS, openai_tools


def test_defaults_let_a_three_step_plan_and_an_introduction_through():
    assert DEFAULT_LIMITS == {"persona_query_max": 2, "persona_update_max": 2,
                              "task_query_max": 4, "task_update_max": 8,
                              "memory_query_max": 20, "memory_update_max": 10,
                              "destroyed_rows_max": 20}


def test_every_tool_is_declared_once_and_everything_reads_that_declaration():
    assert len(TOOL_NAMES) == 18 == len(REGISTRY)
    assert set(PARAMETERS) == set(TOOL_NAMES)
    # every tool but the person's own (what a forget held for them runs when allowed)
    assert [t["function"]["name"] for t in openai_tools()] == [
        n for n in TOOL_NAMES if n != "memory_forget"]
    categories = {spec.category_for({}) for spec in REGISTRY.values()}
    categories |= {category_of("memory_recall", {"scope": s}) for s in ("persona", "tasks")}
    assert categories == {k.removesuffix("_max") for k in CALL_LIMITS}
    for name, spec in REGISTRY.items():
        assert spec.handler.__name__ == name
        assert not (spec.destroys and not spec.writes), name
    destructive = {n for n, s in REGISTRY.items() if s.destroys}
    assert destructive == {"memory_purge", "memory_forget", "memory_archive", "memory_cleanup",
                           "persona_update", "persona_remove", "persona_clear",
                           "task_delete", "task_archive"}


def test_recall_is_counted_by_scope():
    assert category_of("memory_recall", {"query_intent": "x"}) == "memory_query"
    assert category_of("memory_recall", {"scope": "persona"}) == "persona_query"
    assert category_of("memory_recall", {"scope": "tasks"}) == "task_query"


def test_a_call_over_the_limit_is_rejected_not_run_and_listed(executor, store):
    limiter = ToolLimiter()
    results = [executor.execute("persona_update", {"attributes": [
        {"attribute": "role", "value": f"role {i}"}]}, limiter=limiter, actor="model")
        for i in range(4)]
    assert [r["success"] for r in results] == [True, True, False, False]
    assert all(r.get("rejected") for r in results[2:])
    assert results[2]["error"].startswith("Tool call rejected: persona_update")
    assert store.query_one("SELECT count(*) AS n FROM edges WHERE status = 'active'")["n"] == 1


def test_counters_reset_per_turn_and_unlimited_calls_do_not_touch_them(executor):
    limiter = ToolLimiter({"task_update_max": 1})
    assert executor.execute("task_create", {"task_id": "a", "description": "d"},
                            limiter=limiter)["success"]
    for name in "bcd":  # the person's calls: no limiter, no counting, no reset
        assert executor.execute("task_create", {"task_id": name, "description": "d"})["success"]
    assert executor.execute("task_set_state", {"task_id": "a", "state": "paused"},
                            limiter=limiter).get("rejected")
    limiter.reset()
    assert executor.execute("task_set_state", {"task_id": "a", "state": "paused"},
                            limiter=limiter)["success"]


def test_invalid_calls_do_not_use_up_the_limit(executor):
    limiter = ToolLimiter()
    assert not executor.execute("persona_update", {"attributes": "oops"}, limiter=limiter)[
        "success"]
    assert executor.execute("persona_update", {"attributes": [
        {"attribute": "role", "value": "tutor"}]}, limiter=limiter)["success"]


@pytest.mark.parametrize(("values", "needle"), [
    ({"persona_query_max": 0}, "at least 1"),
    ({"memory_query_max": -3}, "at least 1"),
    ({"task_query_max": 2.5}, "whole number"),
    ({"task_query_max": True}, "whole number"),
    ({"task_query_max": "4"}, "whole number"),
    ({"bogus_max": 3}, "unknown limit"),
])
def test_bad_limits_are_refused_and_change_nothing(values, needle):
    limiter = ToolLimiter()
    result = limiter.set_limits(values)
    assert not result["success"] and needle in result["error"]
    assert limiter.limits == DEFAULT_LIMITS


def test_limits_can_be_raised(executor):
    limiter = ToolLimiter()
    assert limiter.set_limits({"persona_update_max": 3})["data"]["persona_update_max"] == 3
    results = [executor.execute("persona_update", {"attributes": [
        {"attribute": "role", "value": f"r{i}"}]}, limiter=limiter) for i in range(4)]
    assert [r["success"] for r in results] == [True, True, True, False]
