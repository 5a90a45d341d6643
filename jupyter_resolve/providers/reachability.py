"""Whether the provider answers, in plain words with the setting to change (issue 30.6).

``GET /resolve/api/health`` shows ``provider.reachable`` (true, false, or null for the
scripted model and a provider not checked yet), ``error``, ``setting`` and ``checked_at``.
Two things feed it: a cheap, bounded check — a TCP connect to the base URL's host, at most
:data:`CONNECT_TIMEOUT` seconds, never a request, so no key leaves the server and a fake
provider's scripted answers are not used up — run at the server's start and again on a health
request once :data:`CHECK_EVERY` seconds have passed; and every real inference call, whose
failure says more than a connect can (a refused key, an unknown model). A failed call is
logged at warning with its reason, and the runtime is answered with the plain words, so the
run's ``run.error`` says what is wrong and which setting to change.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import urlsplit

from ..contracts.errors import ProviderError
from .base import Provider

CHECK_EVERY = 30.0
CONNECT_TIMEOUT = 2.0
LINE = 300  # a provider's words in a message or the log: one line, cut here
USERINFO = re.compile(r"(\w+://)[^/@\s]+@")
SECRET_QUERY = re.compile(r"([?&](?:api[-_]?key|key|token|access_token)=)[^&\s]+", re.IGNORECASE)


@dataclass
class Reachability:
    """What health shows under ``provider``."""

    reachable: bool | None = None
    error: str | None = None
    setting: str | None = None
    checked_at: float | None = None


def one_line(text: str, limit: int = LINE) -> str:
    """``text`` on one line, credentials in URLs blanked, cut at ``limit`` characters."""
    text = SECRET_QUERY.sub(r"\1***", USERINFO.sub(r"\1", " ".join(text.split())))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _connection_words(detail: str) -> str:
    low = detail.lower()
    if "refused" in low:
        return "connection refused"
    if "name or service not known" in low or "nodename" in low or "getaddrinfo" in low:
        return "its host name does not resolve"
    return one_line(detail) or "no connection"


def _key_variable(described: dict[str, Any]) -> str:
    env = str(described.get("api_key_env") or "")
    return f"${env}" if env else "the variable c.Resolve.api_key_env names"


def plain_failure(exc: ProviderError, described: dict[str, Any]) -> Reachability:
    """A provider's failure for a person: what is wrong, the setting to change, and whether
    the provider answered at all (None: this failure does not say)."""
    base = one_line(str(described.get("base_url") or "the provider"))
    said = one_line(exc.detail or exc.message)
    code = exc.code
    if code == "provider_unreachable":
        words = _connection_words(exc.detail or exc.message)
        return Reachability(False, f"nothing answers at {base}: {words}", "c.Resolve.base_url")
    if code == "provider_timeout":
        error = f"nothing answered at {base} in time ({one_line(exc.message)})"
        return Reachability(False, error, "c.Resolve.provider_timeout")
    if code == "provider_auth":
        variable = _key_variable(described)
        if described.get("api_key_set") is False:
            error = f"no API key is set: {variable} is empty or unset"
        else:
            error = f"the provider refused the key in {variable}: {said}"
        return Reachability(True, error, "c.Resolve.api_key_env")
    if code == "provider_not_found":
        if "model" in said.lower():
            model = described.get("model") or ""
            return Reachability(
                True, f"the provider has no model '{model}': {said}", "c.Resolve.model"
            )
        return Reachability(
            True, f"nothing at {base} answers chat completions: {said}", "c.Resolve.base_url"
        )
    if code == "provider_rate_limited":
        return Reachability(True, f"the provider is rate limiting: {said}")
    if code == "provider_server_error":
        return Reachability(True, f"the provider failed ({exc.status}): {said}")
    if code == "provider_rejected":
        setting = "c.Resolve.stream_usage" if "stream_options" in said else None
        return Reachability(
            True, f"the provider rejected the request ({exc.status}): {said}", setting
        )
    if code == "local_model_error":
        setting = str(getattr(exc, "setting", "") or "c.Resolve.local_model")
        return Reachability(False, one_line(exc.message), setting)
    if code == "provider_empty_stream":
        return Reachability(True, one_line(exc.message), "c.Resolve.local_context")
    if code == "script_invalid":
        return Reachability(None, one_line(exc.message), "c.Resolve.script")
    return Reachability(None, one_line(exc.message))


def for_the_run(failure: Reachability) -> str:
    """The message a run's ``run.error`` carries: the plain words and the setting."""
    error = failure.error or "the provider failed"
    return f"{error} ({failure.setting})" if failure.setting else error


