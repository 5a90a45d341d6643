"""notebook_variables, inspect_variable, snapshot_variable and @mentions on a live kernel the
server started for a notebook (DESIGN 9.2): silent, bounded, timed out cleanly."""

from __future__ import annotations

import asyncio
import hashlib
import json
import stat
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from tests.conftest import Server
from tests.jupyter_resolve.notebook.live import run_in_kernel, user_notebook
from tests.scripting import call, script

pytestmark = pytest.mark.timeout(240)


@pytest.fixture
def resolve_config() -> dict[str, Any]:
    return {"notebook_inspect_timeout": 3.0}


def use(tool: str, **arguments: Any) -> dict[str, Any]:
    """A turn calling ``tool`` (``call()`` of tests/scripting.py takes ``name`` itself)."""
    return {"content": "", "tool_calls": [{"name": tool, "arguments": arguments}]}


async def test_variables_endpoint_lists_the_users_variables(
    server: Server, jp_serverapp: Any, jp_root_dir: Path
) -> None:
    path, _ = await user_notebook(server, jp_serverapp, jp_root_dir)
    response = await server.get("/resolve/api/notebook/variables", params={"path": path})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["notebook"] == path and body["kernel"] is True
    found = {v["name"]: v for v in body["variables"]}
    assert set(found) == {"df", "arr", "x", "slow", "stubborn"}  # no modules, functions, _names
    assert found["df"]["type"] == "pandas.DataFrame" and found["df"]["shape"] == [3, 2]
    assert "height, species" in found["df"]["summary"]
    assert found["arr"]["shape"] == [3, 4] and found["x"]["summary"] == "3"
    assert found["slow"]["summary"].endswith("Slow")  # listed without calling its __repr__


async def test_a_kernel_busy_with_the_users_cell_is_left_alone(
    server: Server, jp_serverapp: Any, jp_root_dir: Path
) -> None:
    path, kernel_id = await user_notebook(server, jp_serverapp, jp_root_dir)
    started = jp_root_dir / "cell-started"
    code = f"import time; open({str(started)!r}, 'w').close(); time.sleep(8)"
    cell = asyncio.ensure_future(run_in_kernel(jp_serverapp, kernel_id, code))
    kernel = jp_serverapp.kernel_manager.get_kernel(kernel_id)
    for _ in range(500):  # until the cell runs and the server has seen the kernel busy
        if started.exists() and kernel.execution_state == "busy":
            break
        await asyncio.sleep(0.02)
    busy = await server.get("/resolve/api/notebook/variables", params={"path": path})
    assert busy.status_code == 409 and "busy running a cell" in busy.json()["error"]["message"]
    assert not cell.done()  # the user's cell was not interrupted
    await cell
    idle = await server.get("/resolve/api/notebook/variables", params={"path": path})
    assert idle.status_code == 200


