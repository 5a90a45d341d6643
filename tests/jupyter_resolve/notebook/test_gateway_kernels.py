"""The person's kernel on a Jupyter gateway (issue 39.1, 39.2): a real, token-protected
``jupyter_kernel_gateway`` runs the notebook's kernel behind a Jupyter server
(``--GatewayClient.url``), and everything that reaches that kernel works — the variables, a
mention, inspection (a hanging ``__repr__`` is cut, the kernel stays usable), a proposal run on
acceptance, a snapshot sent as bytes over the kernel protocol — and ``%resolve`` works in the
kernel, whose connection never shows in the server's log."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from jupyter_resolve._version import __version__ as VERSION
from tests.jupyter_resolve.notebook.kernel_gateway import (
    chat,
    kernel_gateway,
    run_code,
    server_in_front,
)
from tests.jupyter_resolve.notebook.live import SETUP, make_notebook
from tests.launcher import JupyterServer

pytestmark = pytest.mark.timeout(300)

MORE = """
big = np.arange(400_000, dtype="float64")  # 3.2 MB: a snapshot of several chunks
import os
kernel_token = os.environ.get("KERNEL_RESOLVE_TOKEN", "")
"""


class Deployment:
    def __init__(self, server: JupyterServer, script: Path, notebook: str, kernel_id: str):
        self.server, self.script, self.notebook, self.kernel_id = (
            server,
            script,
            notebook,
            kernel_id,
        )

    def model_says(self, *turns: dict[str, Any]) -> None:
        """The scripted model's turns for the next chat (the script is re-read on change)."""
        self.script.write_text("".join(json.dumps(t) + "\n" for t in turns))

    def get(self, route: str, **params: str) -> httpx.Response:
        assert self.server.http is not None
        return self.server.http.get(f"{self.server.url}{route}", params=params, timeout=60)

    def post(self, path: str, body: dict[str, Any]) -> httpx.Response:
        assert self.server.http is not None
        return self.server.http.post(f"{self.server.url}{path}", json=body, timeout=120)


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    folder = tmp_path_factory.mktemp("gateway")
    script = folder / "script.jsonl"
    script.write_text(json.dumps({"content": "ok"}) + "\n")
    config = {"provider": "scripted", "script": str(script), "notebook_inspect_timeout": 3.0}
    with (
        kernel_gateway(folder / "kg") as gateway,
        server_in_front(folder / "server", gateway, config) as server,
    ):
        notebook = make_notebook(server.root)
        body = {"path": notebook, "type": "notebook", "name": notebook}
        assert server.http is not None
        session = server.http.post(
            f"{server.url}/api/sessions", json={**body, "kernel": {"name": "python3"}}, timeout=120
        )
        assert session.status_code == 201, session.text
        kernel_id = session.json()["kernel"]["id"]
        listed = httpx.get(
            f"{gateway.url}/api/kernels",
            headers={"Authorization": f"token {gateway.token}"},
            trust_env=False,
        )
        assert kernel_id in [k["id"] for k in listed.json()]  # the kernel runs on the gateway
        cell = run_code(server, kernel_id, SETUP + MORE)
        assert cell.reply["status"] == "ok", cell.text
        yield Deployment(server, script, notebook, kernel_id)


def use(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"content": "", "tool_calls": [{"name": tool, "arguments": arguments}]}


def test_the_variables_and_a_mention(deployment: Deployment) -> None:
    listing = deployment.get("/resolve/api/notebook/variables", path=deployment.notebook)
    assert listing.status_code == 200, listing.text
    found = {v["name"]: v for v in listing.json()["variables"]}
    assert found["df"]["shape"] == [3, 2] and found["arr"]["shape"] == [3, 4]
    deployment.model_says({"content": "noted"})
    stream = chat(
        deployment.server,
        "what is in @df?",
        notebook=deployment.notebook,
        mentions=[{"name": "df"}],
    )
    started = stream.next("run.started")
    [mention] = started["mentions"]
    assert "shape (3, 2)" in mention["description"] and "species" in mention["description"]
    assert stream.of("run.completed")


