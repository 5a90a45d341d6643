"""``notebook_propose`` through `<base_url>resolve/mcp` (DESIGN 9.2, 9.3), driven by the official
`mcp` Python client: the proposal becomes a run a person decides through the same endpoint as
any proposal; the client gets the decision, and the outputs when the cells ran."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.conftest import Server
from tests.jupyter_resolve.notebook.live import user_notebook
from tests.jupyter_resolve.notebook.test_proposals import decide_when_asked

from .test_mcp_server import connect

CELL = {"cell_type": "code", "source": "print(x * 65)"}


async def test_a_proposal_from_an_mcp_client_waits_for_a_person_and_runs(
    server: Server, gateway: Any, jp_serverapp: Any, jp_root_dir: Path
) -> None:
    path, _ = await user_notebook(server, jp_serverapp, jp_root_dir)
    progress: list[str | None] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(message)

    async with connect(server, server.token) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert "notebook_propose" in tools
        decider = asyncio.create_task(
            decide_when_asked(server, gateway, {"decision": "accept", "run": True})
        )
        answer = await client.call_tool(
            "notebook_propose",
            {"notebook": path, "cells": [CELL], "after_cell_id": "cell-1", "session_id": "s-mcp"},
            progress_callback=on_progress,
        )
        decided = await decider
        assert decided.status_code == 200 and decided.json()["ran"] is True
        assert answer.is_error is False
        text = answer.content[0].text  # type: ignore[union-attr]
        assert "accepted" in text and "195" in text  # x = 3 in the user's kernel
        structured = answer.structured_content or {}
        assert structured["accepted"] is True and structured["session_id"] == "s-mcp"
        assert any(m and "waiting for a person" in m for m in progress)
        # the proposal is a run of the session, logged like any other
        run = gateway.runs.get(structured["run_id"])
        assert [e.type for e in run.events] == [
            "run.started",
            "tool.requested",
            "tool.started",
            "notebook.proposal",
            "notebook.decision",
            "tool.completed",
            "run.completed",
        ]
        assert run.events[-1].data["reason"] == "stop"
        started = run.events[0].data
        assert started["manifest"]["tools"][0]["name"] == "notebook_propose"
        assert started["session_id"] == "s-mcp" and started["model"] == "none"
        # a rejection is an answer too, with the person's reason
        decider = asyncio.create_task(
            decide_when_asked(server, gateway, {"decision": "reject", "reason": "not now"})
        )
        rejected = await client.call_tool("notebook_propose", {"notebook": path, "cells": [CELL]})
        assert (await decider).status_code == 200
        assert rejected.is_error is False
        assert "not now" in rejected.content[0].text  # type: ignore[union-attr]
        assert (rejected.structured_content or {})["accepted"] is False
        bad = await client.call_tool("notebook_propose", {"notebook": "../x.ipynb", "cells": []})
        assert bad.is_error is True
