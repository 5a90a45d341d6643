"""The OpenAI-compatible facade's models and error bodies (pure).

The facade lists the agent as models: ``resolve`` (the default soul) and ``resolve/<soul>`` for
each soul, which a chat request names to select that soul. Any other name goes to the provider
as the model to use (as before). Every reply names the model the request asked for, and every
error under ``/resolve/v1/`` has OpenAI's shape: ``{"error": {message, type, param, code}}``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .errors import NotFound

FACADE_MODEL = "resolve"
SOUL_PREFIX = FACADE_MODEL + "/"
DEFAULT_MODEL_NAMES = ("", FACADE_MODEL, "default")
OWNER = "jupyter-resolve"

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    409: "conflict_error",
    413: "invalid_request_error",
    429: "rate_limit_error",
}


def model_entry(model_id: str, created: int) -> dict[str, Any]:
    return {"id": model_id, "object": "model", "created": created, "owned_by": OWNER}


def model_ids(souls: Iterable[str]) -> list[str]:
    return [FACADE_MODEL, *(SOUL_PREFIX + name for name in sorted(souls))]


def model_list(souls: Iterable[str], created: int) -> dict[str, Any]:
    """``GET /resolve/v1/models``."""
    return {"object": "list", "data": [model_entry(m, created) for m in model_ids(souls)]}


def unknown_model(name: str) -> NotFound:
    return NotFound(
        f"The model '{name[:128]}' does not exist: this server offers "
        + ", ".join(f"'{m}'" for m in model_ids([]))
        + " and 'resolve/<soul>' for each soul (GET /resolve/v1/models lists them)",
        code="model_not_found",
    )


def find_model(name: str, souls: Iterable[str], created: int) -> dict[str, Any]:
    """``GET /resolve/v1/models/{id}``: one of the listed models, else ``model_not_found``."""
    if name not in model_ids(souls):
        raise unknown_model(name)
    return model_entry(name, created)


@dataclass(frozen=True)
class ModelChoice:
    """What a chat request's ``model`` selects: a soul, or a provider model, or neither."""

    soul: str | None = None
    model: str | None = None


def choose(name: str, souls: Iterable[str]) -> ModelChoice:
    """``resolve`` (or nothing): the defaults; ``resolve/<soul>``: that soul (an unknown one is
    ``model_not_found``); anything else: the provider's model of that name."""
    if name in DEFAULT_MODEL_NAMES:
        return ModelChoice()
    if name.startswith(SOUL_PREFIX):
        soul = name[len(SOUL_PREFIX) :]
        if soul not in set(souls):
            raise unknown_model(name)
        return ModelChoice(soul=soul)
    return ModelChoice(model=name)


def openai_error(status: int, message: str, code: str | None) -> dict[str, Any]:
    """An error body as OpenAI's API writes it."""
    kind = ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}
