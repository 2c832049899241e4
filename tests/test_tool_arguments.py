"""Bad arguments from the model: a clear error naming the problem, and nothing written."""

import json

import pytest

from core.tools import TOOL_NAMES, openai_tools
from core.tools.schemas import MAX_STRING, PARAMETERS

VALID = {
    "memory_recall": {"query_intent": "Ann"},
    "memory_commit": {"triplets": [{"subject": "Ann", "relation": "likes", "object": "tea"}]},
    "memory_purge": {"criteria": {"subject": "Ann"}},
    "memory_forget": {"edge_ids": [1]},
    "memory_introspect": {},
    "memory_archive": {"days": 30},
    "memory_cleanup": {"dry_run": True},
    "memory_query_archived": {"keyword": "tea"},
    "context_rewrite": {"summary": "s"},
    "persona_update": {"attributes": [{"attribute": "role", "value": "tutor"}]},
    "persona_remove": {"attribute": "role"},
    "persona_clear": {"confirm": True},
    "task_create": {"task_id": "t9", "description": "d"},
    "task_set_state": {"task_id": "t0", "state": "completed"},
    "task_delete": {"task_id": "t0"},
    "task_link_info": {"task_id": "t0", "info_node_names": ["x"]},
    "task_archive": {"task_id": "t0"},
    "task_query": {"limit": 5},
}


@pytest.fixture
def seeded(run, store):
    run("memory_commit", triplets=[{"subject": "Ann", "relation": "likes", "object": "tea"}])
    run("persona_update", attributes=[{"attribute": "role", "value": "tutor"}])
    run("task_create", task_id="t0", description="d")
    return store


def snapshot(store):
    return store.dump(), store.query_one("SELECT count(*) AS n FROM change_log")["n"]


VALIDATOR_ONLY = ("minLength", "maxLength", "maxItems", "minItems", "maxProperties")


def without_validator_limits(schema):
    if isinstance(schema, dict):
        strings = [n for n in schema.get("properties", {}).values() if n.get("type") == "string"]
        assert all("maxLength" in n for n in strings)
        return {k: without_validator_limits(v) for k, v in schema.items()
                if k not in VALIDATOR_ONLY}
    if isinstance(schema, list):
        return [without_validator_limits(v) for v in schema]
    return schema


def test_every_tool_has_a_valid_example_and_one_schema_serves_openai():
    assert set(VALID) == set(TOOL_NAMES) and len(TOOL_NAMES) == 18
    for tool in openai_tools():
        function = tool["function"]
        assert tool["type"] == "function"
        # the model's copy is the validator's without the limits the validator enforces
        assert function["parameters"] == without_validator_limits(
            PARAMETERS[function["name"]])
        assert "maxLength" not in json.dumps(function["parameters"])
        assert function["parameters"]["additionalProperties"] is False
        assert function["description"]


def bad_variants(tool):
    schema = PARAMETERS[tool]
    yield "unknown field", {**VALID[tool], "surprise": 1}, "surprise"
    for name in schema.get("required", []):
        args = {k: v for k, v in VALID[tool].items() if k != name}
        yield f"missing {name}", args, name
    for name, prop in schema["properties"].items():
        wrong = 12345 if prop.get("type") != "integer" else "twelve"
        yield f"wrong type for {name}", {**VALID[tool], name: wrong}, name
        if prop.get("type") == "string":
            yield f"{name} too long", {**VALID[tool], name: "x" * (MAX_STRING + 1)}, name
    yield "not JSON", '{"query_intent": "Ann"', "not valid JSON"
    yield "JSON but not an object", "[1, 2]", "must be a JSON object"


CASES = [(tool, label, args, needle)
         for tool in TOOL_NAMES for label, args, needle in bad_variants(tool)]


@pytest.mark.parametrize(("tool", "label", "args", "needle"), CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_bad_arguments_are_refused_clearly_and_write_nothing(executor, seeded, tool, label,
                                                             args, needle):
    before = snapshot(seeded)
    result = executor.execute(tool, args)
    assert result["success"] is False
    assert needle in result["error"] and tool in result["error"]
    assert len(result["error"]) < 600
    assert snapshot(seeded) == before


@pytest.mark.parametrize("tool", TOOL_NAMES)
def test_valid_examples_run_from_json_text_too(executor, seeded, tool):
    result = executor.execute(tool, json.dumps(VALID[tool]))
    assert result["success"], result


def test_an_unknown_tool_is_named_in_the_error(executor, seeded):
    before = snapshot(seeded)
    error = executor.execute("memory_forget_everything", {})["error"]
    assert "unknown tool 'memory_forget_everything'" in error
    assert snapshot(seeded) == before


@pytest.mark.parametrize(("tool", "args", "needle"), [
    ("memory_recall", {"query_intent": "a", "depth": 4}, "depth"),
    ("memory_recall", {"query_intent": "a", "scope": "everything"}, "scope"),
    ("memory_commit", {"triplets": []}, "triplets"),
    ("memory_commit", {"triplets": [{"subject": "a", "relation": "b", "object": "c",
                                     "confidence": 1.5}]}, "triplets[0].confidence"),
    ("memory_commit", {"triplets": [{"subject": "", "relation": "b", "object": "c"}]},
     "triplets[0].subject"),
    ("memory_purge", {"criteria": {}}, "criteria"),
    ("memory_purge", {"criteria": {"subject": "a"}, "mode": "hard"}, "mode"),
    ("memory_purge", {"criteria": {"time_before": "last tuesday"}}, "before"),
    ("task_set_state", {"task_id": "t0", "state": "done"}, "state"),
    ("persona_update", {"attributes": [{"attribute": "role"}]}, "attributes[0]"),
    ("memory_archive", {"days": True}, "days"),
])
def test_out_of_range_values_name_the_field(executor, seeded, tool, args, needle):
    before = snapshot(seeded)
    result = executor.execute(tool, args)
    assert not result["success"] and needle in result["error"], result
    assert snapshot(seeded) == before


def test_integral_floats_are_integers_and_nan_is_refused_with_a_reason(tmp_path):
    from core.store import GraphStore
    from core.tools import ToolExecutor

    store = GraphStore(tmp_path / "m.db")
    try:
        executor = ToolExecutor(store)
        executor.execute("memory_commit", {"triplets": [
            {"subject": "User", "relation": "likes", "object": "tea"}]})
        assert executor.execute("memory_recall", '{"query_intent": "tea", "depth": 2.0}')[
            "success"]
        assert executor.execute("memory_query_archived", '{"limit": 5.0}')["success"]
        refused = executor.execute("memory_commit", '{"triplets": [{"subject": "User", '
                                   '"relation": "likes", "object": "x", "confidence": NaN}]}')
        assert not refused["success"]
        assert "triplets[0].confidence: must be a finite number" in refused["error"]
        assert "whole number" in executor.execute(
            "memory_recall", '{"query_intent": "tea", "depth": 2.5}')["error"]
    finally:
        store.close()
