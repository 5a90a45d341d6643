"""An artifact leaves the server as an RO-Crate (issue 49.1): a real server runs a scripted
agent's python calls with an attached file, the result of the last call is promoted, and its
crate (``GET /resolve/api/artifacts/{id}/crate``) is read back by ro-crate-py and validated by
roc-validator, offline, against the Process Run Crate profile (crates.py says how), with its
PROV-JSON sidecar read by the ``prov`` package."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import prov.model
import pytest
from rocrate.rocrate import ROCrate

from tests.conftest import Server
from tests.jupyter_resolve.artifacts.crates import graph, refs, seed_cache, unzip
from tests.scripting import call, script

pytestmark = pytest.mark.timeout(180)

PROFILE = "https://w3id.org/ro/wfrun/process/0.5"
VALIDATE = Path(__file__).with_name("validate_crate.py")
SQUARES = "rows = [(i, i * i) for i in range(4)]"
PRINT = "print('\\n'.join(f'{a},{b}' for a, b in rows))"


@pytest.fixture
def resolve_config() -> dict[str, Any]:
    return {"orcids": {"ada": "0000-0002-1825-0097"}}


async def promoted_table(
    server: Server, gateway: Any, tmp_path: Path, root: Path
) -> dict[str, Any]:
    """A chat whose two python calls make a table from an attached file's count; the second
    call's result promoted."""
    (root / "count.txt").write_text("4\n")
    script(
        gateway,
        tmp_path,
        call("python", code="n = int(open('../context/count.txt').read())"),
        call("python", code=SQUARES.replace("range(4)", "range(n)") + "\n" + PRINT),
        {"content": "the table"},
    )
    stream = await server.chat("squares", session_id="s-squares", attachments=["count.txt"])
    done = stream.of("tool.completed")
    assert [d["ok"] for d in done] == [True, True], done
    run_id = stream.of("run.started")[0]["run_id"]
    body = {"run_id": run_id, "call_id": done[1]["call_id"], "title": "Squares"}
    response = await server.post("/resolve/api/artifacts", body)
    assert response.status_code == 201, response.text
    return {**response.json(), "run_id": run_id, "calls": [d["call_id"] for d in done]}


def validate(folder: Path, cache: Path, severity: str = "REQUIRED") -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(VALIDATE), str(folder), str(cache), severity],
        capture_output=True,
        text=True,
        timeout=170,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    verdict: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return verdict


async def test_the_crate_holds_the_bytes_steps_inputs_people_and_a_prov_sidecar(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    art = await promoted_table(server, gateway, tmp_path, jp_root_dir)
    response = await server.get(f"/resolve/api/artifacts/{art['id']}/crate")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/zip"
    folder = unzip(response.content, tmp_path / "crate")

    crate = ROCrate(str(folder))  # ro-crate-py reads it back
    assert crate.root_dataset["conformsTo"].id == PROFILE
    [artifact] = [e for e in crate.get_entities() if e.get("identifier") == art["id"]]
    assert artifact["sha256"] == art["sha256"]
    assert (folder / artifact.id).read_bytes() == b"0,0\n1,1\n2,4\n3,9"

    entities = graph(folder)
    steps = [entities[f"#call-{art['run_id']}-{c}"] for c in art["calls"]]
    for step in steps:
        assert step["@type"] == "CreateAction"
        assert {"#tool-python", "#model-scripted-scripted"} <= set(refs(step["instrument"]))
        assert step["startTime"] <= step["endTime"]
        code = next(r for r in refs(step["object"]) if r.startswith("code/"))
        assert (folder / code).read_text().startswith(("n = int", "rows = "))
        # the attached file, by digest (its bytes stay on the server)
        [context] = [r for r in refs(step["object"]) if r.startswith("#input-")]
        assert entities[context]["name"] == "context/count.txt"
    assert artifact.id in refs(steps[1]["result"])
    promotion = entities[f"#promotion-{art['id']}"]
    assert refs(promotion["result"]) == [artifact.id]
    [person] = [entities[p] for p in refs(promotion["agent"])]
    assert person["@type"] == "Person" and person["name"] == art["created_by_name"]
    run = entities[f"#run-{art['run_id']}"]
    assert run["@type"] == "OrganizeAction" and set(refs(run["result"])) == {
        f"#call-{art['run_id']}-{c}" for c in art["calls"]
    }
    excerpt = (folder / f"logs/{art['run_id']}.jsonl").read_text().splitlines()
    assert json.loads(excerpt[0])["type"] == "run.started"
    assert {set(refs(entities["./"]["mentions"])) >= {f"#promotion-{art['id']}", run["@id"]}}

    document = prov.model.ProvDocument.deserialize(folder / "provenance.prov.json", format="json")
    generated = [r for r in document.get_records() if r.get_type() == prov.model.PROV_GENERATION]
    assert generated, "the PROV sidecar says what generated what"


async def test_the_crate_conforms_to_the_process_run_crate_profile(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    art = await promoted_table(server, gateway, tmp_path, jp_root_dir)
    response = await server.get(f"/resolve/api/artifacts/{art['id']}/crate")
    folder = unzip(response.content, tmp_path / "crate")
    cache = seed_cache(tmp_path / "http-cache")
    verdict = validate(folder, cache)
    assert verdict["passed"], verdict["issues"]
    # the validator does look: an action without its instrument fails the profile
    metadata = json.loads((folder / "ro-crate-metadata.json").read_text())
    for entity in metadata["@graph"]:
        if entity["@id"].startswith("#call-"):
            del entity["instrument"]
    (folder / "ro-crate-metadata.json").write_text(json.dumps(metadata))
    broken = validate(folder, cache)
    assert not broken["passed"]
    assert any("instrument" in i["message"] for i in broken["issues"])


async def test_a_session_crate_and_bad_requests(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    art = await promoted_table(server, gateway, tmp_path, jp_root_dir)
    whole = await server.get("/resolve/api/artifacts/crate?session=s-squares")
    assert whole.status_code == 200, whole.text
    folder = unzip(whole.content, tmp_path / "session")
    assert any(e.get("identifier") == art["id"] for e in graph(folder).values())
    none = await server.get("/resolve/api/artifacts/crate?session=s-nothing")
    assert none.status_code == 404 and none.json()["error"]["code"] == "no_artifacts"
    both = await server.get("/resolve/api/artifacts/crate?session=a&notebook=b.ipynb")
    assert both.status_code == 400
    unknown = await server.get("/resolve/api/artifacts/art-000000000000000000000000/crate")
    assert unknown.status_code == 404
