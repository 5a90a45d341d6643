"""The hub service's limits: who may use which model, how much (jupyter_resolve.hub.limits)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from jupyter_resolve.contracts.errors import BadRequest
from jupyter_resolve.hub.admin_page import page
from jupyter_resolve.hub.handlers import parse_body
from jupyter_resolve.hub.limits import (
    Limits,
    LimitSpec,
    Spent,
    decide,
    limits_for,
    parse_specs,
    resets_at,
    too_many,
    unpriced,
    unpriced_models,
    usage_view,
)
from jupyter_resolve.hub.worst_case import completion_limit, prompt_estimate

NOW = datetime(2026, 12, 31, 18, 30, tzinfo=timezone.utc)


def limits(user: str, member_of: list[str], **levels: dict) -> Limits:
    return limits_for(
        user,
        member_of,
        default=LimitSpec.model_validate(levels.get("default", {})),
        by_group=parse_specs(levels.get("by_group", {}), "group_limits"),
        by_user=parse_specs(levels.get("by_user", {}), "user_limits"),
    )


def test_nothing_configured_is_unlimited() -> None:
    found = limits("alice", [])
    assert found == Limits()
    assert decide("alice", "any-model", found, Spent(10**9, 10**6, 10**9, 10**6), NOW).allowed


def test_the_users_own_value_wins_then_the_most_generous_group_then_the_default() -> None:
    levels = {
        "default": {"day_tokens": 100, "month_cost": 5, "models": ["small"]},
        "by_group": {
            "students": {"day_tokens": 200},
            "staff": {"day_tokens": 1000, "models": ["big"]},
            "open": {"month_cost": None},
        },
        "by_user": {"carol": {"day_tokens": 10}},
    }
    assert limits("bob", [], **levels).day_tokens == 100
    bob = limits("bob", ["students", "staff"], **levels)
    assert bob.day_tokens == 1000 and bob.models == frozenset({"big"})
    assert bob.month_cost == 5  # no group of his sets it: the default
    assert limits("dan", ["open"], **levels).month_cost is None  # a group lifts the limit
    assert limits("carol", ["staff"], **levels).day_tokens == 10


def test_a_model_not_allowed_is_403_naming_the_allowed_ones() -> None:
    found = limits("bob", [], default={"models": ["small", "tiny"]})
    refused = decide("bob", "big", found, Spent(), NOW)
    assert not refused.allowed and refused.status == 403
    assert refused.code == "model_not_allowed" and "small, tiny" in refused.message
    assert decide("bob", "tiny", found, Spent(), NOW).allowed
    assert limits("bob", [], default={"models": ["*"]}).allows("anything")


@pytest.mark.parametrize(
    ("spent", "limit", "reset"),
    [
        (Spent(day_tokens=20), "day_tokens", "2027-01-01T00:00:00Z"),
        (Spent(month_cost=3.5), "month_cost", "2027-01-01T00:00:00Z"),
    ],
)
def test_over_budget_is_429_with_the_limit_and_its_reset(
    spent: Spent, limit: str, reset: str
) -> None:
    found = limits("bob", [], default={"day_tokens": 20, "month_cost": 3.5})
    refused = decide("bob", "m", found, spent, NOW)
    assert (refused.allowed, refused.status, refused.code) == (False, 429, "budget_exceeded")
    error = refused.body()["error"]
    assert error["limit"] == limit and error["resets_at"] == reset
    assert limit in error["message"] and reset in error["message"]
    assert decide("bob", "m", found, Spent(day_tokens=19, month_cost=3.4), NOW).allowed


def test_periods_reset_at_the_next_utc_midnight_and_first_of_the_month() -> None:
    mid = datetime(2026, 2, 14, 23, 59, tzinfo=timezone.utc)
    assert resets_at("day", mid) == datetime(2026, 2, 15, tzinfo=timezone.utc)
    assert resets_at("month", mid) == datetime(2026, 3, 1, tzinfo=timezone.utc)


def test_the_usage_view_has_the_shape_the_status_tab_reads() -> None:
    found = limits("bob", [], default={"day_tokens": 20})
    view = usage_view(found, Spent(5, 0.25, 7, 0.5), NOW)
    assert view["day"] == {
        "tokens": 5,
        "cost": 0.25,
        "limit_tokens": 20,
        "limit_cost": None,
        "resets_at": "2027-01-01T00:00:00Z",
    }
    assert view["month"]["tokens"] == 7


def test_a_wrong_limit_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"user_limits\['bob'\].day_tokens"):
        parse_specs({"bob": {"day_tokens": -1}}, "user_limits")
    with pytest.raises(ValueError, match=r"\.daily: Extra inputs"):
        parse_specs({"bob": {"daily": 1}}, "user_limits")


def test_a_locked_model_says_the_administrator_set_it() -> None:
    refused = decide("bob", "big", limits("bob", [], default={"models": ["small"]}), Spent(), NOW)
    assert "administrator" in refused.message


def test_cost_only_limits_name_the_models_without_a_price() -> None:
    priced = {"cheap"}.__contains__
    specs = [LimitSpec(month_cost=5, models=["cheap", "free-lunch"]), LimitSpec(models=["x"])]
    assert unpriced_models(specs, "default-m", priced) == ["default-m", "free-lunch", "x"]
    with_tokens = [LimitSpec(month_cost=5, day_tokens=100, models=["free-lunch"])]
    assert unpriced_models(with_tokens, "", priced) == []  # tokens count them
    assert Limits(month_cost=5).cost_only and not Limits(month_cost=5, day_tokens=1).cost_only
    assert unpriced("bob", "free-lunch").status == 403


def test_the_fifth_request_in_flight_is_a_429_that_says_so() -> None:
    refused = too_many("bob", 4)
    assert (refused.status, refused.code) == (429, "too_many_requests")
    assert "4 requests in flight" in refused.message


def test_the_worst_case_is_the_requests_own_limit_else_the_cap() -> None:
    assert completion_limit({"max_tokens": 300}, 4096) == 300
    assert completion_limit({"max_completion_tokens": 50, "max_tokens": 300}, 4096) == 50
    assert completion_limit({"max_tokens": True}, 4096) == 4096
    assert completion_limit({}, 4096) == 4096
    assert prompt_estimate(4000) >= 1000


@pytest.mark.parametrize(
    "raw",
    [b'{"temperature": NaN}', b'{"t": Infinity}', b"[" * 100 + b"]" * 100, b"[1]", b"{bad"],
)
def test_bad_bodies_are_a_bad_request(raw: bytes) -> None:
    with pytest.raises(BadRequest):
        parse_body(raw)
    assert parse_body(b'{"model": "m"}') == {"model": "m"}


def test_the_admin_page_escapes_every_name() -> None:
    evil = '<script>alert("x")</script>'
    period = {"tokens": 5, "cost": 0.1, "limit_tokens": None, "limit_cost": 2.0}
    html = page(
        [{"user": evil, "day": period, "month": period}],
        [("2026-12-30", 0, 0.0), ("2026-12-31", 1234, 0.5)],
        [(evil, 1234, 0.5)],
        "1.0",
    )
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<svg" in html and "1,234 tokens" in html
