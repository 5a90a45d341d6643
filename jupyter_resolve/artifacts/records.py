"""Data of the artifact store: the artifact manifest, its source, and the promotion request body."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from ..contracts.ids import Id
from ..contracts.pathargs import PathArg
from .media import normalize_media_type

ID_PATTERN = r"^art-[0-9a-f]{24}$"


class Source(BaseModel):
    """Where the bytes came from: an output of a saved notebook, a file of a scratch session, a
    value of a live kernel (sent as its MIME bundle, ``label`` like ``Out[3]`` or a variable
    name), a file under the server root, or the result of a tool call as its run log records it
    (``run_id``, ``call_id``: what a tool card shows)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["notebook", "scratch", "kernel", "file", "tool"]
    notebook: str | None = None
    cell_id: str | None = None
    output_index: int | None = None
    execution_count: int | None = None
    session_id: str | None = None
    path: str | None = None
    label: str | None = None
    run_id: str | None = None
    call_id: str | None = None

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # a tool call's fields only where they mean something: other manifests keep their shape
        data: dict[str, Any] = handler(self)
        if self.kind != "tool":
            data.pop("run_id", None)
            data.pop("call_id", None)
        return data

    def describe(self) -> str:
        """One line for people: where it came from."""
        if self.kind == "notebook":
            return f"{self.notebook} cell {self.cell_id} output {self.output_index}"
        if self.kind == "scratch":
            return f"session {self.session_id}: {self.path}"
        if self.kind == "file":
            return f"file {self.path}"
        if self.kind == "tool":
            return f"run {self.run_id} call {self.call_id}"
        where = f" ({self.notebook} cell {self.cell_id})" if self.notebook else ""
        return f"kernel {self.label or 'value'}{where}"

    def key(self) -> str:
        """The canonical source key: the location only (not the execution count)."""
        where = {
            "kind": self.kind,
            "notebook": self.notebook,
            "cell_id": self.cell_id,
            "output_index": self.output_index,
            "session_id": self.session_id,
            "path": self.path,
            "label": self.label,
        }
        if (
            self.kind == "tool"
        ):  # only here: the other kinds' keys (and so their ids) stay as they were
            where.update(run_id=self.run_id, call_id=self.call_id)
        return json.dumps(where, sort_keys=True, separators=(",", ":"))


class AgentOrigin(BaseModel):
    """Set when the agent asked for the promotion (``artifacts.promote``)."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    call_id: str
    run_seq: int = Field(description="Sequence number of the run-log event the call came after.")


class ArtifactManifest(BaseModel):
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
    #: The person's name as the server's identity provider gives it (``created_by`` is the
    #: login, which under token auth is a random hex string); "" in older manifests.
    created_by_name: str = ""
    agent: AgentOrigin | None = None
    #: Whose it is (DESIGN 10.2): the owner of the run or scratch session it was promoted from;
    #: None (a person's notebook output, file or value, or an older manifest): everyone's.
    owner: str | None = None

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def artifact_id(sha256: str, source: Source) -> str:
    """Same bytes from the same source → same id."""
    digest = hashlib.sha256(f"{sha256}\n{source.key()}".encode()).hexdigest()
    return f"art-{digest[:24]}"


class PromoteRequest(BaseModel):
    """``POST /resolve/api/artifacts``, one source of five:

    - ``{notebook, cell_id, output_index}``: an output of the saved notebook;
    - ``{session_id, path}``: a file of a scratch session's ``work/``;
    - ``{bundle, label?, media_type?, notebook?, cell_id?, execution_count?}``: a kernel value's
      MIME bundle (what ``%resolve promote`` sends); ``media_type`` picks one, else the richest;
    - ``{file}``: a file under the server root;
    - ``{run_id, call_id, media_type?}``: the result of a tool call, read from the run log.
    """

    model_config = ConfigDict(extra="forbid")

    notebook: PathArg | None = None
    cell_id: str | None = Field(default=None, min_length=1, max_length=256)
    output_index: int | None = Field(default=None, ge=0)
    session_id: Id | None = None
    path: PathArg | None = None
    bundle: dict[str, Any] | None = None
    label: str | None = Field(default=None, min_length=1, max_length=256)
    media_type: str | None = Field(default=None, min_length=1, max_length=256)
    execution_count: int | None = Field(default=None, ge=0)
    file: PathArg | None = None
    run_id: Id | None = None
    call_id: str | None = Field(default=None, min_length=1, max_length=256)
    title: str = Field(default="", max_length=500)
    note: str = Field(default="", max_length=10_000)

    @field_validator("media_type")
    @classmethod
    def _media_type(cls, value: str | None) -> str | None:
        return None if value is None else normalize_media_type(value)

    @property
    def kind(self) -> str:
        if self.bundle is not None:
            return "kernel"
        if self.run_id is not None or self.call_id is not None:
            return "tool"
        if self.session_id is not None or self.path is not None:
            return "scratch"
        return "file" if self.file is not None else "notebook"

    @model_validator(mode="after")
    def _one_source(self) -> PromoteRequest:
        kinds = [
            self.bundle is not None,
            self.session_id is not None or self.path is not None,
            self.file is not None,
            self.run_id is not None or self.call_id is not None,
            self.bundle is None
            and (
                self.notebook is not None
                or self.cell_id is not None
                or self.output_index is not None
            ),
        ]
        if sum(kinds) != 1:
            raise ValueError(
                "give one source: {notebook, cell_id, output_index}, {session_id, path}, "
                "{bundle, ...}, {file} or {run_id, call_id}"
            )
        kind = self.kind
        if kind == "notebook" and None in (self.notebook, self.cell_id, self.output_index):
            raise ValueError("a notebook promotion needs notebook, cell_id and output_index")
        if kind == "scratch" and (self.session_id is None or self.path is None):
            raise ValueError("a scratch promotion needs session_id and path")
        if kind == "kernel" and self.output_index is not None:
            raise ValueError("output_index is for a saved notebook's output, not a bundle")
        if kind == "tool" and (self.run_id is None or self.call_id is None):
            raise ValueError("a tool call's result needs run_id and call_id")
        if kind != "kernel" and (self.label or self.execution_count is not None):
            raise ValueError("label and execution_count go with a bundle only")
        if kind not in ("kernel", "tool") and self.media_type:
            raise ValueError("media_type goes with a bundle or a tool call's result only")
        return self