def probe_target(base_url: str | None) -> tuple[str, int] | None:
    """The host and port to connect to; None when there is nothing to check (the scripted
    model) or a proxy stands between (a direct connect would say nothing true)."""
    if not base_url:
        return None
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    if not host or parts.scheme not in ("http", "https"):
        return None
    loopback = host == "localhost" or host.startswith("127.") or host == "::1"
    import urllib.request  # here: it pulls in http.client and email, which a start need not

    if not loopback and parts.scheme in urllib.request.getproxies():
        if not urllib.request.proxy_bypass(host):
            return None
    return host, parts.port or (443 if parts.scheme == "https" else 80)


async def connect_check(base_url: str, target: tuple[str, int]) -> Reachability:
    """Open a TCP connection to ``target`` and close it, within :data:`CONNECT_TIMEOUT`."""
    base = one_line(base_url)
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(*target), CONNECT_TIMEOUT)
    except asyncio.TimeoutError:
        error = f"nothing answers at {base}: no connection within {CONNECT_TIMEOUT:g} s"
        return Reachability(False, error, "c.Resolve.base_url", time.time())
    except OSError as exc:
        error = f"nothing answers at {base}: {_connection_words(f'{type(exc).__name__}: {exc}')}"
        return Reachability(False, error, "c.Resolve.base_url", time.time())
    writer.close()
    return Reachability(True, None, None, time.time())


class ProviderHealth:
    """The reachability of the gateway's provider now; a new provider starts unknown."""

    def __init__(self, log: logging.Logger, every: float = CHECK_EVERY) -> None:
        self.log = log
        self.every = every
        self._provider: Provider | None = None
        self._state = Reachability()
        self._task: asyncio.Task[None] | None = None

    def _of(self, provider: Provider) -> Reachability:
        if provider is not self._provider:  # reconfigured (or a test's own provider)
            self._provider = provider
            self._state = Reachability()
            self._task = None
        return self._state

    def _stale(self, provider: Provider) -> bool:
        state = self._of(provider)
        target = probe_target(provider.describe().get("base_url"))
        checked = state.checked_at
        return target is not None and (checked is None or time.time() - checked >= self.every)

    def check_when_due(self, provider: Provider) -> None:
        """Start a check in the background if none ran in the last :attr:`every` seconds."""
        if self._stale(provider):
            self.check_soon(provider)

    def describe(self, provider: Provider) -> dict[str, Any]:
        """The ``provider`` fields of health, the base URL without credentials among them; a
        check starts in the background when due."""
        self.check_when_due(provider)
        shown = asdict(self._of(provider))
        base_url = provider.describe().get("base_url")
        if base_url:  # a user:password@ or ?key= in it is a credential
            shown["base_url"] = one_line(str(base_url), 1000)
        return shown

    async def ready(self, provider: Provider) -> None:
        """Wait for the first check of ``provider`` (bounded by the connect timeout), so the
        first health answer is not 'unknown'; later ones answer at once."""
        if self._stale(provider) and self._of(provider).checked_at is None:
            task = self.check_soon(provider)
            if task is not None:
                await asyncio.shield(task)

    def check_soon(self, provider: Provider) -> asyncio.Task[None] | None:
        """Start a check unless one is under way."""
        self._of(provider)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._check(provider))
        return self._task

    async def _check(self, provider: Provider) -> None:
        base_url = provider.describe().get("base_url")
        target = probe_target(base_url)
        if target is None:
            return
        found = await connect_check(str(base_url), target)
        if provider is not self._provider:
            return
        state = self._state
        if found.reachable is False or state.reachable is not True:
            self._state = found  # it answers now: a connection failure before is over
        else:  # it answers; what a real call said (a refused key) stands until one succeeds
            state.checked_at = found.checked_at

    def succeeded(self, provider: Provider) -> None:
        """A real inference call went through."""
        self._of(provider)
        self._state = Reachability(True, None, None, time.time())

    def failed(self, provider: Provider, exc: ProviderError, run_id: str | None) -> str:
        """A real inference call failed: log the reason, note it, and return the run's
        message."""
        self.log.warning(
            "jupyter-resolve: inference failed%s: %s %s: %s",
            f" (run {run_id})" if run_id else "",
            exc.status,
            exc.code,
            one_line(exc.message, 1000),
        )
        self._of(provider)
        failure = plain_failure(exc, provider.describe())
        failure.checked_at = time.time()
        if failure.reachable is None:
            failure.reachable = self._state.reachable
        self._state = failure
        return for_the_run(failure)

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
