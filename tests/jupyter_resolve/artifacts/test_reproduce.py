"""Reproducing an artifact (issue 49.2): on a real server, the calls that made a promoted result
run again in a fresh scratch kernel from the recorded inputs (the attached file, the code in the
run log) and the digests are compared: true for deterministic python, false with a diff when
the recorded code is changed in a copy of the log; nondeterminism reported; the last
reproduction kept and put into the crate."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from jupyter_resolve.contracts.permissions import RunPermissions
from jupyter_resolve.tools.replay import Replayer
from tests.conftest import Server
from tests.jupyter_resolve.artifacts.crates import graph, refs, unzip
from tests.jupyter_resolve.artifacts.test_crate import promoted_table
from tests.jupyter_resolve.artifacts.test_store import cli
from tests.scripting import call, script

pytestmark = pytest.mark.timeout(240)


def copy_with_code(root: Path, run_id: str, copy_id: str, old: str, new: str) -> None:
    """A copy of a run log whose recorded code is changed (its recorded results are not)."""
    runs = root / ".resolve" / "runs"
    lines = []
    for line in (runs / f"{run_id}.jsonl").read_text().splitlines():
        record = json.loads(line)
        record["data"]["run_id"] = copy_id
        code = record["data"].get("arguments", {}).get("code")
        if isinstance(code, str):
            record["data"]["arguments"]["code"] = code.replace(old, new)
        lines.append(json.dumps(record))
    (runs / f"{copy_id}.jsonl").write_text("\n".join(lines) + "\n")


async def test_deterministic_python_reproduces_and_the_crate_says_so(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    art = await promoted_table(server, gateway, tmp_path, jp_root_dir)
    never = await server.get(f"/resolve/api/artifacts/{art['id']}/reproduce")
    assert never.status_code == 404 and never.json()["error"]["code"] == "no_reproduction"
    response = await server.post(f"/resolve/api/artifacts/{art['id']}/reproduce", {})
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["reproduced"] is True and result["identical"] is True, result
    assert result["sha256"] == art["sha256"] and result["steps"] == 2
    assert result["failed_steps"] == [] and result["nondeterminism"] == []
    environment = result["environment"]
    assert environment["python"] and environment["seeds"]["PYTHONHASHSEED"]
    assert "ipykernel" in environment["packages"]
    # nothing of the reproduction's session is left behind
    sessions = jp_root_dir / ".resolve" / "sessions"
    assert [p.name for p in sessions.iterdir()] == ["s-squares"]
    kept = await server.get(f"/resolve/api/artifacts/{art['id']}/reproduce")
    assert kept.json()["sha256"] == art["sha256"]
    crate = await server.get(f"/resolve/api/artifacts/{art['id']}/crate")
    entities = graph(unzip(crate.content, tmp_path / "crate"))
    action = entities[f"#reproduction-{art['id']}"]
    kernel = entities[refs(action["instrument"])[0]]
    requirements = refs(kernel["softwareRequirements"])
    assert any(r.startswith("https://pypi.org/project/ipykernel/") for r in requirements)
    assert any(entities[r].get("name") == "PYTHONHASHSEED" for r in refs(action["object"]))
    assert entities[refs(action["agent"])[0]]["@type"] == "Person"  # who asked for it


async def test_earlier_turns_of_the_session_are_replayed_first(
    server: Server, gateway: Any, tmp_path: Path
) -> None:
    """The session's kernel kept ``x`` from the first turn: the second turn's result needs it."""
    script(gateway, tmp_path, call("python", code="x = 41"), {"content": "kept"})
    await server.chat("one", session_id="s-turns")
    script(gateway, tmp_path, call("python", code="print(x + 1)"), {"content": "42"})
    second = await server.chat("two", session_id="s-turns")
    [done] = second.of("tool.completed")
    run_id = second.of("run.started")[0]["run_id"]
    body = {"run_id": run_id, "call_id": done["call_id"]}
    promoted = await server.post("/resolve/api/artifacts", body)
    response = await server.post(f"/resolve/api/artifacts/{promoted.json()['id']}/reproduce", {})
    result = response.json()
    assert result["reproduced"] is True and result["steps"] == 2, result


async def test_a_notebook_chats_python_reads_beside_the_notebook_again(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    """A notebook chat's python read a CSV by the path the notebook uses (relative, in the
    notebook's folder): the reproduction's python reads there too, not in its empty work/."""
    folder = jp_root_dir / "proj"
    folder.mkdir()
    (folder / "mass.csv").write_text("species,mass\nAdelie,3750\nGentoo,5000\n")
    cells = [{"cell_type": "code", "id": "c1", "metadata": {}, "source": "", "outputs": []}]
    cells[0]["execution_count"] = None
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}
    (folder / "analysis.ipynb").write_text(json.dumps(notebook))
    code = "import csv\nrows = list(csv.DictReader(open('mass.csv')))\n"
    code += "print(len(rows), rows[1]['mass'])"
    script(gateway, tmp_path, call("python", code=code), {"content": "two rows"})
    stream = await server.chat("how many rows?", notebook="proj/analysis.ipynb")
    [done] = stream.of("tool.completed")
    assert done["ok"] and "2 5000" in done["output"], done
    started = stream.of("run.started")[0]
    assert started["notebook"] == "proj/analysis.ipynb"
    body = {"run_id": started["run_id"], "call_id": done["call_id"]}
    promoted = await server.post("/resolve/api/artifacts", body)
    assert promoted.status_code == 201, promoted.text
    response = await server.post(f"/resolve/api/artifacts/{promoted.json()['id']}/reproduce", {})
    result = response.json()
    assert result["reproduced"] is True, result
    assert any("python read beside proj/analysis.ipynb" in n for n in result["notes"]), result


async def test_the_command_line_reproduces_too(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    art = await promoted_table(server, gateway, tmp_path, jp_root_dir)
    args = ("artifacts", "reproduce", art["id"])
    done = await asyncio.to_thread(cli, *args, cwd=jp_root_dir)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1].startswith("reproduced: 2 call(s)")
    unknown = await asyncio.to_thread(
        cli, "artifacts", "reproduce", "art-000000000000000000000000", cwd=jp_root_dir
    )
    assert unknown.returncode == 2 and "no artifact" in unknown.stdout


async def test_changed_code_does_not_reproduce_and_the_diff_says_how(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    art = await promoted_table(server, gateway, tmp_path, jp_root_dir)
    copy_with_code(jp_root_dir, art["run_id"], "run-edited-copy", "range(n)", "range(n + 1)")
    body = {"run_id": "run-edited-copy", "call_id": art["calls"][1]}
    copied = await server.post("/resolve/api/artifacts", body)
    assert copied.status_code == 201, copied.text
    assert copied.json()["sha256"] == art["sha256"]  # the recorded result, unchanged
    response = await server.post(f"/resolve/api/artifacts/{copied.json()['id']}/reproduce", {})
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["reproduced"] is False, result
    assert result["difference"]["kind"] == "text"
    assert "+4,16" in result["difference"]["diff"]
    assert result["summary"].startswith("not reproduced")


async def test_what_no_agent_call_made_is_not_reproducible(
    server: Server, jp_root_dir: Path
) -> None:
    (jp_root_dir / "notes.txt").write_text("mine\n")
    promoted = await server.post("/resolve/api/artifacts", {"file": "notes.txt"})
    assert promoted.status_code == 201, promoted.text
    response = await server.post(f"/resolve/api/artifacts/{promoted.json()['id']}/reproduce", {})
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "not_reproducible"
    assert "file of the server root" in response.json()["error"]["message"]
    # a web page's text: the tool ran in the gateway, and the page may have changed since
    runs = jp_root_dir / ".resolve" / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    lines = [
        ("run.started", {"run_id": "run-web", "session_id": "s-web", "model": "m"}),
        ("tool.requested", {"call_id": "c1", "name": "web_fetch", "arguments": {"url": "x"}}),
        ("tool.started", {"call_id": "c1", "name": "web_fetch"}),
        ("tool.completed", {"call_id": "c1", "name": "web_fetch", "ok": True, "output": "page"}),
    ]
    (runs / "run-web.jsonl").write_text(
        "".join(
            json.dumps({"seq": i, "type": t, "data": d, "ts": 1.0 + i}) + "\n"
            for i, (t, d) in enumerate(lines, 1)
        )
    )
    page = await server.post("/resolve/api/artifacts", {"run_id": "run-web", "call_id": "c1"})
    assert page.status_code == 201, page.text
    refused = await server.post(f"/resolve/api/artifacts/{page.json()['id']}/reproduce", {})
    assert refused.status_code == 409 and "web_fetch" in refused.json()["error"]["message"]
    bad = await server.post("/resolve/api/artifacts/../reproduce", {})
    assert bad.status_code in (400, 404)


def test_a_caller_replays_only_what_a_run_of_theirs_could_call() -> None:
    """Unsandboxed, python runs as the server's user: only for a caller who may read and write
    contents and execute kernels (DESIGN 10.1); sandboxed, for anyone."""
    loose = Replayer(SimpleNamespace(isolated=False), 10, 100)  # type: ignore[arg-type]
    reader = RunPermissions(contents_read=True)
    refusal = loose.refusal(["python"], reader)
    assert refusal is not None and "contents write" in refusal and "kernels execute" in refusal
    assert loose.refusal(["python"], RunPermissions.full()) is None
    sandboxed = Replayer(SimpleNamespace(isolated=True), 10, 100)  # type: ignore[arg-type]
    assert sandboxed.refusal(["python", "shell"], RunPermissions()) is None
