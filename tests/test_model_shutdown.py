"""A model that is going away: the shutdown date an endpoint announces on `GET /v1/models`
comes through the backend to whoever lists the models, read from whatever shape it has."""

from __future__ import annotations

from datetime import date

import pytest

from core.endpoint.shutdown import in_days, notice_due, shutdown_date
from core.protocol.packets import Packet, PacketType


@pytest.mark.parametrize(("value", "day"), [
    ("2027-01-14", "2027-01-14"),  # OpenAI's documented shape
    (" 2027-01-14 ", "2027-01-14"),
    ("2027-01-14T00:00:00Z", "2027-01-14"),
    ("2027-01-14T23:30:00+00:00", "2027-01-14"),
    (1799884800, "2027-01-14"),  # Unix seconds
    (1799884800.5, "2027-01-14"),
    ("1799884800", "2027-01-14"),
    (1799884800000, "2027-01-14"),  # milliseconds
    (None, None), ("", None), ("junk", None), ("2027-13-40", None), ("2027-01-14junk", None),
    ("14 Jan 2027", None), (True, None), (0, None), (-5, None), (float("nan"), None),
    (float("inf"), None), ("nan", None), (1e30, None), ([2027, 1, 14], None),
    ({"date": "2027-01-14"}, None), ("1800-01-01", None), ("9999-12-31", None)])
def test_a_shutdown_date_is_read_from_any_shape_and_junk_is_ignored(value, day):
    assert shutdown_date(value) == day


def test_the_notice_is_due_four_weeks_ahead_and_after_the_day():
    today = date(2026, 12, 4)
    assert not notice_due(None, today)
    assert not notice_due("2027-01-14", today)  # 41 days away
    assert notice_due("2027-01-01", today)  # 28 days
    assert notice_due("2026-12-05", today)
    assert notice_due("2026-11-01", today)  # gone already


def test_the_model_list_carries_each_models_shutdown_date_from_the_endpoint(headless, llm):
    llm.models = ["test-model", "gpt-4o-mini", "odd-one", "seconds-one"]
    llm.shutdowns = {"gpt-4o-mini": "2027-01-14", "odd-one": "whenever",
                     "seconds-one": 1799884800}
    server, _client = headless()
    answer = server.send(Packet.make(PacketType.LIST_MODELS, {}))
    assert answer.success, answer.error
    assert answer.data["models"] == sorted(llm.models)
    assert answer.data["shutdowns"] == {"gpt-4o-mini": "2027-01-14",
                                        "seconds-one": "2027-01-14"}
    assert answer.data["current"] == "test-model"

    llm.shutdowns = {"test-model": in_days(10)}
    kept = server.send(Packet.make(PacketType.LIST_MODELS, {}))  # kept for the session
    assert "test-model" not in kept.data["shutdowns"]
    fresh = server.send(Packet.make(PacketType.LIST_MODELS, {"refresh": True}))
    assert fresh.data["shutdowns"] == {"test-model": in_days(10)}

    tested = server.send(Packet.make(PacketType.TEST_CONNECTION, {}))
    assert tested.success and tested.data["shutdowns"] == {"test-model": in_days(10)}


def test_an_endpoint_without_shutdown_dates_lists_none(headless, llm):
    server, _client = headless()
    answer = server.send(Packet.make(PacketType.LIST_MODELS, {}))
    assert answer.success and answer.data["shutdowns"] == {}
