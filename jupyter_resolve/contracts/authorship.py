"""Who wrote a cell (DESIGN 3.7, 9.2), pure: the ``metadata.resolve`` of a cell the agent
proposed and a person accepted, and whether it was edited since.

The server makes it when a person accepts (``POST .../proposals/{id}`` answers it per cell);
the panel puts it into the cell. ``edited`` is never stored: it is computed by comparing the
cell's source with ``source_sha256``, the digest of the source as accepted, so any edit (in
JupyterLab, another editor, a collaborator) shows, and undoing it shows too.

    metadata.resolve = {
      "authorship": 1,              # this schema's version
      "run_id", "call_id", "proposal_id",
      "model", "soul",              # what wrote it (the run's)
      "accepted_by",                # the login of the person who accepted it
      "accepted_by_name",           # their name as the identity provider gives it
      "accepted_at",                # ISO 8601, UTC
      "source_sha256",              # sha256 (hex) of the UTF-8 source as accepted
      "edited_on_accept"            # the person edited the proposal before accepting it
    }

Older cells carry only ``run_id``, ``call_id`` and ``proposal_id``: their ``edited`` is None
(unknown). Other keys of ``metadata.resolve`` (an output's artifact ids) are left alone.
"""

from __future__ import annotations

import hashlib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1


def source_sha256(source: str | list[str]) -> str:
    """sha256 (hex) of a cell's source (nbformat may keep it as a list of lines)."""
    text = "".join(source) if isinstance(source, list) else source
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class CellAuthorship(BaseModel):
    """``metadata.resolve`` of an accepted cell (the module's schema)."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    authorship: int = SCHEMA_VERSION
    run_id: str = Field(min_length=1, max_length=128)
    call_id: str = Field(min_length=1, max_length=256)
    proposal_id: str = Field(min_length=1, max_length=128)
    model: str | None = None
    soul: str | None = None
    accepted_by: str | None = None
    accepted_by_name: str | None = None
    accepted_at: str | None = None
    source_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    edited_on_accept: bool = False


def cell_authorship(cell: dict[str, Any]) -> dict[str, Any] | None:
    """The authorship of an nbformat cell (a dict) with ``edited`` computed, or None when the
    agent did not write it (no ``metadata.resolve.run_id``) or the metadata is not ours."""
    metadata = cell.get("metadata")
    resolve = metadata.get("resolve") if isinstance(metadata, dict) else None
    if not isinstance(resolve, dict) or not resolve.get("run_id"):
        return None
    try:
        authorship = CellAuthorship.model_validate(resolve)
    except ValueError:
        return None
    data = authorship.model_dump(exclude_none=True)
    data = {k: v for k, v in data.items() if k in CellAuthorship.model_fields}
    digest = authorship.source_sha256
    source = cell.get("source", "")
    edited = None if digest is None else source_sha256(source) != digest
    return {**data, "cell_id": cell.get("id"), "edited": edited}


def accepted(
    sources: list[str],
    *,
    run_id: str,
    call_id: str,
    proposal_id: str,
    model: str | None,
    soul: str | None,
    by: str,
    by_name: str,
    at: str,
    edited: bool,
) -> list[dict[str, Any]]:
    """The ``metadata.resolve`` of each accepted cell (``sources``: their sources as accepted),
    what the decision's answer carries for the client to put into the cells."""
    return [
        CellAuthorship(
            run_id=run_id,
            call_id=call_id,
            proposal_id=proposal_id,
            model=model,
            soul=soul,
            accepted_by=by or None,
            accepted_by_name=by_name or None,
            accepted_at=at,
            source_sha256=source_sha256(source),
            edited_on_accept=edited,
        ).model_dump(exclude_none=True)
        for source in sources
    ]
