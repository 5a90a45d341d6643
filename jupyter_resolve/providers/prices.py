"""The shipped price table (``prices.json``, package data) with the admin's overrides."""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib import resources
from typing import Any

from ..contracts.prices import Price, parse_prices


def shipped_prices() -> dict[str, Price]:
    """The table shipped with the package (its ``about`` says where the numbers come from)."""
    text = resources.files(__package__).joinpath("prices.json").read_text(encoding="utf-8")
    return parse_prices(json.loads(text)["models"], where="prices.json")


def load_prices(overrides: Mapping[str, Any]) -> dict[str, Price]:
    """The shipped table, then ``c.Resolve.prices`` over it (a model there replaces ours)."""
    table = shipped_prices()
    table.update(parse_prices(overrides, where="Resolve.prices"))
    return table
