"""Model prices and the cost of a round (pure).

Prices are USD per million tokens: ``input`` (uncached), ``output``, ``cache_read`` and
``cache_write`` (each defaulting to the input price). ``prompt_tokens`` counts every input
token, cached ones included (the OpenAI sense; the Anthropic translation sums its three counts),
so the uncached part is what is left after the reads and writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .entries import validated_table

MILLION = 1_000_000


class Price(BaseModel):
    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_read: float | None = Field(default=None, ge=0)
    cache_write: float | None = Field(default=None, ge=0)


def parse_prices(raw: Mapping[str, Any], *, where: str = "prices") -> dict[str, Price]:
    """``{model: {input, output, cache_read?, cache_write?}}`` as prices; ValueError names the
    model whose entry is wrong."""
    return validated_table(Price, raw, where)


def price_for(model: str, table: Mapping[str, Price]) -> Price | None:
    """The price of ``model``: its exact name, else the longest name in the table it starts
    with (with or without a router's ``vendor/`` prefix); None when unknown."""
    names = [model, model.rsplit("/", 1)[-1]]
    for name in names:
        if name in table:
            return table[name]
    best = max(
        (key for key in table for name in names if name.startswith(key)), key=len, default=None
    )
    return table[best] if best is not None else None


def round_cost(
    price: Price,
    *,
    prompt_tokens: int,
    completion_tokens: int,
    cached_tokens: int = 0,
    cache_write_tokens: int = 0,
) -> float:
    """USD for one completion."""
    uncached = max(0, prompt_tokens - cached_tokens - cache_write_tokens)
    read = price.cache_read if price.cache_read is not None else price.input
    write = price.cache_write if price.cache_write is not None else price.input
    total = (
        uncached * price.input
        + cached_tokens * read
        + cache_write_tokens * write
        + completion_tokens * price.output
    )
    return total / MILLION
