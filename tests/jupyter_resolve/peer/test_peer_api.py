"""End to end: the peer endpoint on a real server with a real runtime and the scripted model."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Server
from tests.jupyter_resolve.peer.peerclient import (
    PEERS,
    READ_TOOLS,
    SECRET,
    decide_pending,
    invoke,
    poll_status,
    rpc,
    signed_post,
)


@pytest.fixture
def resolve_config() -> dict[str, Any]:
    # web_fetch asks a person first, so a job that calls it is running until decided
    return {
        "peer_secrets": PEERS,
        "peer_max_jobs": 2,
        "peer_tools": {"alpha": [*READ_TOOLS, "web_fetch"], "beta": ["web_fetch"]},
    }


def waiting_script(tmp_path: Path, answer: str = "Done.") -> Path:
    """A job that waits for a person's decision on a web_fetch, then answers."""
    script = tmp_path / "waiting.jsonl"
    turns = [
        {"content": "", "tool_calls": [{"name": "web_fetch", "arguments": {"url": "http://x/"}}]},
        {"content": answer},
    ]
    script.write_text("\n".join(json.dumps(t) for t in turns) + "\n")
    return script


async def test_card_fields_and_url_under_base_url(server: Server, jp_base_url: str) -> None:
    async with server.client() as client:  # no Jupyter login
        response = await client.get("/resolve/.well-known/agent-card.json")
    assert response.status_code == 200
    card = response.json()
    for name in (
        "name",
        "description",
        "version",
        "capabilities",
        "defaultInputModes",
        "defaultOutputModes",
        "skills",
        "supportedInterfaces",
    ):
        assert name in card, name
    interface = card["supportedInterfaces"][0]
    assert interface["url"] == f"{server.base}/resolve/peer/a2a"
    assert jp_base_url.rstrip("/") in interface["url"]
    assert interface["protocolBinding"] == "JSONRPC" and interface["protocolVersion"] == "1.0"
    names = [s["name"] for s in card["skills"]]
    # only the skills whose tools some peer is granted: read-only souls, not python or "*" ones
    assert {"answer", "planner", "evaluator", "code-review"} <= set(names)
    assert not {"specialist", "data-analysis", "tool-agent"} & set(names)
    for skill in card["skills"]:
        assert {"id", "name", "description", "tags"} <= set(skill)
        assert len(skill["description"]) <= 120 and skill["tags"]
    text = json.dumps(card)
    assert "parameters" not in text and "properties" not in text and SECRET not in text


async def test_refused_requests_execute_nothing(server: Server, gateway: Any) -> None:
    submit = {"prompt": "write a file"}
    runs_before = len(gateway.runs.runs)
    stale = time.time() - 310
    cases = {
        "bad signature": await invoke(server, "exec.submit", submit, secret="wrong-secret-000000"),
        "unknown peer": await invoke(server, "exec.submit", submit, peer="mallory", secret=SECRET),
        "stale timestamp": await invoke(server, "exec.submit", submit, now=stale),
        "future timestamp": await invoke(server, "exec.submit", submit, now=time.time() + 310),
    }
    async with server.client() as client:  # unsigned, even with a Jupyter token
        cases["unsigned"] = await client.post(
            "/resolve/peer/invoke",
            content=json.dumps({"tool": "exec.submit", "arguments": submit}).encode(),
            headers=server.auth,
        )
    for case, response in cases.items():
        assert response.status_code == 401, case
        assert response.json()["ok"] is False, case
    assert len(gateway.runs.runs) == runs_before
    assert "used before" not in json.dumps([r.json() for r in cases.values()])
    # a replayed request: the first is served, the same nonce again is refused
    first = await invoke(server, "resolve.tools", nonce="nonce-replay-0001")
    assert first.status_code == 200
    again = await invoke(server, "exec.submit", submit, nonce="nonce-replay-0001")
    assert again.status_code == 401 and "used before" in again.json()["error"]
    assert len(gateway.runs.runs) == runs_before


async def test_endpoint_off_without_peers(server: Server, gateway: Any) -> None:
    gateway.config.peer_secrets = {}
    response = await invoke(server, "resolve.tools")
    assert response.status_code == 404
    async with server.client() as client:
        assert (await client.get("/resolve/.well-known/agent-card.json")).status_code == 404
        body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}
        assert (await client.post("/resolve/peer/a2a", json=body)).status_code == 404
    # a Jupyter login still sees the card
    card = await server.get("/resolve/.well-known/agent-card.json")
    assert card.status_code == 200 and card.json()["name"] == "jupyter-resolve"


