"""Issue 31.5: how fast one peer may submit jobs is bounded per minute
(``c.Resolve.peer_submit_rate``), not only how many are live: over it, a 429 with Retry-After on
invoke and on A2A, nothing started; another peer is not held back."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_resolve.peer.limits import SubmitWindow
from tests.conftest import Server
from tests.jupyter_resolve.peer.peerclient import PEERS, invoke, signed_post

RATE = 2


@pytest.fixture
def resolve_config() -> dict[str, Any]:
    return {"peer_secrets": PEERS, "peer_submit_rate": RATE, "peer_max_jobs": 100}


def send(text: str) -> dict[str, Any]:
    message = {"messageId": f"m-{text}", "role": "user", "parts": [{"text": text}]}
    params = {"message": message, "configuration": {"blocking": False}}
    return {"jsonrpc": "2.0", "id": 7, "method": "message/send", "params": params}


async def test_submissions_over_the_rate_are_refused_with_retry_after(server: Server) -> None:
    for n in range(RATE):
        accepted = await invoke(server, "exec.submit", {"prompt": f"job {n}"})
        assert accepted.status_code == 200 and accepted.json()["ok"] is True, accepted.text

    refused = await invoke(server, "exec.submit", {"prompt": "one too many"})
    assert refused.status_code == 429, refused.text
    assert refused.json()["code"] == "submit_rate"
    assert "peer_submit_rate" in refused.json()["error"]
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert "job_id" not in refused.json()

    over_a2a = await signed_post(server, "/resolve/peer/a2a", send("also too many"))
    assert over_a2a.status_code == 429, over_a2a.text
    assert 1 <= int(over_a2a.headers["Retry-After"]) <= 60
    error = over_a2a.json()["error"]
    assert error["code"] == -32029 and error["data"]["retry_after"] >= 1

    other = await invoke(server, "exec.submit", {"prompt": "beta's job"}, peer="beta")
    assert other.status_code == 200 and other.json()["ok"] is True


def test_the_window_slides() -> None:
    window = SubmitWindow(2, seconds=60)
    assert window.admit("alpha", 0.0) == 0
    assert window.admit("alpha", 10.0) == 0
    assert window.admit("alpha", 20.0) == 40  # the first leaves the window at 60
    assert window.admit("beta", 20.0) == 0
    assert window.admit("alpha", 60.0) == 0
    assert window.admit("alpha", 61.0) == 9
    assert SubmitWindow(0).admit("alpha", 0.0) == 0  # 0: no bound
