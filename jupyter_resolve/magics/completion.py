"""Tab completion of ``%resolve --model`` (IPython's ``complete_command`` hook).

The names come from ``GET /resolve/api/models`` (the provider's list, only the allowed models
when the server has an allowlist). Completion never raises: a gateway that cannot be reached
completes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .client import Connection, ResolveClient


def wants_model(line: str, symbol: str) -> bool:
    """Whether the word being completed is the value of ``--model``."""
    before = line[: len(line) - len(symbol)] if symbol and line.endswith(symbol) else line
    words = before.split()
    return bool(words) and words[-1] == "--model" and before[-1:].isspace()


def model_names(client: ResolveClient) -> list[str]:
    listing = client.get_json("resolve/api/models")
    models = listing.get("models") if isinstance(listing, dict) else None
    return [str(m["id"]) for m in models or [] if isinstance(m, dict) and m.get("id")]


def model_completer(
    client_for: Callable[[], ResolveClient] | None = None,
) -> Callable[[Any, Any], list[str]]:
    """The hook: ``(shell, event) -> names`` starting with what was typed."""

    def complete(_shell: Any, event: Any) -> list[str]:
        line, symbol = str(getattr(event, "line", "")), str(getattr(event, "symbol", ""))
        if not wants_model(line, symbol):
            return []
        try:
            client = client_for() if client_for else ResolveClient(Connection.from_env())
            names = model_names(client)
        except Exception:  # a failing completer must not break the prompt
            return []
        return [n for n in names if n.startswith(symbol)]

    return complete


def register_completion(ipython: Any, client_for: Callable[[], ResolveClient]) -> None:
    completer = model_completer(client_for)
    for key in ("%resolve", "%%resolve"):
        ipython.set_hook("complete_command", completer, str_key=key)
