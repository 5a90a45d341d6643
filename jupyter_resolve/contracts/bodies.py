"""Pydantic models of every body that crosses a process boundary.

client → gateway: :class:`ChatRequest`; gateway → runtime: :class:`AgentChatBody`;
runtime → gateway: :class:`RuntimeFrame` (SSE dialect) and :class:`ToolCallRequest`;
gateway → runtime: :class:`ToolResult`; gateway → client: :class:`Event`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from .acp_agents import AGENT_NAME
from .ids import Id
from .notebook import MAX_MENTIONS, Mention
from .pathargs import PathArg

Role = Literal["system", "user", "assistant", "tool", "developer"]

EventType = Literal[
    "run.started",
    "text.delta",
    "reasoning.delta",
    "tool.writing",
    "tool.requested",
    "tool.approval",
    "tool.started",
    "tool.output",
    "tool.completed",
    "usage",
    "run.error",
    "run.completed",
    "context.compacted",
    "notebook.proposal",
    "notebook.decision",
    "run.message",
]
EVENT_TYPES: tuple[str, ...] = get_args(EventType)
CompletionReason = Literal["stop", "budget", "cancelled", "error", "interrupted"]


def text_of(content: Any) -> str:
    """A message's text, whether a string or a list of OpenAI content parts (a part without a
    ``type`` counts as text); another value as its ``str``, None as ``""``."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type", "text") == "text"
        )
    return "" if content is None else str(content)


class ChatMessage(BaseModel):
    """One OpenAI-style chat message; unknown fields are kept (they pass through to history)."""

    model_config = ConfigDict(extra="allow")

    role: Role
    content: str | list[dict[str, Any]] | None = None


class ChatRequest(BaseModel):
    """``POST /resolve/api/chat``."""

    model_config = ConfigDict(extra="forbid")

    messages: list[ChatMessage] = Field(min_length=1)
    model: str | None = None
    soul: str | None = None
    session_id: Id | None = None
    system: str | None = None
    attachments: list[PathArg] = Field(default_factory=list, max_length=64)
    notebook: PathArg | None = None
    # @name: variables of the notebook's kernel described for the model (DESIGN 9.2)
    mentions: list[Mention] = Field(default_factory=list, max_length=MAX_MENTIONS)
    # an external agent (c.Resolve.acp_agents) drives the run instead of the gateway's model
    agent: Annotated[str, StringConstraints(pattern=AGENT_NAME)] | None = None


class Budget(BaseModel):
    rounds: int = Field(default=8, ge=1, le=64)


class AgentChatBody(BaseModel):
    """``POST /chat`` to agent-httpd (DESIGN 3.1)."""

    run_id: str
    message: str
    history: list[dict[str, Any]]
    system: str
    tools: list[dict[str, Any]]
    model: str
    budget: Budget


class RuntimeFrame(BaseModel):
    """One ``data: {"t": TYPE, "d": DATA}`` frame of the runtime's dialect."""

    model_config = ConfigDict(extra="forbid")

    t: Literal[
        "run",
        "round",
        "delta",
        "reasoning",
        "tool_progress",
        "tool_call",
        "tool_result",
        "usage",
        "message",
        "error",
        "done",
    ]
    d: dict[str, Any]


class ToolCallRequest(BaseModel):
    """``POST /resolve/internal/tools`` from the runtime (DESIGN 3.3)."""

    model_config = ConfigDict(extra="forbid")

    run_id: Id
    call_id: str = Field(min_length=1, max_length=256)
    name: str = Field(min_length=1, max_length=128)
    arguments: dict[str, Any] = Field(default_factory=dict)


class ToolResult(BaseModel):
    """The tools endpoint's answer."""

    ok: bool
    output: str
    mime: dict[str, Any] | None = None
    truncated: bool = False
    ms: int = 0


class Event(BaseModel):
    """A normalized event as clients see it (DESIGN 3.6) and as the run log stores it."""

    seq: int
    type: str  # an EventType for runs; tasks add task.started / task.completed
    data: dict[str, Any]


class RunInfo(BaseModel):
    """A row of ``GET /resolve/api/runs``."""

    run_id: str
    session_id: str
    soul: str | None
    model: str
    status: Literal["running", "completed"]
    reason: CompletionReason | None
    started_at: float
    ended_at: float | None = None
    prompt: str | None = None  # the start of the message that began the run
    events: int
    peer: str | None = None
    owner: str | None = None  # who started it (a Jupyter user name, ``peer:<name>``)
    parent: str | None = None
    task_id: str | None = None  # set on the steps of a task
    prompt_tokens: int | None = None  # summed over the run's usage events, once it ended
    completion_tokens: int | None = None
    cost: float | None = None
