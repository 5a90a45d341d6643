"""The peer service: what ``POST /resolve/peer/invoke`` and the JSON-RPC endpoint call.

It composes the pure parts (signing, catalogue, card, grants) with the gateway (tools, souls,
runs) and the nonces kept on disk. Only four names are callable: ``resolve.skills`` and
``resolve.tools`` (read-only catalogues of what that peer may use), ``exec.submit`` and
``exec.status`` (jobs, run with that peer's granted tools). Any other name is denied and nothing
runs.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from .._version import __version__
from ..contracts.errors import BadRequest, ResolveError, TooManyRequests
from ..souls import Soul
from .card import ANSWER_SKILL, build_card
from .catalogue import SoulEntry, skill_entries, soul_entries, tool_entries
from .grants import granted_tools, sandbox_refusal, usable_souls
from .jobs import JobHost, JobManager, StatusArgs, SubmitArgs
from .nonces import DiskNonces
from .signing import Signed, Target, verify

ModelT = TypeVar("ModelT", bound=BaseModel)

CALLABLE = ("resolve.skills", "resolve.tools", "exec.submit", "exec.status")

NONCES_DIR = "peer-nonces"
"""Under the gateway's state dir (``.resolve/peer-nonces/``)."""


def _arguments_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"])
    return f"arguments{'.' + where if where else ''}: {err['msg']}"


class PeerHost(JobHost, Protocol):
    """What the peer service needs of the gateway (beside what its jobs need)."""

    state_dir: Path
    log: logging.Logger
    souls: dict[str, Soul]

    def tool_specs(self) -> list[dict[str, Any]]: ...


class PeerService:
    """One per server: the nonces, the jobs, and the catalogue views."""

    def __init__(self, gateway: PeerHost) -> None:
        self.gateway = gateway
        self.nonces = DiskNonces(gateway.state_dir / NONCES_DIR)
        self.jobs = JobManager(gateway)
        self.warn_unsandboxed()

    def warn_unsandboxed(self) -> None:
        """Say at once (not only when a job is refused) that a grant cannot be honoured."""
        if self.jobs.sandboxed():
            return
        for peer in self.peer_secrets:
            tools = self.jobs.tools_for(peer) or ()
            needs = self.jobs.exec_granted(tools)
            if needs:
                self.gateway.log.warning("jupyter-resolve: %s", sandbox_refusal(peer, needs))

    @property
    def peer_secrets(self) -> Mapping[str, str]:
        secrets: Mapping[str, str] = self.gateway.config.peer_secrets
        return secrets

    @property
    def enabled(self) -> bool:
        """The signed endpoints are off until a peer is configured."""
        return bool(self.peer_secrets)

    def verify(self, headers: Mapping[str, str], body: bytes, target: Target) -> Signed:
        """Raise :class:`~.signing.SignatureError` unless a configured peer signed this request
        to ``target`` (its method, path with the base URL, and Host header)."""
        return verify(
            self.peer_secrets,
            headers,
            body,
            target=target,
            now=time.time(),
            nonces=self.nonces,
            allow_v1=self.gateway.config.peer_signature_v1,
        )

    def redact(self) -> list[str]:
        """Values that must never reach a peer, even inside a description."""
        key = self.gateway.config.provider_key()
        return [*self.peer_secrets.values(), *([key] if key else [])]

    def souls(self) -> list[SoulEntry]:
        return soul_entries(getattr(self.gateway, "souls", None))

    def granted(self, peer: str) -> tuple[str, ...]:
        """The tools ``peer``'s jobs may use (never wider than the allow list)."""
        return self.jobs.tools_for(peer) or ()

    def granted_to_any(self) -> tuple[str, ...]:
        """What at least one configured peer may use: what the public card may mention."""
        names = {t for peer in self.peer_secrets for t in self.granted(peer)}
        return granted_tools(names, self.gateway.allowed_tools())

    def tool_pairs(self, names: tuple[str, ...]) -> list[tuple[str, str]]:
        return [
            (spec["function"]["name"], spec["function"].get("description", ""))
            for spec in self.gateway.tool_specs()
            if spec["function"]["name"] in names
        ]

    def card(self, interface_url: str) -> dict[str, Any]:
        return build_card(
            interface_url=interface_url,
            version=__version__,
            souls=self.souls(),
            allowed=self.gateway.allowed_tools(),
            granted=self.granted_to_any(),
            redact=self.redact(),
        )

    def skills(self, peer: str) -> list[dict[str, str]]:
        """``resolve.skills``: the default answer and the souls whose tools are all granted."""
        granted = self.granted(peer)
        souls = usable_souls(self.souls(), granted, self.gateway.allowed_tools())
        uses = f"with the tools {', '.join(granted)}" if granted else "from the model alone"
        answer = SoulEntry(ANSWER_SKILL, f"Answers a task in text, {uses}.")
        return skill_entries([answer, *souls], self.redact())

    async def invoke(self, peer: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Answer one ``{tool, arguments}`` call of a verified peer; a refusal carries the
        HTTP status to answer with in ``status``."""
        if tool not in CALLABLE:
            return {
                "ok": False,
                "denied": True,
                "error": f"'{tool[:64]}' is not callable by peers; this endpoint offers "
                + ", ".join(CALLABLE),
            }
        if tool == "resolve.skills":
            return {"ok": True, "skills": self.skills(peer)}
        if tool == "resolve.tools":
            pairs = self.tool_pairs(self.granted(peer))
            return {"ok": True, "tools": tool_entries(pairs, self.redact())}
        try:
            if tool == "exec.submit":
                submit = _args(SubmitArgs, arguments)
                job = await self.jobs.submit(peer, submit.prompt, submit.soul)
                return {"ok": True, "job_id": job.job_id, "state": job.state}
            status = _args(StatusArgs, arguments)
            return self.jobs.get(peer, status.job_id).status()
        except TooManyRequests as exc:
            return {**_refusal(exc), "retry_after": exc.retry_after}
        except ResolveError as exc:
            return _refusal(exc)


def _refusal(exc: ResolveError) -> dict[str, Any]:
    return {"ok": False, "error": exc.message, "code": exc.code, "status": exc.status}


def _args(model: type[ModelT], arguments: dict[str, Any]) -> ModelT:
    try:
        return model.model_validate(arguments)
    except ValidationError as exc:
        raise BadRequest(_arguments_error(exc), code="bad_arguments") from exc
