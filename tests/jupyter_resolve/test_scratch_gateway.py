"""The agent's scratch kernels on a Jupyter gateway (issue 39.3): with
``--Resolve.scratch_kernels=gateway`` behind ``--GatewayClient.url``, a chat's python runs in a
kernel the real, token-protected ``jupyter_kernel_gateway`` lists, with the gateway's
environment (not the server's, and no token), in a workspace of its own there; a variable
persists to the next call, an attached file is readable under ``context/`` with its digest,
the file tools work in that workspace, and health says the isolation is the cluster's."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.jupyter_resolve.notebook.kernel_gateway import (
    KernelGateway,
    chat,
    kernel_gateway,
    server_in_front,
)
from tests.jupyter_resolve.notebook.live import make_notebook
from tests.launcher import QUIET_EXTENSIONS, JupyterServer

pytestmark = pytest.mark.timeout(300)

MARKER = "resolve-test-gateway-kernel"
ATTACHED = "measurements,value\na,1\nb,2\n"


@dataclass
class Deployment:
    server: JupyterServer
    gateway: KernelGateway
    script: Path

    def model_says(self, *turns: dict[str, Any]) -> None:
        self.script.write_text("".join(json.dumps(t) + "\n" for t in turns))

    def gateway_kernels(self) -> list[str]:
        listed = httpx.get(
            f"{self.gateway.url}/api/kernels",
            headers={"Authorization": f"token {self.gateway.token}"},
            trust_env=False,
        )
        assert listed.status_code == 200, listed.text
        return [k["id"] for k in listed.json()]

    def server_kernels(self) -> list[str]:
        assert self.server.http is not None
        listed = self.server.http.get(f"{self.server.url}/api/kernels", timeout=60)
        return [k["id"] for k in listed.json()]


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    folder = tmp_path_factory.mktemp("scratch-gateway")
    script = folder / "script.jsonl"
    script.write_text(json.dumps({"content": "ok"}) + "\n")
    config = {
        "provider": "scripted",
        "script": str(script),
        "scratch_kernels": "gateway",
        "tool_timeout": 10.0,
    }
    with (
        kernel_gateway(folder / "kg", env={"RESOLVE_TEST_MARKER": MARKER}) as gateway,
        server_in_front(folder / "server", gateway, config) as server,
    ):
        (server.root / "data.csv").write_text(ATTACHED)
        yield Deployment(server, gateway, script)


def use(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"content": "", "tool_calls": [{"name": tool, "arguments": arguments}]}


WHERE = """
import os
print(os.environ.get("RESOLVE_TEST_MARKER"), os.getcwd())
print(sorted(k for k in os.environ if "TOKEN" in k or "RESOLVE_URL" in k))
kept = 41
"""


def test_python_runs_on_the_gateway_and_reads_the_context(deployment: Deployment) -> None:
    before = set(deployment.gateway_kernels())
    deployment.model_says(
        use("python", code=WHERE),
        use("python", code="print(kept + 1)"),
        use("python", code="print(open('../context/data.csv').read())"),
        use("read_file", path="context/data.csv"),
        use("write_file", path="notes.txt", content="written there"),
        use("list_dir", path="."),
        {"content": "done"},
    )
    stream = chat(deployment.server, "work", session_id="s-gw", attachments=["data.csv"])
    done = stream.of("tool.completed")
    outputs = [c["output"] for c in done]
    assert all(c["ok"] for c in done), outputs
    marker, cwd = outputs[0].splitlines()[0].split(" ", 1)
    assert marker == MARKER  # the gateway's environment: the code ran in its kernel
    assert "resolve-scratch-" in cwd and cwd.endswith("/work")
    assert str(deployment.server.root) not in cwd  # not the session folder on the server
    assert outputs[0].splitlines()[1] == "[]"  # no token, no URL of the server
    assert outputs[1] == "42"  # the namespace persists across calls
    assert outputs[2].strip() == ATTACHED.strip()  # sent over the kernel protocol
    assert "measurements,value" in outputs[3]
    assert "notes.txt" in outputs[5]
    # the kernel is the gateway's, and not among the person's kernels on the server
    started = set(deployment.gateway_kernels()) - before
    assert len(started) == 1
    assert not started & set(deployment.server_kernels())
    # the server's own work/ of the session stays empty: work/ lives in the kernel
    [work] = list(deployment.server.root.glob(".resolve/**/s-gw/work"))
    assert list(work.iterdir()) == []


def test_a_file_attached_later_reaches_the_same_kernel(deployment: Deployment) -> None:
    (deployment.server.root / "later.txt").write_text("second file")
    code = (
        "import hashlib\n"
        "print(kept, hashlib.sha256(open('../context/later.txt','rb').read()).hexdigest())\n"
        "import os; print(oct(os.stat('../context/later.txt').st_mode & 0o777))"
    )
    deployment.model_says(use("python", code=code), {"content": "done"})
    stream = chat(deployment.server, "again", session_id="s-gw", attachments=["later.txt"])
    [call] = stream.of("tool.completed")
    assert call["ok"], call["output"]
    first, mode = call["output"].splitlines()
    digest = hashlib.sha256(b"second file").hexdigest()
    assert first == f"41 {digest}" and mode == "0o400"


def test_a_notebook_chat_reads_the_notebook_but_python_stays_in_its_workspace(
    deployment: Deployment,
) -> None:
    notebook = make_notebook(deployment.server.root, "nb-gw.ipynb")
    deployment.model_says(
        use("python", code="import os; print(os.getcwd())"),
        use("notebook_read", path=notebook),
        use("notebook_read", path=".resolve/x.ipynb"),
        {"content": "done"},
    )
    stream = chat(deployment.server, "look", notebook=notebook, session_id="s-nb")
    python, read, hidden = stream.of("tool.completed")
    assert python["ok"], python["output"]
    cwd = python["output"].splitlines()[0]
    assert "notebook's folder is on the server" in python["output"]  # the model is told
    assert "resolve-scratch-" in cwd and cwd.endswith("/work")  # not the notebook's folder
    assert read["ok"] and "x = 3" in read["output"]  # read by the server, not the kernel
    assert not hidden["ok"]  # refused, the gateway state never read


def test_a_file_the_agent_made_on_the_gateway_is_promoted(deployment: Deployment) -> None:
    made = "x,y\n1,2\n" * 200_000  # 1.6 MB: several chunks back over the kernel protocol
    deployment.model_says(
        use("python", code=f"open('fit.csv', 'w').write({made!r} )"),
        use("artifacts.promote", path="fit.csv", title="Fit"),
        use("artifacts.promote", path="nothing.csv"),
        {"content": "promoted"},
    )
    stream = chat(deployment.server, "promote it", session_id="s-art")
    run_id = stream.next("run.started")["run_id"]
    assert deployment.server.http is not None
    for _ in range(2):
        waiting = stream.next("tool.approval")
        while waiting["state"] != "waiting":  # the approval of the one before
            waiting = stream.next("tool.approval")
        decided = deployment.server.http.post(
            f"{deployment.server.url}/resolve/api/runs/{run_id}/approvals/{waiting['call_id']}",
            json={"decision": "approve"},
        )
        assert decided.status_code == 200, decided.text
    wrote, promoted, missing = stream.of("tool.completed")
    assert wrote["ok"] and promoted["ok"], promoted["output"]
    art_id = promoted["output"].split("artifact ")[1].split()[0]
    manifest = deployment.server.http.get(
        f"{deployment.server.url}/resolve/api/artifacts/{art_id}"
    ).json()
    assert manifest["sha256"] == hashlib.sha256(made.encode()).hexdigest()
    assert not missing["ok"] and "not a file in work/" in missing["output"]


def test_a_kernel_that_dies_is_restarted_with_its_context(deployment: Deployment) -> None:
    deployment.model_says(
        use("python", code="kept = 1"),
        use("python", code="import os; os._exit(1)"),
        use("python", code="print('kept' in dir(), open('../context/data.csv').read())"),
        {"content": "done"},
    )
    stream = chat(deployment.server, "die", session_id="s-die", attachments=["data.csv"])
    _, died, after = stream.of("tool.completed")
    assert not died["ok"] and "died" in died["output"]
    assert after["ok"], after["output"]
    assert after["output"].startswith("False measurements,value")  # a new kernel, context again


def test_a_call_past_its_time_is_interrupted_through_the_gateway(deployment: Deployment) -> None:
    deployment.model_says(
        use("python", code="stays = 7"),
        use("python", code="import time\nwhile True: time.sleep(0.1)"),
        use("python", code="print(stays)"),
        {"content": "done"},
    )
    stream = chat(deployment.server, "wait", session_id="s-slow")
    _, slow, after = stream.of("tool.completed")
    assert not slow["ok"] and "timed out after 10 s" in slow["output"]
    assert after["ok"] and after["output"] == "7"  # interrupted, not restarted: state kept


def test_health_says_the_isolation_is_the_clusters(deployment: Deployment) -> None:
    assert deployment.server.http is not None
    health = deployment.server.http.get(f"{deployment.server.url}/resolve/api/health").json()
    assert health["sandbox"]["kind"] == "gateway"
    assert "cluster" in health["sandbox"]["label"]
    assert health["scratch_kernel"]["where"] == "gateway"
    assert health["scratch_kernel"]["problem"] is None


def test_without_a_gateway_scratch_kernels_are_refused_and_health_says_why(
    tmp_path: Path,
) -> None:
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps(use("python", code="print(1)")) + "\n" + '{"content": "ok"}\n')
    config = {"provider": "scripted", "script": str(script), "scratch_kernels": "gateway"}
    server = JupyterServer(
        tmp_path / "server",
        extensions=QUIET_EXTENSIONS,
        config={"Resolve": config},
        env={"HOME": str(tmp_path / "home")},
        ready="health",
    )
    with server:
        assert server.http is not None
        health = server.http.get(f"{server.url}/resolve/api/health").json()
        [problem] = [p for p in health["config_problems"] if "scratch_kernels" in p]
        assert "GatewayClient.url" in problem
        [call] = chat(server, "run").of("tool.completed")
        assert not call["ok"] and "GatewayClient.url" in call["output"]
