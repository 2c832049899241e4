"""10,000 random tool calls, mostly invalid: nothing escapes, nothing breaks the store."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.store import GraphStore
from core.tools import TOOL_NAMES, ToolExecutor
from core.tools.limits import ToolLimiter
from core.tools.schemas import PARAMETERS

pytestmark = pytest.mark.slow  # `-m "not slow"` leaves these out of a quick loop


BATCHES, CALLS_PER_BATCH = 500, 20

# A few names so that random calls meet each other: purges find commits, states find tasks.
names = st.sampled_from(["Ann", "ann ", "Task_1", "Task_10", "小明", "苹果", "AI", "t", "",
                         "ＡＮＮ", "x" * 300])
scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 200), st.floats(allow_nan=True),
                    names, st.text(max_size=30))
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12)


def field_value(schema):
    """Mostly well-typed values for a schema field, sometimes anything at all."""
    kind = schema.get("type")
    typed = {
        "string": st.one_of(names, st.sampled_from(schema.get("enum", ["x"]))),
        "integer": st.integers(-2, 120),
        "number": st.floats(-0.5, 1.5),
        "boolean": st.booleans(),
    }.get(kind)
    if kind == "array":
        typed = st.lists(field_value(schema["items"]), max_size=4)
    elif kind == "object" and schema.get("properties"):
        typed = shaped(schema)
    elif kind == "object":
        typed = st.dictionaries(names, names, max_size=3)
    return st.one_of(typed, json_values) if typed is not None else json_values


def shaped(schema):
    props = schema["properties"]
    return st.fixed_dictionaries({}, optional={k: field_value(v) for k, v in props.items()})


def call():
    tool = st.one_of(st.sampled_from(TOOL_NAMES), st.text(max_size=12))
    return tool.flatmap(lambda name: st.tuples(st.just(name), st.one_of(
        shaped(PARAMETERS[name]) if name in PARAMETERS else json_values,
        json_values,
        st.text(max_size=40),  # argument text that is (almost always) not JSON
    ), st.booleans()))


def test_random_tool_calls_never_escape_or_corrupt(tmp_path):
    store = GraphStore(tmp_path / "fuzz.db")
    executor = ToolExecutor(store)
    limiter = ToolLimiter()
    outcomes = {"ok": 0, "error": 0}

    @settings(max_examples=BATCHES, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(st.lists(call(), min_size=CALLS_PER_BATCH, max_size=CALLS_PER_BATCH),
           st.lists(st.integers(1, 400), max_size=2))
    def batch(calls, undo_ids):
        limiter.reset()
        for tool, arguments, by_model in calls:
            result = executor.execute(tool, arguments, limiter=limiter if by_model else None,
                                      turn_id="fuzz", actor="model" if by_model else "user")
            assert set(result) <= {"success", "data", "error", "code", "rejected", "over_budget",
                                   "invalid", "refused"}
            if result["success"]:
                assert isinstance(result["data"]["result"], str)
                outcomes["ok"] += 1
            else:
                assert result["error"] and "internal error" not in result["error"]
                outcomes["error"] += 1
        for change_id in undo_ids:
            result = executor.undo(change_id)
            assert result["success"] or "internal" not in result["error"]

    batch()
    assert outcomes["ok"] + outcomes["error"] == BATCHES * CALLS_PER_BATCH
    # Enough calls were valid to exercise the handlers (the destroyed-rows budget refuses
    # some of the model's large purges and archives that would otherwise succeed).
    assert outcomes["ok"] > 350  # 383 to 484 seen, by machine and version
    assert store.integrity_problems() == []
    store.close()
