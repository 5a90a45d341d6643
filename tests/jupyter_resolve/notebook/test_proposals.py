"""notebook_propose and the decision endpoint (DESIGN 9.2): accepted (and run in the notebook's
kernel, the outputs reaching the model's next round), rejected with a reason, timed out, and
the 404/409/400 answers."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_resolve.providers import OpenAIProvider
from tests.conftest import Server, Stream
from tests.fakes.openai_server import DONE, FakeOpenAI, chunk, sse, stream, text_reply, usage
from tests.jupyter_resolve.notebook.live import user_notebook
from tests.scripting import script

pytestmark = pytest.mark.timeout(240)

CELLS = [{"cell_type": "code", "source": "y = x * 14\nprint('y is', y)\ny"}]


def propose(**arguments: Any) -> dict[str, Any]:
    return {"content": "", "tool_calls": [{"name": "notebook_propose", "arguments": arguments}]}


def call_reply(name: str, arguments: dict[str, Any]) -> Any:
    """The fake OpenAI server's streamed tool call."""
    first = {
        "index": 0,
        "id": "call_nb1",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    return stream(
        [
            sse(chunk({"role": "assistant", "content": ""})),
            sse(chunk({"tool_calls": [first]})),
            sse(chunk({}, "tool_calls")),
            sse(usage()),
            DONE,
        ]
    )


@pytest.fixture
def recording(gateway: Any, jp_asyncio_loop: Any) -> Iterator[list[FakeOpenAI]]:
    holder: list[FakeOpenAI] = []
    yield holder
    for fake in holder:
        jp_asyncio_loop.run_until_complete(fake.stop())


async def waiting_proposal(gateway: Any) -> tuple[str, str]:
    """The run id and proposal id of the first proposal waiting for a person."""
    for _ in range(1200):
        for run in gateway.runs.runs.values():
            if run.proposals:
                return run.run_id, next(iter(run.proposals))
        await asyncio.sleep(0.05)
    raise AssertionError("no proposal came")


async def decide_when_asked(server: Server, gateway: Any, body: dict[str, Any]) -> Any:
    run_id, proposal_id = await waiting_proposal(gateway)
    return await server.post(f"/resolve/api/runs/{run_id}/proposals/{proposal_id}", body)


async def chat_and_decide(
    server: Server, gateway: Any, path: str, body: dict[str, Any]
) -> tuple[Stream, Any]:
    decider = asyncio.create_task(decide_when_asked(server, gateway, body))
    streamed = await server.chat("add a cell", notebook=path)
    return streamed, await decider


async def test_accept_and_run_returns_outputs_to_the_endpoint_and_the_model(
    server: Server,
    gateway: Any,
    jp_serverapp: Any,
    jp_root_dir: Path,
    recording: list[FakeOpenAI],
) -> None:
    path, _ = await user_notebook(server, jp_serverapp, jp_root_dir)
    fake = FakeOpenAI(
        [
            call_reply(
                "notebook_propose", {"cells": CELLS, "after_cell_id": "cell-1", "note": "double x"}
            ),
            text_reply("y is 42 now."),
        ]
    )
    await fake.start()
    recording.append(fake)
    gateway.provider = OpenAIProvider(fake.base_url, "sk-test", "fake-model", max_retries=0)
    streamed, answer = await chat_and_decide(
        server, gateway, path, {"decision": "accept", "run": True}
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["decision"] == "accepted" and body["ran"] is True and body["edited"] is False
    [outputs] = body["outputs"]
    assert {"output_type": "stream", "name": "stdout", "text": "y is 42\n"} in outputs
    result = next(o for o in outputs if o["output_type"] == "execute_result")
    assert result["data"]["text/plain"] == "42"
    assert (
        body["execution_counts"] == [result["execution_count"]] and result["execution_count"] >= 2
    )
    [proposal] = streamed.of("notebook.proposal")
    assert proposal["notebook"] == path and proposal["cells"] == CELLS
    assert proposal["after_cell_id"] == "cell-1" and proposal["note"] == "double x"
    assert proposal["call_id"] == "call_nb1" and proposal["proposal_id"] == body["proposal_id"]
    [decision] = streamed.of("notebook.decision")
    assert decision == {
        "run_id": decision["run_id"],
        "proposal_id": body["proposal_id"],
        "decision": "accepted",
        "edited": False,
        "ran": True,
        "by": "person",
    }
    # the model's next round reads the decision and the outputs
    tool_message = fake.requests[1].body["messages"][-1]
    assert tool_message["role"] == "tool"
    assert "accepted the proposal" in tool_message["content"]
    assert "y is 42" in tool_message["content"] and "42" in tool_message["content"]
    # deciding again is a conflict; an unknown proposal or run is not found
    again = await server.post(
        f"/resolve/api/runs/{decision['run_id']}/proposals/{body['proposal_id']}",
        {"decision": "reject"},
    )
    assert again.status_code == 409
    unknown = await server.post(
        f"/resolve/api/runs/{decision['run_id']}/proposals/proposal-x", {"decision": "accept"}
    )
    assert unknown.status_code == 404
    no_run = await server.post(
        "/resolve/api/runs/run-x/proposals/proposal-x", {"decision": "accept"}
    )
    assert no_run.status_code == 404


async def test_rejected_with_a_reason_the_model_is_told(
    server: Server, gateway: Any, jp_serverapp: Any, jp_root_dir: Path, tmp_path: Path
) -> None:
    path, _ = await user_notebook(server, jp_serverapp, jp_root_dir)
    script(gateway, tmp_path, propose(cells=CELLS, replace_cell_id="cell-1"), {"content": "ok"})
    streamed, answer = await chat_and_decide(
        server, gateway, path, {"decision": "reject", "reason": "keep x as it is"}
    )
    assert answer.json() == {
        "proposal_id": answer.json()["proposal_id"],
        "decision": "rejected",
        "edited": False,
        "ran": False,
        "outputs": None,
        "execution_counts": None,
    }
    proposal = streamed.of("notebook.proposal")[0]
    assert proposal["replaced_source"] == "x = 3"  # from the saved notebook, for the diff
    decision = streamed.of("notebook.decision")[0]
    assert decision["decision"] == "rejected" and decision["reason"] == "keep x as it is"
    done = streamed.of("tool.completed")[0]
    assert done["ok"] is False and "rejected" in done["output"]
    assert "keep x as it is" in done["output"]


async def test_an_edited_acceptance_tells_the_model_the_cells(
    server: Server, gateway: Any, jp_serverapp: Any, jp_root_dir: Path, tmp_path: Path
) -> None:
    path, _ = await user_notebook(server, jp_serverapp, jp_root_dir)
    script(gateway, tmp_path, propose(cells=CELLS), {"content": "ok"})
    edited = [{"cell_type": "code", "source": "y = x * 15"}]
    streamed, answer = await chat_and_decide(
        server, gateway, path, {"decision": "accept", "cells": edited}
    )
    assert answer.json()["edited"] is True and answer.json()["ran"] is False
    done = streamed.of("tool.completed")[0]
    assert done["ok"] and "y = x * 15" in done["output"] and "not run" in done["output"]


async def test_no_decision_in_time_is_a_rejection_by_timeout(
    server: Server, gateway: Any, jp_serverapp: Any, jp_root_dir: Path, tmp_path: Path
) -> None:
    path, _ = await user_notebook(server, jp_serverapp, jp_root_dir)
    gateway.config.approval_timeout = 1.0
    script(gateway, tmp_path, propose(cells=CELLS), {"content": "ok"})
    streamed = await server.chat("add a cell", notebook=path)
    decision = streamed.of("notebook.decision")[0]
    assert decision["decision"] == "rejected" and decision["by"] == "timeout"
    assert "counts as rejected" in streamed.of("tool.completed")[0]["output"]
    late = await server.post(
        f"/resolve/api/runs/{decision['run_id']}/proposals/{decision['proposal_id']}",
        {"decision": "accept"},
    )
    assert late.status_code == 409


async def test_bad_decisions_and_arguments(
    server: Server, gateway: Any, jp_serverapp: Any, jp_root_dir: Path, tmp_path: Path
) -> None:
    path, _ = await user_notebook(server, jp_serverapp, jp_root_dir)
    script(gateway, tmp_path, propose(cells=CELLS), {"content": "ok"})
    chat = asyncio.create_task(server.chat("add a cell", notebook=path))
    run_id, proposal_id = await waiting_proposal(gateway)
    url = f"/resolve/api/runs/{run_id}/proposals/{proposal_id}"
    for bad in (
        {"decision": "maybe"},
        {"decision": "accept", "cells": []},
        {},
        {"decision": "accept", "extra": 1},
    ):
        assert (await server.post(url, bad)).status_code == 400, bad
    assert (await server.post(url, b"not json")).status_code == 400
    assert (await server.post(f"/resolve/api/runs/{run_id}/proposals/..", {})).status_code in (
        400,
        404,
    )
    await server.post(f"/resolve/api/runs/{run_id}/cancel", {})
    streamed = await chat
    assert not streamed.of("notebook.decision")  # the run's end released it: nothing decided
    assert (await server.post(url, {"decision": "accept"})).status_code == 409
    # bad tool arguments are an error result to the model, never a crash
    script(
        gateway,
        tmp_path,
        propose(cells=[]),
        propose(cells=CELLS, notebook="../x.ipynb"),
        {"content": "ok"},
    )
    streamed = await server.chat("add a cell", notebook=path)
    first, second = streamed.of("tool.completed")
    assert not first["ok"] and "cells" in first["output"]
    assert not second["ok"] and "'..'" in second["output"]
