"""Who may use which model, and how much (pure: no I/O, no clock of its own).

The service's config gives limits at three levels: ``default_limits`` for everyone,
``group_limits`` per JupyterHub group, ``user_limits`` per user name. Each level is a
:class:`LimitSpec`; a field left out (None) says nothing at that level. A user's limits are,
field by field: their own entry's value if it sets one; else the most generous value among
their groups' entries (an unlimited group wins, and allowed models are the union); else the
default. A limit that no level sets is unlimited.

Periods are calendar days and months in UTC. A request is refused (429) once the tokens or the
cost spent in a period, with the worst cases of the requests still in flight, reach that
period's limit; one admitted under the limit runs to its end, so spent may go over by one
request's reservation (:mod:`.budgets` decides it in the database).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..contracts.entries import validated_table

Period = Literal["day", "month"]


class LimitSpec(BaseModel):
    """One level's limits, as written in the service's config."""

    model_config = ConfigDict(extra="forbid")

    models: list[str] | None = None  # allowed model names; "*" allows any
    day_tokens: int | None = Field(default=None, ge=0)
    month_tokens: int | None = Field(default=None, ge=0)
    day_cost: float | None = Field(default=None, ge=0)
    month_cost: float | None = Field(default=None, ge=0)


LIMIT_FIELDS = ("day_tokens", "month_tokens", "day_cost", "month_cost")
ADJECTIVE = {"day": "daily", "month": "monthly"}


def parse_specs(raw: Mapping[str, Any], where: str) -> dict[str, LimitSpec]:
    """``{name: {...}}`` as specs; ValueError naming the entry and field that is wrong."""
    return validated_table(LimitSpec, raw, where)


@dataclass(frozen=True)
class Limits:
    """A user's effective limits; None is unlimited (``models`` None: any model)."""

    models: frozenset[str] | None = None
    day_tokens: int | None = None
    month_tokens: int | None = None
    day_cost: float | None = None
    month_cost: float | None = None

    def allows(self, model: str) -> bool:
        return self.models is None or "*" in self.models or model in self.models

    @property
    def cost_only(self) -> bool:
        """A cost limit and no token limit: a model without a price would be free."""
        costs = self.day_cost is not None or self.month_cost is not None
        return costs and self.day_tokens is None and self.month_tokens is None


def _generous(values: Iterable[float | None]) -> float | None:
    """The most generous of some groups' values: None (unlimited) wins, else the largest."""
    found = list(values)
    if not found or any(v is None for v in found):
        return None
    return max(v for v in found if v is not None)


def limits_for(
    user: str,
    groups: Sequence[str],
    *,
    default: LimitSpec,
    by_group: Mapping[str, LimitSpec],
    by_user: Mapping[str, LimitSpec],
) -> Limits:
    """The limits of ``user``, member of ``groups`` (see the module's docstring)."""
    own = by_user.get(user, LimitSpec())
    mine = [by_group[g] for g in groups if g in by_group]
    values: dict[str, Any] = {}
    for name in ("models", *LIMIT_FIELDS):
        value = getattr(own, name)
        if value is None:
            setting = [getattr(spec, name) for spec in mine if name in spec.model_fields_set]
            if setting and name == "models":
                value = None if None in setting else sorted({m for ms in setting for m in ms})
            elif setting:
                value = _generous(setting)
            else:
                value = getattr(default, name)
        values[name] = value
    models = values.pop("models")
    return Limits(models=frozenset(models) if models is not None else None, **values)


def period_start(period: Period, now: datetime) -> datetime:
    now = now.astimezone(timezone.utc)
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    return day if period == "day" else day.replace(day=1)


def resets_at(period: Period, now: datetime) -> datetime:
    """When ``period``'s count starts again: the next UTC midnight or first of the month."""
    start = period_start(period, now)
    if period == "day":
        return start + timedelta(days=1)
    return (start + timedelta(days=32)).replace(day=1)


def iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Spent:
    """Tokens and cost used so far in the current day and month."""

    day_tokens: int = 0
    day_cost: float = 0.0
    month_tokens: int = 0
    month_cost: float = 0.0


@dataclass(frozen=True)
class Decision:
    """Whether a request may go upstream; when not, the HTTP status and the error body."""

    allowed: bool
    status: int = 200
    code: str = ""
    message: str = ""
    limit: str | None = None  # e.g. "day_tokens"
    limit_value: float | None = None
    resets_at: str | None = None

    def body(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message, "type": self.code}
        if self.limit is not None:
            error.update(limit=self.limit, limit_value=self.limit_value, resets_at=self.resets_at)
        return {"error": error}


def _amount(name: str, value: float) -> str:
    return f"{int(value)} tokens" if name.endswith("tokens") else f"${value:g}"


def decide(user: str, model: str, limits: Limits, spent: Spent, now: datetime) -> Decision:
    """Allow the request, or refuse it: 403 for a model not allowed, 429 over a budget."""
    if not limits.allows(model):
        allowed = ", ".join(sorted(limits.models or ())) or "none"
        return Decision(
            False,
            403,
            "model_not_allowed",
            f"the model '{model}' is not allowed for {user} on this hub (set by the hub's "
            f"administrator); allowed: {allowed}",
        )
    for name in LIMIT_FIELDS:
        limit = getattr(limits, name)
        used = getattr(spent, name)
        if limit is None or used < limit:
            continue
        period: Period = "day" if name.startswith("day") else "month"
        reset = iso(resets_at(period, now))
        return Decision(
            False,
            429,
            "budget_exceeded",
            f"{user} has used {_amount(name, used)} of the {ADJECTIVE[period]} limit of "
            f"{_amount(name, limit)} ({name}) on this hub; it resets at {reset}",
            name,
            limit,
            reset,
        )
    return Decision(True)


def usage_view(limits: Limits, spent: Spent, now: datetime) -> dict[str, Any]:
    """The ``day`` and ``month`` of a usage answer: used, limits and when each resets."""
    return {
        period: {
            "tokens": getattr(spent, f"{period}_tokens"),
            "cost": round(getattr(spent, f"{period}_cost"), 6),
            "limit_tokens": getattr(limits, f"{period}_tokens"),
            "limit_cost": getattr(limits, f"{period}_cost"),
            "resets_at": iso(resets_at(period, now)),
        }
        for period in ("day", "month")
    }


def too_many(user: str, cap: int) -> Decision:
    """The refusal of a request over the per-user cap on requests in flight (429)."""
    return Decision(
        False,
        429,
        "too_many_requests",
        f"{user} already has {cap} requests in flight on this hub (its limit, set by the "
        "hub's administrator); wait for one to finish",
    )


def unpriced(user: str, model: str) -> Decision:
    """The refusal of a model without a price for a user whose limits count only cost."""
    return Decision(
        False,
        403,
        "model_unpriced",
        f"the model '{model}' has no price on this hub and {user}'s limits count cost only, so "
        "it cannot be used (the hub's administrator can add its price)",
    )


def unpriced_models(
    specs: Iterable[LimitSpec], default_model: str, has_price: Callable[[str], bool]
) -> list[str]:
    """The models named in the config without a price, when some level's limits count only
    cost (those models would cost nothing there: the service refuses to start)."""
    specs = list(specs)
    cost_only = any(
        (s.day_cost is not None or s.month_cost is not None)
        and s.day_tokens is None
        and s.month_tokens is None
        for s in specs
    )
    if not cost_only:
        return []
    named = {m for s in specs for m in s.models or () if m != "*"}
    if default_model:
        named.add(default_model)
    return sorted(m for m in named if not has_price(m))
