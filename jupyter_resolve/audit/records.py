"""What an audit event says, made from a run's normalized events, a promotion's manifest (pure).

Ids and counts only; the prompt, the answer, a call's arguments, a title or a reason only when
``content`` (``c.Resolve.audit_content``). A field with no value is left out (the schemas in
``schemas/`` say which are required).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..contracts.run_rows import usage_totals

BASE = "https://jupyter-resolve.org/events/"
RUN = BASE + "run"
TOOL_APPROVAL = BASE + "tool-approval"
PROMOTION = BASE + "promotion"
PROPOSAL = BASE + "proposal"
SCHEMA_FILES = {
    RUN: "run.yaml",
    TOOL_APPROVAL: "tool-approval.yaml",
    PROMOTION: "promotion.yaml",
    PROPOSAL: "proposal.yaml",
}

Record = tuple[str, dict[str, Any]]
"""(schema id, the event's data)."""

Decider = Callable[[str, str], "str | None"]
"""(run id, call or proposal id) → who decided, when a handler noted it."""


def _kept(data: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if v is not None}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


@dataclass
class RunTrail:
    """What the audit keeps of one run between its events."""

    run_id: str
    user: str
    content: bool = False
    started: dict[str, Any] = field(default_factory=dict)
    usages: list[dict[str, Any]] = field(default_factory=list)
    tool_calls: int = 0
    error: str | None = None
    proposals: dict[str, tuple[str | None, int]] = field(default_factory=dict)
    answer_chars: int = 0  # counted as the text comes: the whole answer is read only for content

    def take(
        self, kind: str, data: Mapping[str, Any], answer: Callable[[], str], decider: Decider
    ) -> Record | None:
        """The audit record one of the run's events makes, if any (and what it keeps);
        ``answer`` is called only when the records carry content."""
        if kind == "text.delta":
            text = data.get("text")
            self.answer_chars += len(text) if isinstance(text, str) else 0
        elif kind == "run.started":
            self.started = dict(data)
            return RUN, self._started()
        if kind == "usage":
            self.usages.append(dict(data))
        elif kind == "tool.completed":
            self.tool_calls += 1
        elif kind == "run.error":
            self.error = _text(data.get("code")) or self.error
        elif kind == "notebook.proposal":
            cells = data.get("cells")
            count = len(cells) if isinstance(cells, list) else 0
            self.proposals[str(data.get("proposal_id"))] = (_text(data.get("notebook")), count)
        elif kind == "tool.approval" and data.get("state") in ("approved", "denied"):
            return TOOL_APPROVAL, self._approval(data, decider)
        elif kind == "notebook.decision":
            return PROPOSAL, self._decision(data, decider)
        elif kind == "run.completed":
            return RUN, self._ended(data, answer() if self.content else None)
        return None

    def _who(self, run: Mapping[str, Any]) -> dict[str, Any]:
        started = self.started
        return {
            "run_id": self.run_id,
            "session_id": str(started.get("session_id") or run.get("session_id") or ""),
            "user": _text(started.get("owner")) or self.user,  # who started the run
            "model": str(started.get("model") or ""),
            "soul": _text(started.get("soul")),
            "agent": _text(started.get("agent")),
            "peer": _text(started.get("peer")),
            "parent": _text(started.get("parent")),
            "task_id": _text(started.get("task_id")),
        }

    def _started(self) -> dict[str, Any]:
        prompt = self.started.get("prompt")
        prompt = prompt if isinstance(prompt, str) else ""
        tools = self.started.get("tools")
        return _kept(
            {
                "action": "started",
                **self._who(self.started),
                "tools": len(tools) if isinstance(tools, list) else 0,
                "prompt_chars": len(prompt),
                "prompt": prompt if self.content else None,
            }
        )

    def _ended(self, data: Mapping[str, Any], answer: str | None) -> dict[str, Any]:
        usage = usage_totals(self.usages)
        rounds = data.get("rounds")
        return _kept(
            {
                "action": "ended",
                **self._who(data),
                "reason": _text(data.get("reason")) or "error",
                "rounds": rounds if isinstance(rounds, int) else 0,
                "tool_calls": self.tool_calls,
                "prompt_tokens": usage.prompt_tokens or 0,
                "completion_tokens": usage.completion_tokens or 0,
                "cost": usage.cost,
                "error": self.error,
                "answer_chars": self.answer_chars,
                "answer": answer if self.content else None,
            }
        )

    def _approval(self, data: Mapping[str, Any], decider: Decider) -> dict[str, Any]:
        call_id = str(data.get("call_id") or "")
        by = str(data.get("by") or "person")
        arguments = data.get("arguments")
        return _kept(
            {
                "run_id": self.run_id,
                "call_id": call_id,
                "tool": str(data.get("name") or ""),
                "state": data.get("state"),
                "by": by,
                "user": (by == "person" and decider(self.run_id, call_id)) or self.user,
                "arguments": arguments if self.content and isinstance(arguments, dict) else None,
            }
        )

    def _decision(self, data: Mapping[str, Any], decider: Decider) -> dict[str, Any]:
        proposal_id = str(data.get("proposal_id") or "")
        notebook, cells = self.proposals.get(proposal_id, (None, 0))
        by = str(data.get("by") or "person")
        return _kept(
            {
                "run_id": self.run_id,
                "proposal_id": proposal_id,
                "notebook": notebook,
                "cells": cells,
                "decision": data.get("decision"),
                "edited": bool(data.get("edited")),
                "ran": bool(data.get("ran")),
                "by": by,
                "user": (by == "person" and decider(self.run_id, proposal_id)) or self.user,
                "reason": _text(data.get("reason")) if self.content else None,
            }
        )


def promotion_record(
    manifest: Mapping[str, Any], created: bool, server_user: str, content: bool
) -> Record:
    """The audit record of a promotion, from the artifact's manifest (its JSON form)."""
    source = manifest.get("source") or {}
    agent = manifest.get("agent") or {}
    by_agent = bool(agent) or manifest.get("created_by") == "agent"
    return PROMOTION, _kept(
        {
            "artifact_id": manifest.get("id"),
            "sha256": manifest.get("sha256"),
            "media_type": manifest.get("media_type"),
            "size": manifest.get("size"),
            "source": source.get("kind"),
            "path": _text(source.get("notebook")) or _text(source.get("path")),
            "session_id": _text(source.get("session_id")),
            "run_id": _text(agent.get("run_id")) or _text(source.get("run_id")),
            "call_id": _text(agent.get("call_id")) or _text(source.get("call_id")),
            "created": created,
            "by": "agent" if by_agent else "person",
            "user": (not by_agent and _text(manifest.get("created_by"))) or server_user,
            "title": _text(manifest.get("title")) if content else None,
            "note": _text(manifest.get("note")) if content else None,
        }
    )
