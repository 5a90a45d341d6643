"""The peer service: what ``POST /resolve/peer/invoke`` and the JSON-RPC endpoint call.

It composes the pure parts (signing, catalogue, card) with the gateway (tools, souls, runs).
Only four names are callable: ``resolve.skills`` and ``resolve.tools`` (read-only catalogues),
``exec.submit`` and ``exec.status`` (jobs). Any other name is denied and nothing runs.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from .._version import __version__
from ..errors import BadRequest, ResolveError
from .card import build_card
from .catalogue import SoulEntry, skill_entries, soul_entries, tool_entries
from .jobs import JobManager, StatusArgs, SubmitArgs
from .signing import NonceCache, Signed, verify

if TYPE_CHECKING:
    from ..gateway import Gateway

ModelT = TypeVar("ModelT", bound=BaseModel)

CALLABLE = ("resolve.skills", "resolve.tools", "exec.submit", "exec.status")


def _arguments_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"])
    return f"arguments{'.' + where if where else ''}: {err['msg']}"


class PeerService:
    """One per server: the nonce cache, the jobs, and the catalogue views."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.nonces = NonceCache()
        self.jobs = JobManager(gateway)

    @property
    def peer_secrets(self) -> Mapping[str, str]:
        secrets: Mapping[str, str] = self.gateway.config.peer_secrets
        return secrets

    @property
    def enabled(self) -> bool:
        """The signed endpoints are off until a peer is configured."""
        return bool(self.peer_secrets)

    def verify(self, headers: Mapping[str, str], body: bytes) -> Signed:
        """Raise :class:`~.signing.SignatureError` unless a configured peer signed this."""
        return verify(self.peer_secrets, headers, body, now=time.time(), nonces=self.nonces)

    def redact(self) -> list[str]:
        """Values that must never reach a peer, even inside a description."""
        key = self.gateway.config.provider_key()
        return [*self.peer_secrets.values(), *([key] if key else [])]

    def souls(self) -> list[SoulEntry]:
        return soul_entries(getattr(self.gateway, "souls", None))

    def tool_pairs(self) -> list[tuple[str, str]]:
        return [
            (spec["function"]["name"], spec["function"].get("description", ""))
            for spec in self.gateway.tool_specs()
        ]

    def card(self, interface_url: str) -> dict[str, Any]:
        return build_card(
            interface_url=interface_url,
            version=__version__,
            souls=self.souls(),
            tools=[name for name, _ in self.tool_pairs()],
            redact=self.redact(),
        )

    async def invoke(self, peer: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Answer one ``{tool, arguments}`` call of a verified peer."""
        if tool not in CALLABLE:
            return {
                "ok": False,
                "denied": True,
                "error": f"'{tool[:64]}' is not callable by peers; this endpoint offers "
                + ", ".join(CALLABLE),
            }
        if tool == "resolve.skills":
            return {"ok": True, "skills": skill_entries(self.souls(), self.redact())}
        if tool == "resolve.tools":
            return {"ok": True, "tools": tool_entries(self.tool_pairs(), self.redact())}
        try:
            if tool == "exec.submit":
                submit = _args(SubmitArgs, arguments)
                job = await self.jobs.submit(peer, submit.prompt, submit.soul)
                return {"ok": True, "job_id": job.job_id, "state": job.state}
            status = _args(StatusArgs, arguments)
            return self.jobs.get(peer, status.job_id).status()
        except ResolveError as exc:
            return {"ok": False, "error": exc.message, "code": exc.code}


def _args(model: type[ModelT], arguments: dict[str, Any]) -> ModelT:
    try:
        return model.model_validate(arguments)
    except ValidationError as exc:
        raise BadRequest(_arguments_error(exc), code="bad_arguments") from exc
