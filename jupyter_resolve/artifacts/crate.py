"""An artifact's provenance as an RO-Crate (RO-Crate 1.1) whose root conforms to the Process
Run Crate profile 0.5 (https://w3id.org/ro/wfrun/process/0.5), as data: the JSON-LD graph of
``ro-crate-metadata.json`` and the files the crate holds. No I/O here (export.py writes the zip).

    ./                            Dataset, conformsTo the profile; mentions every action
    <art-id>/<name>               each artifact's bytes (File: sha256, encodingFormat, size)
    code/<run>/<call>.py|.sh|.json   what each producing step ran (its sha256)
    logs/<run>.jsonl              the run log's excerpt: start, end, the steps' tool events
    provenance.prov.json          the same story in W3C PROV-JSON (prov_document.py)
    notebook-authorship.json      a notebook's crate: who wrote each agent-written cell

Entities: a ``CreateAction`` per producing step (instrument: the tool, the model and the soul
that asked for it; object: its code and the session's context files and snapshots by digest;
result: its output, or the artifact; agent: the person whose run it was; start and end time);
an ``OrganizeAction`` per agent run (the run orchestrating its steps: instrument model and
soul, agent the person who started it); and a ``CreateAction`` per promotion (agent: the
person who promoted it; object: what was promoted; result: the artifact).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..contracts.authorship import cell_authorship
from .provenance import Provenance, RunRecord, Step, iso
from .records import ArtifactManifest

CRATE_SPEC = "https://w3id.org/ro/crate/1.1"
PROFILE = "https://w3id.org/ro/wfrun/process/0.5"
CONTEXT = "https://w3id.org/ro/crate/1.1/context"
APP_ID = "#jupyter-resolve"
COMPLETED = "http://schema.org/CompletedActionStatus"
FAILED = "http://schema.org/FailedActionStatus"
OUTPUT_CHARS = 2000  # of a step's output kept as its PropertyValue
SUFFIX = {"python": ".py", "shell": ".sh"}


@dataclass
class Person:
    """Someone named in the crate: the login, a name to show, an ORCID iD when configured."""

    login: str
    name: str = ""
    orcid: str = ""

    @property
    def id(self) -> str:
        if self.orcid:
            return f"https://orcid.org/{self.orcid}"
        return "#person-" + hashlib.sha256(self.login.encode()).hexdigest()[:12]

    def entity(self) -> dict[str, Any]:
        entity = {"@id": self.id, "@type": "Person", "name": self.name or self.login}
        if self.orcid:
            entity["identifier"] = self.id
        return entity


@dataclass
class Exported:
    """One artifact to put in the crate, with all that is known of its making."""

    manifest: ArtifactManifest
    blob: Path
    provenance: Provenance
    promoter: Person | None
    context: Mapping[str, str] = field(default_factory=dict)  # path in context/ -> sha256
    reproduction: dict[str, Any] | None = None


@dataclass
class CrateContent:
    """``ro-crate-metadata.json`` and the files beside it (bytes, or a blob to copy)."""

    metadata: dict[str, Any]
    files: dict[str, bytes | Path]


class Graph:
    """The crate's entities by ``@id``; adding one again merges its properties."""

    def __init__(self) -> None:
        self.entities: dict[str, dict[str, Any]] = {}

    def add(self, entity: dict[str, Any]) -> dict[str, Any]:
        known = self.entities.setdefault(entity["@id"], {})
        known.update({k: v for k, v in entity.items() if v not in (None, [], "")})
        return {"@id": entity["@id"]}

    def append(self, entity_id: str, key: str, ref: dict[str, Any]) -> None:
        values = self.entities[entity_id].setdefault(key, [])
        if ref not in values:
            values.append(ref)


def tool_entity(name: str, run: RunRecord, version: str) -> dict[str, Any]:
    tools = run.manifest.get("tools")
    digest = next(
        (t.get("sha256") for t in tools or [] if isinstance(t, dict) and t.get("name") == name),
        None,
    )
    return {
        "@id": f"#tool-{name}",
        "@type": "SoftwareApplication",
        "name": f"{name} (a tool of jupyter-resolve)",
        "softwareVersion": version,
        "identifier": f"sha256:{digest}" if digest else None,
    }


def run_instruments(graph: Graph, run: RunRecord) -> list[dict[str, Any]]:
    """The model and the soul that asked for a run's calls."""
    manifest = run.manifest
    model = str(run.started.get("model") or manifest.get("model") or "unknown")
    provider = str(manifest.get("provider") or "")
    refs = [
        graph.add(
            {
                "@id": f"#model-{provider}-{model}" if provider else f"#model-{model}",
                "@type": "SoftwareApplication",
                "name": model,
                "softwareVersion": model,
                "description": f"the language model, through the '{provider}' provider"
                if provider
                else "the language model",
            }
        )
    ]
    soul = run.started.get("soul") or manifest.get("soul")
    if isinstance(soul, str) and soul:
        refs.append(
            graph.add(
                {
                    "@id": f"#soul-{soul}",
                    "@type": "SoftwareSourceCode",
                    "name": f"{soul} (soul: the role's prompt)",
                    "programmingLanguage": "Markdown",
                }
            )
        )
    return refs


