"""Issue 14 item 2: a peer's job runs with only the tools granted to that peer
(``c.Resolve.peer_tools``; none by default), exec tools for a peer need the sandbox, and a run a
peer's job delegates to never gets more than its parent. Real server, runtime and kernels; the
scripted model plays a model that tries to run code whatever it is offered."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from jupyter_resolve.contracts.run_rows import RunQuery
from jupyter_resolve.providers import ScriptedProvider
from tests.conftest import Server
from tests.jupyter_resolve.peer.peerclient import PEERS, invoke, poll_status, rpc

SETTINGS = ("c.Resolve.peer_tools", "c.Resolve.sandbox")


def script(tmp_path: Path, *turns: dict[str, Any]) -> ScriptedProvider:
    path = tmp_path / "peer-script.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in turns))
    return ScriptedProvider(path)


def writes(marker: Path) -> dict[str, Any]:
    """A python call that leaves ``marker`` behind if it ever runs."""
    return {"name": "python", "arguments": {"code": f"open({str(marker)!r}, 'w').write('ran')"}}


def events(gateway: Any, run_id: str, kind: str) -> list[dict[str, Any]]:
    return [e.data for e in gateway.runs.get(run_id).events if e.type == kind]


class TestNoGrant:
    @pytest.fixture
    def resolve_config(self) -> dict[str, Any]:
        return {"peer_secrets": PEERS}  # no peer_tools: the default

    async def test_signed_submit_asking_for_python_answers_and_runs_no_code(
        self, server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
    ) -> None:
        marker = jp_root_dir / "ran-by-peer"
        gateway.provider = script(
            tmp_path,
            {"content": "Running it.", "tool_calls": [writes(marker)]},
            {"content": "Here is my answer without running code."},
        )
        submitted = await invoke(
            server, "exec.submit", {"prompt": f"```python\nopen({str(marker)!r}, 'w')\n```"}
        )
        assert submitted.status_code == 200, submitted.text
        job_id = submitted.json()["job_id"]
        done = await poll_status(server, job_id)
        assert done["state"] == "succeeded", done
        assert "without running code" in done["answer"]
        assert not marker.exists()
        # the run was offered no tool, and nothing started
        assert events(gateway, job_id, "run.started")[0]["tools"] == []
        assert events(gateway, job_id, "run.started")[0]["manifest"]["tools"] == []
        assert events(gateway, job_id, "tool.started") == []
        refused = events(gateway, job_id, "tool.completed")
        assert all(not c["ok"] for c in refused)

    async def test_a2a_send_runs_no_code_either(
        self, server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
    ) -> None:
        marker = jp_root_dir / "ran-by-a2a-peer"
        gateway.provider = script(
            tmp_path, {"content": "", "tool_calls": [writes(marker)]}, {"content": "Answered."}
        )
        message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "run it"}]}
        task = (await rpc(server, "SendMessage", {"message": message}))["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
        assert task["artifacts"][0]["parts"][0]["text"] == "Answered."
        assert not marker.exists()
        assert events(gateway, task["id"], "run.started")[0]["tools"] == []

    async def test_the_card_offers_a_model_only_answer(self, server: Server) -> None:
        async with server.client() as client:
            card = (await client.get("/resolve/.well-known/agent-card.json")).json()
        assert [s["id"] for s in card["skills"]] == ["answer"]
        assert card["skills"][0]["tags"] == ["answer"]
        assert set(card["securitySchemes"]) == {"resolveSignature", "jupyterToken"}
        tools = (await invoke(server, "resolve.tools")).json()
        assert tools == {"ok": True, "tools": []}


class TestPythonWithoutSandbox:
    @pytest.fixture
    def resolve_config(self) -> dict[str, Any]:
        return {"peer_secrets": PEERS, "peer_tools": {"alpha": ["python"]}, "sandbox": "none"}

    async def test_the_job_is_refused_naming_both_settings(
        self, server: Server, gateway: Any
    ) -> None:
        runs_before = len(gateway.runs.runs)
        refused = await invoke(server, "exec.submit", {"prompt": "compute"})
        assert refused.status_code == 503
        body = refused.json()
        assert body["ok"] is False and body["code"] == "peer_needs_sandbox"
        for setting in SETTINGS:
            assert setting in body["error"]
        message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "compute"}]}
        answer = await rpc(server, "SendMessage", {"message": message})
        assert answer["error"]["code"] == -32000
        for setting in SETTINGS:
            assert setting in answer["error"]["message"]
        assert len(gateway.runs.runs) == runs_before
        # beta is granted nothing: its model-only jobs still run
        beta = await invoke(server, "exec.submit", {"prompt": "hi"}, peer="beta")
        assert beta.status_code == 200 and beta.json()["ok"] is True


class TestReadFileOnly:
    @pytest.fixture
    def resolve_config(self) -> dict[str, Any]:
        return {"peer_secrets": PEERS, "peer_tools": {"alpha": ["read_file"]}, "sandbox": "none"}

    async def test_the_run_sees_only_read_file(
        self, server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
    ) -> None:
        marker = jp_root_dir / "ran-by-reader"
        gateway.provider = script(
            tmp_path,
            {
                "content": "",
                "tool_calls": [
                    {"name": "read_file", "arguments": {"path": "notes.txt"}},
                    writes(marker),
                    {"name": "shell", "arguments": {"command": f"touch {marker}"}},
                ],
            },
            {"content": "Read what I could."},
        )
        job_id = (await invoke(server, "exec.submit", {"prompt": "read notes"})).json()["job_id"]
        done = await poll_status(server, job_id)
        assert done["state"] == "succeeded", done
        started = events(gateway, job_id, "run.started")[0]
        assert started["tools"] == ["read_file"]
        assert [t["name"] for t in started["manifest"]["tools"]] == ["read_file"]
        assert [e["name"] for e in events(gateway, job_id, "tool.started")] == ["read_file"]
        assert not marker.exists()
        # the catalogue and the card say the same
        tools = (await invoke(server, "resolve.tools")).json()["tools"]
        assert [t["name"] for t in tools] == ["read_file"]


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
class TestDelegationUnderAGrant:
    @pytest.fixture
    def resolve_config(self) -> dict[str, Any]:
        # subagents.delegate is an exec tool: granted to a peer, it needs the sandbox
        return {
            "peer_secrets": PEERS,
            "peer_tools": {"alpha": ["subagents.delegate"]},
            "sandbox": "bwrap",
        }

    async def test_a_delegated_run_gets_no_tool_its_peer_parent_lacks(
        self, server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
    ) -> None:
        marker = jp_root_dir / "ran-by-delegate"
        # both runs play the same turns: try python, delegate to the every-tool soul, answer
        delegate = {"soul": "tool-agent", "prompt": "run the code"}
        gateway.provider = script(
            tmp_path,
            {
                "content": "",
                "tool_calls": [
                    writes(marker),
                    {"name": "subagents.delegate", "arguments": delegate},
                ],
            },
            {"content": "Finished."},
        )
        job_id = (await invoke(server, "exec.submit", {"prompt": "go"})).json()["job_id"]
        done = await poll_status(server, job_id)
        assert done["state"] == "succeeded", done
        assert events(gateway, job_id, "run.started")[0]["tools"] == ["subagents.delegate"]
        children = [r for r in gateway.runs.page(RunQuery()).runs if r.parent == job_id]
        assert len(children) == 1
        child_started = events(gateway, children[0].run_id, "run.started")[0]
        assert child_started["soul"] == "tool-agent" and child_started["tools"] == []
        assert events(gateway, children[0].run_id, "tool.started") == []
        assert not marker.exists()
