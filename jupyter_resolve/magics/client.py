"""A small synchronous client of the public API (DESIGN 3.5) for the user's kernel.

It reads ``JUPYTER_RESOLVE_URL`` and ``JUPYTER_RESOLVE_TOKEN`` (exported by the server into the
kernels it starts, or set by hand; ``KERNEL_RESOLVE_URL`` and ``KERNEL_RESOLVE_TOKEN`` in a
kernel on a Jupyter gateway), streams normalized events (DESIGN 3.6) as plain dicts
``{"seq", "type", "data"}`` — the run log's shape — and turns HTTP failures into
:class:`ClientError` with the gateway's message.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..contracts.errors import ClientError, ConnectionMissing
from ..contracts.sse import SSEDecoder, SSEEvent

if TYPE_CHECKING:
    import httpx

URL_ENV = "JUPYTER_RESOLVE_URL"
TOKEN_ENV = "JUPYTER_RESOLVE_TOKEN"
# The same two, as a kernel on a Jupyter gateway gets them (gateways forward KERNEL_* only).
GATEWAY_URL_ENV = "KERNEL_RESOLVE_URL"
GATEWAY_TOKEN_ENV = "KERNEL_RESOLVE_TOKEN"

Event = dict[str, Any]


MISSING_HELP = (
    "jupyter-resolve does not know where its server is: set {missing} in this kernel's "
    "environment. Kernels started by a Jupyter server with the jupyter_resolve extension get "
    "both automatically; elsewhere set, for example,\n"
    "  %env JUPYTER_RESOLVE_URL=http://127.0.0.1:8888/\n"
    "  %env JUPYTER_RESOLVE_TOKEN=<the server's token>\n"
    "(the URL includes the server's base_url; any token the server accepts works)."
)


@dataclass(frozen=True)
class Connection:
    """Where the gateway is and how to authenticate to it."""

    url: str
    token: str

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Connection:
        """Read the two variables (or, under JupyterHub, what the hub provides)."""
        env = dict(os.environ if environ is None else environ)
        url = (env.get(URL_ENV, "") or env.get(GATEWAY_URL_ENV, "")).strip()
        token = (env.get(TOKEN_ENV, "") or env.get(GATEWAY_TOKEN_ENV, "")).strip()
        if not url and env.get("JUPYTERHUB_SERVICE_URL") and env.get("JUPYTERHUB_SERVICE_PREFIX"):
            # A single-user server's own URL and token, as JupyterHub hands them to it.
            url = env["JUPYTERHUB_SERVICE_URL"].rstrip("/") + "/"
            prefix = env["JUPYTERHUB_SERVICE_PREFIX"].strip("/")
            if prefix and not url.rstrip("/").endswith(prefix):
                url = f"{url}{prefix}/"
        if not token:
            token = env.get("JUPYTERHUB_API_TOKEN", "").strip()
        missing = [name for name, value in ((URL_ENV, url), (TOKEN_ENV, token)) if not value]
        if missing:
            raise ConnectionMissing(MISSING_HELP.format(missing=" and ".join(missing)))
        return cls(url if url.endswith("/") else url + "/", token)


def parse_sse(pieces: Iterable[bytes]) -> Iterator[Event]:
    """The bytes of an event stream, as the network delivers them → events; comments
    (keep-alives) are skipped. The bytes go to the one SSE decoder of the package
    (:class:`SSEDecoder`), which ends lines at LF only: a text line reader (httpx's
    ``iter_lines``, ``str.splitlines``) also ends them at U+2028, NEL and other separators a
    model may write, and would cut an event's JSON in two."""
    decoder = SSEDecoder()
    for piece in pieces:
        yield from map(_event, decoder.feed(piece))
    yield from map(_event, decoder.close())


def _event(event: SSEEvent) -> Event:
    seq = int(event.id) if event.id and event.id.isdigit() else None
    return {"seq": seq, "type": event.event or "message", "data": json.loads(event.data)}


def _error_of(response: httpx.Response) -> ClientError:
    try:
        body = json.loads(response.read() or b"{}")
    except ValueError:
        body = {}
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        message = str(error.get("message", ""))
        code = str(error.get("code", ""))
    else:
        message = str(body.get("message", "")) if isinstance(body, dict) else ""
        code = ""
    where = f"{response.request.method} {response.request.url.path}"
    if response.status_code == 403:
        message = message or "forbidden"
        message += f" — {TOKEN_ENV} (or the token set by hand) was not accepted"
    return ClientError(
        f"{where} answered {response.status_code}: {message or response.reason_phrase}",
        status=response.status_code,
        code=code,
    )


class ResolveClient:
    """Synchronous HTTP + SSE client of ``/resolve/api/*``."""

    def __init__(self, connection: Connection, *, timeout: float = 30.0) -> None:
        import httpx

        self.connection = connection
        self._httpx = httpx
        self._client = httpx.Client(
            base_url=connection.url,
            headers={"Authorization": f"token {connection.token}"},
            timeout=httpx.Timeout(timeout, read=None),
            trust_env=False,
        )

    def close(self) -> None:
        self._client.close()

    def _send(self, method: str, path: str, body: Any = None, **kw: Any) -> httpx.Response:
        try:
            content = json.dumps(body).encode() if body is not None else None
            response = self._client.request(method, path.lstrip("/"), content=content, **kw)
        except self._httpx.HTTPError as exc:
            raise ClientError(
                f"cannot reach jupyter-resolve at {self.connection.url}: {exc}"
            ) from exc
        if response.status_code >= 400:
            raise _error_of(response)
        return response

    def get_json(self, path: str, **params: str) -> Any:
        return self._send("GET", path, params=params or None).json()

    def post_json(self, path: str, body: Any = None) -> Any:
        response = self._send("POST", path, body if body is not None else {})
        return response.json() if response.content else {}

    def stream(self, method: str, path: str, body: Any = None) -> Iterator[Event]:
        """The SSE events of one request, as they arrive."""
        content = json.dumps(body).encode() if body is not None else None
        try:
            with self._client.stream(method, path.lstrip("/"), content=content) as response:
                if response.status_code >= 400:
                    raise _error_of(response)
                yield from parse_sse(response.iter_bytes())
        except self._httpx.HTTPError as exc:
            raise ClientError(
                f"lost the stream from jupyter-resolve at {self.connection.url}: {exc}"
            ) from exc

    def chat(self, body: dict[str, Any]) -> Iterator[Event]:
        return self.stream("POST", "resolve/api/chat", body)

    def events(self, run_id: str, after: int = 0) -> Iterator[Event]:
        return self.stream("GET", f"resolve/api/runs/{run_id}/events?after={after}")

    def cancel(self, run_id: str) -> Any:
        return self.post_json(f"resolve/api/runs/{run_id}/cancel")

    def decide(self, run_id: str, call_id: str, decision: str) -> Any:
        """``approve`` or ``deny`` a tool call waiting for a person."""
        return self.post_json(
            f"resolve/api/runs/{run_id}/approvals/{call_id}", {"decision": decision}
        )

    def decide_proposal(self, run_id: str, proposal_id: str, accept: bool) -> Any:
        """Accept (into the next input, by the caller) or reject a proposal of cells."""
        decision = {"decision": "accept" if accept else "reject"}
        return self.post_json(f"resolve/api/runs/{run_id}/proposals/{proposal_id}", decision)
