"""Promote what a tool card shows (issue 30.4): the result of call C of run R, read from the run
log (the record, not bytes a client sends), with the person's name beside the login."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from tests.conftest import Server

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def write_run_log(root: Path, run_id: str) -> None:
    """A run log as the gateway writes it: a python call that drew a plot, one that printed."""
    events = [
        ("run.started", {"run_id": run_id, "session_id": "s-1", "model": "m"}),
        (
            "tool.completed",
            {
                "run_id": run_id,
                "call_id": "call_plot",
                "name": "python",
                "ok": True,
                "output": "[shown to the person: image/png]",
                "mime": {"image/png": base64.b64encode(PNG).decode(), "text/plain": "<Figure>"},
            },
        ),
        (
            "tool.completed",
            {
                "run_id": run_id,
                "call_id": "call_print",
                "name": "python",
                "ok": True,
                "output": "42\n",
            },
        ),
        ("run.completed", {"run_id": run_id, "reason": "stop", "rounds": 2}),
    ]
    runs = root / ".resolve" / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps({"seq": i + 1, "type": t, "data": d, "ts": 1.0})
        for i, (t, d) in enumerate(events)
    ]
    (runs / f"{run_id}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


async def test_a_tool_calls_display_and_text_are_promoted_from_the_run_log(
    server: Server, jp_root_dir: Path
) -> None:
    write_run_log(jp_root_dir, "run-tool")
    body = {"run_id": "run-tool", "call_id": "call_plot", "title": "The plot"}
    response = await server.post("/resolve/api/artifacts", body)
    assert response.status_code == 201, response.text
    plot = response.json()
    assert plot["media_type"] == "image/png" and plot["title"] == "The plot"
    assert plot["source"] == {
        **plot["source"],
        "kind": "tool",
        "run_id": "run-tool",
        "call_id": "call_plot",
    }
    assert (await server.get(f"/resolve/api/artifacts/{plot['id']}/content")).content == PNG
    again = await server.post("/resolve/api/artifacts", body)
    assert again.status_code == 200 and again.json()["id"] == plot["id"]
    printed = await server.post(
        "/resolve/api/artifacts", {"run_id": "run-tool", "call_id": "call_print"}
    )
    assert printed.status_code == 201 and printed.json()["media_type"] == "text/plain"
    content = await server.get(f"/resolve/api/artifacts/{printed.json()['id']}/content")
    assert content.text == "42\n"


async def test_an_unknown_run_or_call_is_refused_and_nothing_is_written(
    server: Server, jp_root_dir: Path
) -> None:
    write_run_log(jp_root_dir, "run-tool")
    no_run = await server.post("/resolve/api/artifacts", {"run_id": "run-none", "call_id": "c"})
    assert no_run.status_code == 404 and no_run.json()["error"]["code"] == "unknown_run"
    no_call = await server.post("/resolve/api/artifacts", {"run_id": "run-tool", "call_id": "c"})
    assert no_call.status_code == 400 and no_call.json()["error"]["code"] == "unknown_call"
    half = await server.post("/resolve/api/artifacts", {"call_id": "call_plot"})
    assert half.status_code == 400
    assert not (jp_root_dir / ".resolve" / "artifacts" / "manifests").exists() or not list(
        (jp_root_dir / ".resolve" / "artifacts" / "manifests").iterdir()
    )


async def test_the_manifest_names_the_person_not_only_the_login(
    server: Server, jp_root_dir: Path
) -> None:
    write_run_log(jp_root_dir, "run-tool")
    response = await server.post(
        "/resolve/api/artifacts", {"run_id": "run-tool", "call_id": "call_print"}
    )
    manifest = response.json()
    assert manifest["created_by"]
    # under token auth the login is a random hex string; the name is the identity's display name
    assert manifest["created_by_name"] and manifest["created_by_name"] != manifest["created_by"]