async def test_catalogue_has_no_parameter_schemas(server: Server, gateway: Any) -> None:
    # Even a description that names a path or a secret does not carry it to a peer.
    schema = gateway.schemas[0]
    schema.description = f"Leaky: reads /home/ana/.netrc with {SECRET}. " + schema.description
    tools = (await invoke(server, "resolve.tools")).json()
    assert tools["ok"] is True
    # only the tools granted to this peer, in the allow list's order
    granted = {*READ_TOOLS, "web_fetch"}
    assert [t["name"] for t in tools["tools"]] == [
        t["function"]["name"]
        for t in gateway.catalogue.tool_specs()
        if t["function"]["name"] in granted
    ]
    beta = (await invoke(server, "resolve.tools", peer="beta")).json()
    assert [t["name"] for t in beta["tools"]] == ["web_fetch"]
    for entry in tools["tools"]:
        assert set(entry) == {"name", "description"}
        assert len(entry["description"]) <= 120
    text = json.dumps(tools)
    for leak in ("parameters", "properties", "/home/ana", SECRET, "required"):
        assert leak not in text, leak
    skills = (await invoke(server, "resolve.skills")).json()
    assert skills["ok"] is True and skills["skills"]
    names = {entry["name"] for entry in skills["skills"]}
    assert {"answer", "planner"} <= names and "specialist" not in names
    beta_skills = (await invoke(server, "resolve.skills", peer="beta")).json()["skills"]
    assert "planner" not in {entry["name"] for entry in beta_skills}
    for entry in skills["skills"]:
        assert set(entry) == {"name", "description"} and len(entry["description"]) <= 120


@pytest.mark.parametrize(
    "tool", ["python", "shell", "resolve.secrets", "exec.shell", "exec.cancel", ""]
)
async def test_a_denied_name_executes_nothing(
    server: Server, gateway: Any, jp_root_dir: Path, tool: str
) -> None:
    runs_before = len(gateway.runs.runs)
    code = f"open({str(jp_root_dir / 'pwned')!r}, 'w').write('x')"
    response = await invoke(server, tool or " ", {"code": code, "command": "touch pwned"})
    assert response.status_code == 200
    body = response.json()
    assert body["ok"] is False and body["denied"] is True and "not callable" in body["error"]
    assert len(gateway.runs.runs) == runs_before
    assert not (jp_root_dir / "pwned").exists()


async def test_job_goes_from_running_to_succeeded(
    server: Server, gateway: Any, tmp_path: Path
) -> None:
    from jupyter_resolve.providers import ScriptedProvider

    gateway.provider = ScriptedProvider(waiting_script(tmp_path))
    submitted = (await invoke(server, "exec.submit", {"prompt": "compute something"})).json()
    assert submitted["ok"] is True and submitted["job_id"]
    job_id = submitted["job_id"]
    running = (await invoke(server, "exec.status", {"job_id": job_id})).json()
    assert running == {"ok": True, "job_id": job_id, "state": "running"}
    # another peer cannot see it
    other = await invoke(server, "exec.status", {"job_id": job_id}, peer="beta")
    assert other.status_code == 404
    assert other.json()["ok"] is False and "no job" in other.json()["error"]
    await decide_pending(server, gateway, job_id)
    done = await poll_status(server, job_id)
    assert done["state"] == "succeeded", done
    assert done["answer"] == "Done."
    run_id = done["run_id"]
    # the job is an ordinary run: listed with its peer, written to the run log
    listed = (await server.get("/resolve/api/runs")).json()["runs"]
    row = next(r for r in listed if r["run_id"] == run_id)
    assert row["peer"] == "alpha" and row["status"] == "completed"
    log = gateway.state_dir / "runs" / f"{run_id}.jsonl"
    first = json.loads(log.read_text().splitlines()[0])
    assert first["type"] == "run.started" and first["data"]["peer"] == "alpha"
    # as after a restart, when only the run log knows the job: it is still there, still alpha's
    gateway.runs.runs.pop(run_id, None)  # ended runs leave the registry; the cache is emptied
    gateway.runs._recent.clear()
    again = (await invoke(server, "exec.status", {"job_id": job_id})).json()
    assert again["state"] == "succeeded" and again["answer"] == "Done."
    assert (await invoke(server, "exec.status", {"job_id": job_id}, peer="beta")).status_code == 404


