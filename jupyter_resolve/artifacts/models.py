"""Data of the artifact store: the manifest, its source, and the promotion request body."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

ID_PATTERN = r"^art-[0-9a-f]{24}$"
SESSION_PATTERN = r"^[A-Za-z0-9_.-]{1,64}$"


class Source(BaseModel):
    """Where the bytes came from: a notebook output, or a file of a scratch session."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["notebook", "scratch", "kernel"]
    notebook: str | None = None
    cell_id: str | None = None
    output_index: int | None = None
    execution_count: int | None = None
    session_id: str | None = None
    path: str | None = None

    def key(self) -> str:
        """The canonical source key: the location only (not the execution count)."""
        where = {
            "kind": self.kind,
            "notebook": self.notebook,
            "cell_id": self.cell_id,
            "output_index": self.output_index,
            "session_id": self.session_id,
            "path": self.path,
        }
        return json.dumps(where, sort_keys=True, separators=(",", ":"))


class AgentOrigin(BaseModel):
    """Set when the agent asked for the promotion (``artifacts.promote``)."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    call_id: str
    run_seq: int = Field(description="Sequence number of the run-log event the call came after.")


class Manifest(BaseModel):
    """One artifact: ``manifests/<id>.json``."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=ID_PATTERN)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    media_type: str
    size: int = Field(ge=0)
    title: str = ""
    note: str = ""
    source: Source
    created_at: str
    created_by: str
    agent: AgentOrigin | None = None

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def artifact_id(sha256: str, source: Source) -> str:
    """Same bytes from the same source → same id."""
    digest = hashlib.sha256(f"{sha256}\n{source.key()}".encode()).hexdigest()
    return f"art-{digest[:24]}"


class PromoteRequest(BaseModel):
    """``POST /resolve/api/artifacts``: a saved notebook's output, or a scratch session's file."""

    model_config = ConfigDict(extra="forbid")

    notebook: str | None = Field(default=None, min_length=1, max_length=4096)
    cell_id: str | None = Field(default=None, min_length=1, max_length=256)
    output_index: int | None = Field(default=None, ge=0)
    session_id: str | None = Field(default=None, pattern=SESSION_PATTERN)
    path: str | None = Field(default=None, min_length=1, max_length=4096)
    title: str = Field(default="", max_length=500)
    note: str = Field(default="", max_length=10_000)

    @model_validator(mode="after")
    def _one_source(self) -> PromoteRequest:
        from_notebook = self.notebook is not None
        from_scratch = self.session_id is not None or self.path is not None
        if from_notebook == from_scratch:
            raise ValueError("give either {notebook, cell_id, output_index} or {session_id, path}")
        if from_notebook and (self.cell_id is None or self.output_index is None):
            raise ValueError("a notebook promotion needs cell_id and output_index")
        if from_scratch and (self.session_id is None or self.path is None):
            raise ValueError("a scratch promotion needs session_id and path")
        return self