async def test_variables_endpoint_without_kernel_bad_and_missing_paths(
    server: Server, jp_root_dir: Path
) -> None:
    (jp_root_dir / "idle.ipynb").write_text(
        json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    idle = await server.get("/resolve/api/notebook/variables", params={"path": "idle.ipynb"})
    assert idle.json() == {"notebook": "idle.ipynb", "kernel": False, "variables": []}
    for bad in ("../x.ipynb", "/etc/x.ipynb", "notes.txt", ""):
        answer = await server.get("/resolve/api/notebook/variables", params={"path": bad})
        assert answer.status_code == 400, bad
    missing = await server.get("/resolve/api/notebook/variables", params={"path": "no.ipynb"})
    assert missing.status_code == 404


async def test_inspect_describes_frames_and_arrays_and_cuts_a_hanging_repr(
    server: Server, gateway: Any, jp_serverapp: Any, jp_root_dir: Path, tmp_path: Path
) -> None:
    path, kernel_id = await user_notebook(server, jp_serverapp, jp_root_dir)
    script(
        gateway,
        tmp_path,
        call("notebook_variables"),
        use("inspect_variable", name="df"),
        use("inspect_variable", name="arr"),
        use("inspect_variable", name="slow"),
        use("inspect_variable", name="stubborn"),
        use("inspect_variable", name="nothing"),
        call("notebook_variables", notebook=path),
        {"content": "done"},
    )
    gateway.config.max_tool_calls = 16
    stream = await server.chat("look at my data", notebook=path)  # a notebook chat: no paths
    done = stream.of("tool.completed")
    listing, frame, array, slow, stubborn, nothing, again = (c["output"] for c in done)
    assert "df: pandas.DataFrame (3, 2)" in listing and "helper" not in listing
    assert "height: float64" in frame and "\n  species: " in frame
    assert "head(5)" in frame and "describe()" in frame and "1.7" in frame
    assert "dtype: float64" in array and "0. 1. 2." in array
    assert "[cut: describing it took longer than" in slow
    assert done[4]["ok"] is False and "cut by the time limit" in stubborn
    assert "no variable named 'nothing'" in nothing
    assert again == listing  # the kernel still works after both
    # and it was silent: nothing went into the user's history or execution count
    reply = await run_in_kernel(jp_serverapp, kernel_id, "len(In)")
    assert reply["execution_count"] == 2  # SETUP, then this cell


async def test_snapshot_copies_frames_and_arrays_into_context_read_only(
    server: Server, gateway: Any, jp_serverapp: Any, jp_root_dir: Path, tmp_path: Path
) -> None:
    path, _ = await user_notebook(server, jp_serverapp, jp_root_dir)
    script(
        gateway,
        tmp_path,
        use("snapshot_variable", name="df"),
        use("snapshot_variable", name="arr"),
        use("snapshot_variable", name="x"),
        {"content": "saved"},
    )
    stream = await server.chat("freeze them", notebook=path, session_id="s-snap")
    assert all(c["ok"] for c in stream.of("tool.completed")), stream.of("tool.completed")
    context = gateway.kernels.workspace("s-snap").context / "snapshots"
    record = gateway.kernels.workspace("s-snap").record()
    for name in ("df.parquet", "arr.npy", "x.pkl"):
        file = context / name
        assert stat.S_IMODE(file.stat().st_mode) == 0o400
        digest = hashlib.sha256(file.read_bytes()).hexdigest()
        assert record[f"snapshots/{name}"] == digest
        assert digest in next(
            c["output"] for c in stream.of("tool.completed") if name in c["output"]
        )
    frame = pd.read_parquet(context / "df.parquet")
    assert list(frame.columns) == ["height", "species"] and frame.shape == (3, 2)
    assert np.load(context / "arr.npy").shape == (3, 4)


async def test_snapshot_replaces_a_planted_link_and_is_restored_from_the_gateways_copy(
    server: Server, gateway: Any, jp_serverapp: Any, jp_root_dir: Path, tmp_path: Path
) -> None:
    path, _ = await user_notebook(server, jp_serverapp, jp_root_dir)
    workspace = gateway.kernels.workspace("s-link")
    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    (workspace.context / "snapshots").mkdir(parents=True, exist_ok=True)
    (workspace.context / "snapshots" / "df.parquet").symlink_to(victim)
    script(gateway, tmp_path, use("snapshot_variable", name="df"), {"content": "ok"})
    await server.chat("freeze df", notebook=path, session_id="s-link")
    placed = workspace.context / "snapshots" / "df.parquet"
    assert victim.read_text() == "mine" and not placed.is_symlink()
    placed.chmod(0o600)
    placed.write_bytes(b"tampered")
    workspace.verify(gateway.log, jp_root_dir)
    assert (
        hashlib.sha256(placed.read_bytes()).hexdigest()
        == workspace.record()["snapshots/df.parquet"]
    )


async def test_mentions_are_described_in_the_kernel_and_shown_in_run_started(
    server: Server, gateway: Any, jp_serverapp: Any, jp_root_dir: Path, tmp_path: Path
) -> None:
    path, _ = await user_notebook(server, jp_serverapp, jp_root_dir)
    script(gateway, tmp_path, {"content": "noted"})
    stream = await server.chat(
        "what is in @df?",
        notebook=path,
        mentions=[{"name": "df"}, {"name": "given", "description": "a described value"}],
    )
    assert stream.status == 200
    started = stream.events[0].data
    told = {m["name"]: m["description"] for m in started["mentions"]}
    assert "shape (3, 2)" in told["df"] and "species" in told["df"]
    assert told["given"] == "a described value"
    assert "--- variables the person mentioned" in started["prompt"]
    assert "@df:\ndf: pandas.DataFrame, shape (3, 2)" in started["prompt"]
    chat = "/resolve/api/chat"
    message = [{"role": "user", "content": "x"}]
    unknown = await server.post(
        chat, {"messages": message, "notebook": path, "mentions": [{"name": "nope"}]}
    )
    assert unknown.status_code == 400 and "nope" in unknown.json()["error"]["message"]
    no_notebook = await server.post(chat, {"messages": message, "mentions": [{"name": "df"}]})
    assert no_notebook.status_code == 400 and "notebook" in no_notebook.json()["error"]["message"]
    bad_name = await server.post(chat, {"messages": message, "mentions": [{"name": "a b"}]})
    assert bad_name.status_code == 400