async def test_bad_arguments_and_unknown_soul_start_nothing(server: Server, gateway: Any) -> None:
    runs_before = len(gateway.runs.runs)
    missing = await invoke(server, "exec.submit", {})
    assert missing.status_code == 400
    assert missing.json()["ok"] is False and "prompt" in missing.json()["error"]
    extra = await invoke(server, "exec.submit", {"prompt": "x", "path": "/etc"})
    assert extra.status_code == 400 and extra.json()["ok"] is False
    soul = await invoke(server, "exec.submit", {"prompt": "x", "soul": "no-such-soul"})
    assert soul.status_code == 400
    assert soul.json()["ok"] is False and "no-such-soul" in soul.json()["error"]
    assert len(gateway.runs.runs) == runs_before


async def test_jobs_are_bounded_per_peer(server: Server, gateway: Any, tmp_path: Path) -> None:
    from jupyter_resolve.providers import ScriptedProvider

    gateway.provider = ScriptedProvider(waiting_script(tmp_path))
    ids = []
    for _ in range(2):
        submitted = (await invoke(server, "exec.submit", {"prompt": "slow"})).json()
        assert submitted["ok"] is True
        ids.append(submitted["job_id"])
    third_response = await invoke(server, "exec.submit", {"prompt": "slow"})
    assert third_response.status_code == 409
    third = third_response.json()
    assert third["ok"] is False and third["code"] == "too_many_jobs"
    assert "peer_max_jobs" in third["error"]
    # the bound is per peer
    beta = (await invoke(server, "exec.submit", {"prompt": "slow"}, peer="beta")).json()
    assert beta["ok"] is True
    # one that ends frees a place (a person decides its pending call)
    await decide_pending(server, gateway, ids[0])
    assert (await poll_status(server, ids[0]))["state"] == "succeeded"
    fourth = (await invoke(server, "exec.submit", {"prompt": "slow"})).json()
    assert fourth["ok"] is True


async def test_jsonrpc_send_then_get_reaches_a_completed_task(server: Server, gateway: Any) -> None:
    message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hello peer"}]}
    sent = await rpc(
        server, "SendMessage", {"message": message, "configuration": {"returnImmediately": True}}
    )
    task = sent["result"]["task"]
    assert task["status"]["state"] in ("TASK_STATE_WORKING", "TASK_STATE_COMPLETED")
    assert task["history"][0]["parts"] == [{"text": "hello peer"}]
    deadline = time.monotonic() + 60
    while True:
        got = (await rpc(server, "GetTask", {"id": task["id"]}))["result"]
        if got["status"]["state"] != "TASK_STATE_WORKING" or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.1)
    assert got["status"]["state"] == "TASK_STATE_COMPLETED"
    assert got["id"] == task["id"] and got["contextId"] == task["contextId"]
    answer = got["artifacts"][0]["parts"][0]["text"]
    assert "scripted" in answer
    run = gateway.runs.get(got["metadata"]["runId"])
    assert run.peer == "alpha"
    # cancelling a finished task is refused
    refused = await rpc(server, "CancelTask", {"id": task["id"]})
    assert refused["error"]["code"] == -32002


async def test_jsonrpc_v03_names_block_until_done(server: Server) -> None:
    message = {
        "messageId": "m-2",
        "role": "user",
        "kind": "message",
        "parts": [{"kind": "text", "text": "hi"}],
    }
    sent = await rpc(server, "message/send", {"message": message})
    task = sent["result"]
    assert task["kind"] == "task" and task["status"]["state"] == "completed"
    assert task["artifacts"][0]["parts"][0]["kind"] == "text"
    got = (await rpc(server, "tasks/get", {"id": task["id"]}))["result"]
    assert got["status"]["state"] == "completed"
    missing = await rpc(server, "tasks/get", {"id": "job-nope"})
    assert missing["error"]["code"] == -32001
    unknown = await rpc(server, "tasks/pushNotificationConfig/set", {"id": task["id"]})
    assert unknown["error"]["code"] == -32601


async def test_jsonrpc_takes_a_jupyter_token_or_a_signature(server: Server, gateway: Any) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": "t",
        "method": "SendMessage",
        "params": {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}},
    }
    async with server.client() as client:
        anonymous = await client.post("/resolve/peer/a2a", json=body)
        assert anonymous.status_code == 401
        with_token = await client.post("/resolve/peer/a2a", json=body, headers=server.auth)
    assert with_token.status_code == 200, with_token.text
    task = with_token.json()["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert gateway.runs.get(task["metadata"]["runId"]).peer.startswith("jupyter:")
    # a wrong signature is refused even with a valid token beside it
    refused = await signed_post(
        server, "/resolve/peer/a2a", body, secret="wrong-secret-000000", extra=server.auth
    )
    assert refused.status_code == 401