def test_inspection_cuts_a_hanging_repr_and_leaves_the_kernel_usable(
    deployment: Deployment,
) -> None:
    deployment.model_says(
        use("notebook_variables"),
        use("inspect_variable", name="slow"),
        use("inspect_variable", name="stubborn"),
        use("inspect_variable", name="df"),
        {"content": "done"},
    )
    stream = chat(deployment.server, "look", notebook=deployment.notebook)
    listing, slow, stubborn, frame = (c["output"] for c in stream.of("tool.completed"))
    assert "df: pandas.DataFrame (3, 2)" in listing
    assert "[cut: describing it took longer than" in slow  # the kernel's own timer
    assert "cut by the time limit" in stubborn  # the gateway's interrupt
    assert "describe()" in frame and "1.7" in frame  # the kernel answers after both
    assert run_code(deployment.server, deployment.kernel_id, "x + 1").results == ["4"]


def test_a_proposal_accepted_with_run_returns_its_outputs(deployment: Deployment) -> None:
    cells = [{"cell_type": "code", "source": "y = x * 14\nprint('y is', y)\ny"}]
    deployment.model_says(
        use("notebook_propose", cells=cells, after_cell_id="cell-1"), {"content": "y is 42"}
    )
    stream = chat(deployment.server, "add a cell", notebook=deployment.notebook)
    run_id = stream.next("run.started")["run_id"]
    proposal = stream.next("notebook.proposal")
    answer = deployment.post(
        f"/resolve/api/runs/{run_id}/proposals/{proposal['proposal_id']}",
        {"decision": "accept", "run": True},
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["ran"] is True
    [outputs] = body["outputs"]
    assert {"output_type": "stream", "name": "stdout", "text": "y is 42\n"} in outputs
    result = next(o for o in outputs if o["output_type"] == "execute_result")
    assert result["data"]["text/plain"] == "42"
    assert stream.of("run.completed")
    assert run_code(deployment.server, deployment.kernel_id, "y").results == ["42"]


def test_a_snapshot_travels_as_bytes_with_its_digest(deployment: Deployment) -> None:
    deployment.model_says(
        use("snapshot_variable", name="big"),
        use("snapshot_variable", name="df"),
        {"content": "saved"},
    )
    stream = chat(deployment.server, "freeze", notebook=deployment.notebook, session_id="s-gw")
    done = stream.of("tool.completed")
    assert all(c["ok"] for c in done), [c["output"] for c in done]
    for name, output in (("big.npy", done[0]["output"]), ("df.parquet", done[1]["output"])):
        [placed] = list(deployment.server.root.glob(f".resolve/**/s-gw/context/snapshots/{name}"))
        digest = hashlib.sha256(placed.read_bytes()).hexdigest()
        assert f"sha256 {digest}" in output
    assert np.array_equal(np.load(placed.parent / "big.npy"), np.arange(400_000, dtype="float64"))
    # the kernel kept no copy once the bytes were read
    kept = run_code(
        deployment.server,
        deployment.kernel_id,
        "import sys; len(sys.modules['_resolve_inspector_snapshots'].copies)",
    )
    assert kept.results == ["0"]


def test_resolve_magic_in_a_gateway_kernel_and_no_token_in_the_log(
    deployment: Deployment,
) -> None:
    server, kernel_id = deployment.server, deployment.kernel_id
    names = run_code(server, kernel_id, "sorted(k for k in os.environ if 'RESOLVE' in k)").results
    assert names == ["['KERNEL_RESOLVE_TOKEN', 'KERNEL_RESOLVE_URL']"]
    url = run_code(server, kernel_id, "os.environ['KERNEL_RESOLVE_URL']").results
    assert url == [repr(server.url + "/")]
    status = run_code(server, kernel_id, "%load_ext jupyter_resolve\n%resolve status")
    assert status.reply["status"] == "ok", status.text
    assert status.results[0].startswith(f"**jupyter-resolve** {VERSION} at {server.url}/ — ok")
    deployment.model_says({"content": "hello from the server"})
    asked = run_code(server, kernel_id, "%resolve say hello\nprint(_resolve.text)")
    assert asked.reply["status"] == "ok" and "hello from the server" in asked.text, asked.text
    token = run_code(server, kernel_id, "kernel_token").results[0].strip("'")
    assert len(token) > 20
    log = server.log_text()
    assert token not in log
    line = next(t for t in log.splitlines() if "GatewayKernelManager started kernel" in t)
    assert "'env': <environment: " in line and "KERNEL_RESOLVE_TOKEN" in line  # names only
    assert "'KERNEL_RESOLVE_URL':" not in line
