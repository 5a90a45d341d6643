"""The agent's ``artifacts.promote`` through the whole chain: scripted model → runtime → gateway,
asking a person first (DESIGN 3.3, 3.7)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.conftest import Server
from tests.jupyter_resolve.test_scratch_tools import call, results, script


async def decide_each(server: Server, gateway: Any, decision: str, stop: asyncio.Event) -> int:
    """Answer every call that waits for approval with ``decision`` until ``stop``."""
    answered: set[str] = set()
    while not stop.is_set():
        for run in list(gateway.runs.runs.values()):
            for call_id in list(getattr(run, "approvals", {})):
                if call_id in answered:
                    continue
                answered.add(call_id)
                response = await server.post(
                    f"/resolve/api/runs/{run.run_id}/approvals/{call_id}", {"decision": decision}
                )
                assert response.status_code == 200, response.text
        await asyncio.sleep(0.05)
    return len(answered)


async def chat_deciding(server: Server, gateway: Any, decision: str, **kw: Any) -> Any:
    stop = asyncio.Event()
    approver = asyncio.create_task(decide_each(server, gateway, decision, stop))
    try:
        return await server.chat("promote it", **kw)
    finally:
        stop.set()
        await approver


async def test_agent_promotes_a_scratch_file_after_approval(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    assert "artifacts.promote" in [t["function"]["name"] for t in gateway.catalogue.tool_specs()]
    script(
        gateway,
        tmp_path,
        call("python", code="open('fit.csv', 'w').write('x,y\\n1,2\\n')"),
        call("artifacts.promote", path="fit.csv", title="Fit", note="by the agent"),
        call("artifacts.promote", path="fit.csv"),
        call("artifacts.promote", path="../../../../etc/passwd"),
        call("artifacts.promote", path="fit.csv", colour="red"),
        {"content": "promoted"},
    )
    stream = await chat_deciding(server, gateway, "approve", session_id="s-agent")
    r = results(stream)
    assert [x["ok"] for x in r] == [True, True, True, False, False], r
    assert "promoted 'fit.csv' as artifact art-" in r[1]["output"]
    assert "already promoted" in r[2]["output"]
    assert "leaves" in r[3]["output"]
    assert "unknown property 'colour'" in r[4]["output"]
    approvals = [a for a in stream.of("tool.approval") if a["name"] == "artifacts.promote"]
    assert [a["state"] for a in approvals].count("waiting") == 4  # a person was asked each time
    art_id = r[1]["output"].split("artifact ")[1].split()[0]
    manifest = (await server.get(f"/resolve/api/artifacts/{art_id}")).json()
    run_id = stream.of("run.started")[0]["run_id"]
    started = next(
        e
        for e in stream.events
        if e.event == "tool.started" and e.data["call_id"] == r[1]["call_id"]
    )
    assert manifest["agent"] == {
        "run_id": run_id,
        "call_id": r[1]["call_id"],
        "run_seq": started.id,
    }
    assert manifest["created_by"] == "agent"
    assert manifest["source"]["session_id"] == "s-agent"
    assert manifest["source"]["path"] == "fit.csv"
    assert manifest["title"] == "Fit" and manifest["note"] == "by the agent"
    content = await server.get(f"/resolve/api/artifacts/{art_id}/content")
    assert content.text == "x,y\n1,2\n"
    by_run = (await server.get("/resolve/api/artifacts", params={"run": run_id})).json()
    assert [a["id"] for a in by_run["artifacts"]] == [art_id]


async def test_denied_promotion_writes_nothing(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    work = jp_root_dir / ".resolve" / "sessions" / "s-deny" / "work"
    work.mkdir(parents=True)
    (work / "draft.txt").write_text("draft")
    script(gateway, tmp_path, call("artifacts.promote", path="draft.txt"), {"content": "ok"})
    stream = await chat_deciding(server, gateway, "deny", session_id="s-deny")
    assert results(stream)[0]["ok"] is False
    assert "denied" in results(stream)[0]["output"]
    assert (await server.get("/resolve/api/artifacts")).json()["artifacts"] == []
    assert not (jp_root_dir / ".resolve" / "artifacts" / "blobs").exists()
