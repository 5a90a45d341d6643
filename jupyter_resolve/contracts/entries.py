"""Configuration entries checked one by one: a pydantic model per entry, and an error that names
the entry and the field at fault, never a value (it may be a secret). Pure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)


def validated(model: type[M], entry: Any, where: str) -> M:
    """``entry`` as ``model``; the ``ValueError`` reads ``where.field: message``."""
    try:
        return model.model_validate(entry)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "entry"
        raise ValueError(f"{where}.{field}: {err['msg']}") from None


def validated_table(model: type[M], raw: Mapping[str, Any], where: str) -> dict[str, M]:
    """``{name: entry}`` as ``{name: model}``; errors as :func:`validated`, ``where[name]``."""
    return {str(name): validated(model, entry, f"{where}[{name!r}]") for name, entry in raw.items()}
