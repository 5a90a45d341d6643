"""A request's worst case, reserved against the budget before it goes upstream (pure).

Its completion may use up to its own ``max_completion_tokens`` / ``max_tokens`` (else the
configured cap, ``ResolveHub.reserve_max_tokens``); its prompt is estimated from the body's size,
about four bytes a token, which errs high for JSON with its quoting and keys.
"""

from __future__ import annotations

from typing import Any

BYTES_PER_TOKEN = 4
LIMIT_KEYS = ("max_completion_tokens", "max_tokens", "max_output_tokens")


def prompt_estimate(body_size: int) -> int:
    return body_size // BYTES_PER_TOKEN + 8


def completion_limit(body: dict[str, Any], cap: int) -> int:
    """The most the answer may use: the request's own limit, else ``cap``."""
    for key in LIMIT_KEYS:
        value = body.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return cap
