"""The offline model's demos from plain prompts (issue 30.9): a plot whose image is in the
tool card, a proposal in a notebook chat, and a promotion a person approves. A real server and
agent-httpd on the scripted model with no script; the plot needs matplotlib in the scratch
kernel's environment (the ``lab`` extra)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from jupyter_resolve.providers.scripted import demo_turn
from tests.conftest import Server, Stream
from tests.jupyter_resolve.artifacts.test_agent_tool import chat_deciding
from tests.jupyter_resolve.notebook.live import make_notebook
from tests.jupyter_resolve.notebook.test_proposals import decide_when_asked

pytestmark = pytest.mark.timeout(240)
pytest.importorskip("matplotlib")


def said(stream: Stream) -> str:
    text = stream.text()
    assert text.startswith("(offline scripted model)")
    return text


async def test_plot_shows_an_image_in_the_tool_card(server: Server) -> None:
    stream = await server.chat("plot something for me", session_id="s-plot")
    assert "scripted model, not a real one" in said(stream)
    [requested] = stream.of("tool.requested")
    assert requested["name"] == "python"
    [completed] = stream.of("tool.completed")
    assert completed["ok"] is True, completed
    assert completed["mime"]["image/png"].startswith("iVBORw0KGgo")  # a PNG, base64
    assert "saved plot.png" in completed["output"]
    assert "promote the plot" in stream.text()


async def test_add_a_cell_proposes_one_in_a_notebook_chat(
    server: Server, gateway: Any, jp_root_dir: Path
) -> None:
    path = make_notebook(jp_root_dir)
    decider = asyncio.create_task(
        decide_when_asked(server, gateway, {"decision": "reject", "reason": "not now"})
    )
    stream = await server.chat("add a cell that squares some numbers", notebook=path)
    assert (await decider).status_code == 200
    [proposal] = stream.of("notebook.proposal")
    assert proposal["notebook"] == path
    assert "squares" in proposal["cells"][0]["source"]
    [completed] = stream.of("tool.completed")
    assert completed["name"] == "notebook_propose" and "not now" in completed["output"]
    assert "The proposal was answered" in said(stream)


async def test_promote_draws_the_plot_then_asks_before_promoting(
    server: Server, gateway: Any
) -> None:
    stream = await chat_deciding(server, gateway, "approve", session_id="s-promote")
    names = [c["name"] for c in stream.of("tool.requested")]
    assert names == ["python", "artifacts.promote"]  # no plot in this chat yet: drawn first
    waiting = [a for a in stream.of("tool.approval") if a["state"] == "waiting"]
    assert [a["name"] for a in waiting] == ["artifacts.promote"]
    promoted = stream.of("tool.completed")[-1]
    assert promoted["ok"] is True, promoted
    art_id = promoted["output"].split("artifact ")[1].split()[0]
    manifest = (await server.get(f"/resolve/api/artifacts/{art_id}")).json()
    assert manifest["source"]["path"] == "plot.png" and manifest["title"] == "Demo plot"
    content = await server.get(f"/resolve/api/artifacts/{art_id}/content")
    assert content.content.startswith(b"\x89PNG")
    assert "The promotion answered" in said(stream)


async def test_promote_after_a_plot_promotes_it_at_once(server: Server, gateway: Any) -> None:
    await server.chat("plot something", session_id="s-both")
    stream = await chat_deciding(server, gateway, "approve", session_id="s-both")
    assert [c["name"] for c in stream.of("tool.requested")] == ["artifacts.promote"]
    assert stream.of("tool.completed")[-1]["ok"] is True


def demo_request(question: str, *tools: str) -> dict[str, Any]:
    return {
        "messages": [{"role": "user", "content": question}],
        "tools": [{"type": "function", "function": {"name": n}} for n in tools],
    }


def test_fenced_code_runs_as_it_is_even_when_it_plots() -> None:
    turn = demo_turn(demo_request("plot this\n```python\nprint(1)\n```", "python"))
    assert [json.loads(c.arguments)["code"] for c in turn.tool_calls] == ["print(1)\n"]


def test_a_demo_needs_its_tool() -> None:
    # no notebook_propose (a soul without it): the plan, not a call it cannot make
    assert demo_turn(demo_request("add a cell that sums", "python")).tool_calls == ()
    # promote with the tool on the wire (artifacts__promote), no plot yet: draw it first
    [first] = demo_turn(demo_request("promote the plot", "python", "artifacts__promote")).tool_calls
    assert first.name == "python" and "plot.png" in first.arguments
