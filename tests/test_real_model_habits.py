"""Habits of real models and servers the app must meet halfway (a first part of the work on
real models): grammar-filled empty fields, servers that need tool_choice, and a stop
pressed in the terminal."""

from __future__ import annotations


def test_empty_optional_fields_mean_not_given(run, fail, store):
    data = run("memory_commit", triplets=[{"subject": "Ann", "relation": "likes",
                                           "object": "tea", "subject_type": "",
                                           "object_type": None, "confidence": None}],
               entity_types={}, temporal_tag="")
    assert data["created"] == 1 and store.find_node("Ann")["type"] is None
    assert run("memory_recall", query_intent="Ann", seed_entities=[], time_range={},
               scope="")["edge_ids"]
    # Required fields are still required, and criteria that are all empty select nothing.
    assert "must not be empty" in fail("memory_recall", query_intent="")
    assert "at least 1 entry" in fail("memory_purge", criteria={"subject": "", "target": ""})


def test_tool_choice_auto_is_sent_with_the_tools(headless, llm):
    client = headless()[1]
    llm.play({"text": "hi"})
    assert client.process_message("hello")["success"]
    assert llm.requests[0]["tool_choice"] == "auto" and llm.requests[0]["tools"]
