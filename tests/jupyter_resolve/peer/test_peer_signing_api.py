"""Issue 14 item 7 on a real server: a v2 signature is good only for the method, path (with the
base URL), host and peer it was made for; the old unprefixed scheme is refused unless
``c.Resolve.peer_signature_v1``. (The replay across a restart: test_peer_restart.py.)"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from jupyter_resolve.peer.signing import signed_headers, signed_headers_v1
from tests.conftest import Server
from tests.jupyter_resolve.peer.peerclient import SECRET, invoke, signed_post

# twin shares alpha's secret, as two peers run by one admin might
PEERS = {"alpha": SECRET, "twin": SECRET}
SUBMIT = {"tool": "exec.submit", "arguments": {"prompt": "hello"}}


@pytest.fixture
def resolve_config() -> dict[str, Any]:
    return {"peer_secrets": PEERS}


async def post_v1(server: Server, path: str, body: Any, peer: str = "alpha") -> httpx.Response:
    raw = json.dumps(body).encode()
    async with server.client() as client:
        return await client.post(path, content=raw, headers=signed_headers_v1(peer, SECRET, raw))


async def test_a_v2_signature_for_another_request_is_refused(
    server: Server, gateway: Any, jp_base_url: str
) -> None:
    runs_before = len(gateway.runs.runs)
    base = jp_base_url.rstrip("/")
    cases = {
        # made for the JSON-RPC endpoint, sent to invoke
        "path": await signed_post(
            server, "/resolve/peer/invoke", SUBMIT, sign_for="/resolve/peer/a2a"
        ),
        "method": await signed_post(server, "/resolve/peer/invoke", SUBMIT, method="PUT"),
        # made for alpha, sent as twin (same secret)
        "peer": await signed_post(
            server, "/resolve/peer/invoke", SUBMIT, extra={"X-Resolve-Peer": "twin"}
        ),
    }
    raw = json.dumps(SUBMIT).encode()
    host_headers = signed_headers(
        "alpha", SECRET, raw, url=f"http://other.example{base}/resolve/peer/invoke"
    )
    # made for this host and port, but without the base URL
    host = server.base.split("/")[2]
    no_base = signed_headers("alpha", SECRET, raw, url=f"http://{host}/resolve/peer/invoke")
    async with server.client() as client:
        cases["host"] = await client.post("/resolve/peer/invoke", content=raw, headers=host_headers)
        cases["base url"] = await client.post("/resolve/peer/invoke", content=raw, headers=no_base)
    assert base  # the test server has a base URL, so the two paths differ
    for case, response in cases.items():
        assert response.status_code == 401, case
        assert "bad signature" in response.json()["error"], case
    assert len(gateway.runs.runs) == runs_before
    # the same request signed for what is sent is served
    served = await signed_post(server, "/resolve/peer/invoke", SUBMIT)
    assert served.status_code == 200 and served.json()["ok"] is True


async def test_v1_is_refused_by_default(server: Server, gateway: Any) -> None:
    runs_before = len(gateway.runs.runs)
    for path, body in [
        ("/resolve/peer/invoke", SUBMIT),
        (
            "/resolve/peer/a2a",
            {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}},
        ),
    ]:
        response = await post_v1(server, path, body)
        assert response.status_code == 401, path
        error = response.json()["error"]
        assert "v2=" in error and "c.Resolve.peer_signature_v1" in error
    assert len(gateway.runs.runs) == runs_before


class TestV1Allowed:
    @pytest.fixture
    def resolve_config(self) -> dict[str, Any]:
        return {"peer_secrets": PEERS, "peer_signature_v1": True}

    async def test_v1_is_accepted_with_the_setting(self, server: Server) -> None:
        response = await post_v1(server, "/resolve/peer/invoke", {"tool": "resolve.skills"})
        assert response.status_code == 200 and response.json()["ok"] is True
        # v2 keeps working beside it
        assert (await invoke(server, "resolve.tools")).status_code == 200