def run_entity(graph: Graph, run: RunRecord, people: Mapping[str, Person]) -> dict[str, Any]:
    """The agent run: an OrganizeAction orchestrating its steps."""
    owner = people.get(run.owner or "")
    return graph.add(
        {
            "@id": f"#run-{run.run_id}",
            "@type": "OrganizeAction",
            "name": f"agent run {run.run_id}",
            "description": str(run.started.get("prompt") or "")[:OUTPUT_CHARS],
            "identifier": run.run_id,
            "instrument": run_instruments(graph, run),
            "agent": graph.add(owner.entity()) if owner else None,
            "startTime": iso(run.started_at),
            "endTime": iso(run.ended_at),
            "actionStatus": COMPLETED if run.reason == "stop" else None,
        }
    )


def add_step(
    graph: Graph,
    files: dict[str, bytes | Path],
    step: Step,
    inputs: list[dict[str, Any]],
    people: Mapping[str, Person],
    version: str,
) -> dict[str, Any]:
    """A producing step as a CreateAction; its code goes into the crate."""
    run, call = step.run, step.call
    code = call.code.encode()
    path = f"code/{run.run_id}/{call.slug}{SUFFIX.get(call.name, '.json')}"
    files[path] = code
    code_ref = graph.add(
        {
            "@id": path,
            "@type": "File",
            "name": f"{call.name} call {call.call_id}: what it ran",
            "encodingFormat": "text/x-python" if call.name == "python" else "text/plain",
            "contentSize": str(len(code)),
            "sha256": hashlib.sha256(code).hexdigest(),
        }
    )
    done = call.completed or {}
    output = graph.add(
        {
            "@id": f"#output-{run.run_id}-{call.slug}",
            "@type": "PropertyValue",
            "name": f"output of {call.name} call {call.call_id}",
            "value": str(done.get("output", ""))[:OUTPUT_CHARS],
        }
    )
    owner = people.get(run.owner or "")
    action_id = f"#call-{run.run_id}-{call.slug}"
    graph.add(
        {
            "@id": action_id,
            "@type": "CreateAction",
            "name": f"{call.name} call {call.call_id} of run {run.run_id}",
            "description": call.code[:OUTPUT_CHARS],
            "instrument": [
                graph.add(tool_entity(call.name, run, version)),
                *run_instruments(graph, run),
            ],
            "object": [code_ref, *inputs],
            "result": [output],
            "agent": graph.add(owner.entity()) if owner else None,
            "startTime": iso(call.started_at),
            "endTime": iso(call.completed_at),
            "actionStatus": COMPLETED if done.get("ok") else FAILED,
            "error": None if done.get("ok") else str(done.get("output", ""))[:OUTPUT_CHARS],
        }
    )
    graph.append(run_entity(graph, run, people)["@id"], "result", {"@id": action_id})
    return {"@id": action_id}


def context_inputs(graph: Graph, context: Mapping[str, str]) -> list[dict[str, Any]]:
    """The session's context files and snapshots, by digest (their bytes stay on the server)."""
    refs = []
    for path, digest in sorted(context.items()):
        snapshot = path.startswith("snapshots/")
        refs.append(
            graph.add(
                {
                    "@id": f"#input-{digest}",
                    "@type": "CreativeWork",
                    "name": f"context/{path}",
                    "description": "a value snapshot from the person's kernel"
                    if snapshot
                    else "a file the person attached (copied into the session's context/)",
                    "sha256": digest,
                }
            )
        )
    return refs


def artifact_file(graph: Graph, files: dict[str, bytes | Path], item: Exported) -> dict[str, Any]:
    m = item.manifest
    name = Path(m.source.path or "").name or f"content{_extension(m.media_type)}"
    path = f"{m.id}/{name}"
    files[path] = item.blob
    return graph.add(
        {
            "@id": path,
            "@type": "File",
            "name": m.title or name,
            "description": m.note or f"artifact {m.id}: {m.source.describe()}",
            "identifier": m.id,
            "encodingFormat": m.media_type,
            "contentSize": str(m.size),
            "sha256": m.sha256,
            "dateCreated": m.created_at,
        }
    )


def _extension(media_type: str) -> str:
    known = {"image/png": ".png", "text/plain": ".txt", "text/html": ".html"}
    known |= {"application/json": ".json", "image/svg+xml": ".svg", "text/csv": ".csv"}
    return known.get(media_type, "")


def notebook_authorship(content: dict[str, Any]) -> list[dict[str, Any]]:
    """Every agent-written cell's authorship, with ``edited`` computed."""
    cells = content.get("cells") if isinstance(content, dict) else None
    found = [cell_authorship(c) for c in cells or [] if isinstance(c, dict)]
    return [a for a in found if a is not None]


def as_json_bytes(value: Any) -> bytes:
    return (json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()
