"""Issue 14 item 7: a signed request replayed to a restarted server is refused (the nonces it
has seen are kept on disk). Two real `jupyter server` processes, one after the other, on one
root."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from jupyter_resolve.peer.signing import signed_headers
from tests.launcher import JupyterServer, free_port

SECRET = "restart-shared-secret-0123456789"


@contextmanager
def jupyter_server(tmp_path: Path, name: str, port: int) -> Iterator[str]:
    """A server process on ``tmp_path/root`` with one peer; yields its base URL."""
    with JupyterServer(
        tmp_path,
        port=port,
        config={"Resolve": {"peer_secrets": {"alpha": SECRET}}},
        env={"HOME": str(tmp_path)},
        log=tmp_path / f"{name}.log",
    ) as server:
        yield server.url


def post(url: str, raw: bytes, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(url, content=raw, headers=headers, timeout=60, trust_env=False)


def test_a_request_replayed_to_a_restarted_server_is_refused(tmp_path: Path) -> None:
    raw = json.dumps({"tool": "exec.submit", "arguments": {"prompt": "hello"}}).encode()
    runs = tmp_path / "root" / ".resolve" / "runs"
    port = free_port()  # the same for both, as a restarted server has: the same Host
    with jupyter_server(tmp_path, "first", port) as base:
        url = f"{base}/resolve/peer/invoke"
        headers = signed_headers("alpha", SECRET, raw, url=url)
        first = post(url, raw, headers)
        assert first.status_code == 200, first.text
        assert first.json()["ok"] is True
        assert post(url, raw, headers).status_code == 401  # replayed at once
    logs = sorted(runs.glob("*.jsonl"))
    assert len(logs) == 1
    with jupyter_server(tmp_path, "second", port) as base:
        assert f"{base}/resolve/peer/invoke" == url
        replayed = post(url, raw, headers)  # the very same bytes, within the 300 s window
        assert replayed.status_code == 401, replayed.text
        assert "used before" in replayed.json()["error"]
        assert sorted(runs.glob("*.jsonl")) == logs  # no second job
        # a fresh request is served
        fresh = post(url, raw, signed_headers("alpha", SECRET, raw, url=url))
        assert fresh.status_code == 200 and fresh.json()["ok"] is True
