"""The hub service's limits: who may use which model, how much (jupyter_resolve.hub.limits)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from jupyter_resolve.hub.limits import (
    Limits,
    LimitSpec,
    Spent,
    decide,
    limits_for,
    parse_specs,
    resets_at,
    usage_view,
)

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
