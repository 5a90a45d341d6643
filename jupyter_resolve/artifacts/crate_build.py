"""Assembling the crate of crate.py: each artifact's steps, promotion and last reproduction,
a notebook's cells' authorship, and the root that conforms to the Process Run Crate profile.
Pure: the files are bytes or blob paths that export.py copies."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .crate import (
    APP_ID,
    COMPLETED,
    CONTEXT,
    CRATE_SPEC,
    PROFILE,
    CrateContent,
    Exported,
    Graph,
    Person,
    add_step,
    artifact_file,
    as_json_bytes,
    context_inputs,
    notebook_authorship,
)
from .prov_document import prov_json

PROV_FILE = "provenance.prov.json"
AUTHORSHIP_FILE = "notebook-authorship.json"
EDITED: dict[Any, str] = {
    True: "edited since it was accepted",
    False: "as accepted",
    None: "edits unknown (accepted before authorship was kept)",
}
NO_LICENSE = (
    "No license was set (c.Resolve.crate_license): ask the people named in this crate before "
    "reusing its content."
)


def add_artifact(
    graph: Graph,
    files: dict[str, bytes | Path],
    item: Exported,
    people: Mapping[str, Person],
    version: str,
) -> None:
    """The artifact's file, a CreateAction per producing step, its promotion, its run logs'
    excerpts and its last reproduction."""
    art = artifact_file(graph, files, item)
    inputs = context_inputs(graph, item.context)
    last: dict[str, Any] | None = None
    calls: dict[str, list[str]] = {}
    for step in item.provenance.steps:
        action = add_step(graph, files, step, inputs, people, version)
        last = {"@id": f"#output-{step.run.run_id}-{step.call.slug}"}
        calls.setdefault(step.run.run_id, []).append(step.call.call_id)
        if step.final:
            graph.append(action["@id"], "result", art)
    for run_id, call_ids in calls.items():
        run = item.provenance.runs[run_id]
        lines = b"".join(
            as_json_bytes(line).replace(b"\n", b"") + b"\n" for line in run.excerpt(call_ids)
        )
        path = f"logs/{run_id}.jsonl"
        files[path] = lines
        graph.add(
            {
                "@id": path,
                "@type": "File",
                "name": f"excerpt of the log of run {run_id}",
                "encodingFormat": "application/x-ndjson",
                "about": {"@id": f"#run-{run_id}"},
            }
        )
    add_promotion(graph, item, art, last, people)
    if item.reproduction is not None:
        add_reproduction(graph, files, item, art, people)


def add_promotion(
    graph: Graph,
    item: Exported,
    art: dict[str, Any],
    last: dict[str, Any] | None,
    people: Mapping[str, Person],
) -> None:
    """The person's promotion: what it took (the last step's output, else the source) and the
    artifact it made."""
    m = item.manifest
    if last is not None:
        taken = last
    else:
        taken = graph.add(
            {
                "@id": f"#source-{m.id}",
                "@type": "CreativeWork",
                "name": m.source.describe(),
                "description": f"where artifact {m.id} came from ({m.source.kind})",
            }
        )
    by = item.promoter
    asked = " at the agent's request (artifacts.promote)" if m.agent is not None else ""
    graph.add(
        {
            "@id": f"#promotion-{m.id}",
            "@type": "CreateAction",
            "name": f"promotion of {m.source.describe()} as artifact {m.id}",
            "description": "; ".join([f"a person promoted it{asked}", *item.provenance.notes]),
            "instrument": {"@id": APP_ID},
            "object": taken,
            "result": art,
            "agent": graph.add(by.entity()) if by is not None else None,
            "endTime": m.created_at,
            "actionStatus": COMPLETED,
        }
    )


def add_reproduction(
    graph: Graph,
    files: dict[str, bytes | Path],
    item: Exported,
    art: dict[str, Any],
    people: Mapping[str, Person],
) -> None:
    """The last reproduction: the fresh kernel's Python and packages, its seeds, the verdict."""
    result = item.reproduction or {}
    m = item.manifest
    env = _mapping(result.get("environment"))
    packages = _mapping(env.get("packages"))
    requirements = [
        graph.add(
            {
                "@id": f"https://pypi.org/project/{name}/{version}/",
                "@type": "SoftwareApplication",
                "name": name,
                "softwareVersion": str(version),
            }
        )
        for name, version in sorted(packages.items())
    ]
    python = str(env.get("python") or "unknown")
    kernel = graph.add(
        {
            "@id": f"#scratch-python-{python.split()[0]}",
            "@type": "SoftwareApplication",
            "name": "Python in a fresh scratch kernel",
            "softwareVersion": python.split()[0],
            "description": str(env.get("platform") or ""),
            "softwareRequirements": requirements,
        }
    )
    seeds = [
        graph.add(
            {
                "@id": f"#seed-{m.id}-{key}",
                "@type": "PropertyValue",
                "name": key,
                "value": str(value),
            }
        )
        for key, value in sorted(_mapping(env.get("seeds")).items())
    ]
    asker = people.get(str(result.get("by") or ""))
    path = f"reproductions/{m.id}.json"
    files[path] = as_json_bytes(result)
    verdict = graph.add(
        {
            "@id": path,
            "@type": "File",
            "name": f"reproduction of {m.id}: "
            + ("reproduced" if result.get("reproduced") else "not reproduced"),
            "encodingFormat": "application/json",
        }
    )
    graph.add(
        {
            "@id": f"#reproduction-{m.id}",
            "@type": "CreateAction",
            "name": f"reproduction of artifact {m.id}",
            "description": str(result.get("summary") or ""),
            "instrument": kernel,
            "object": [art, *seeds],
            "result": verdict,
            "startTime": result.get("started_at"),
            "endTime": result.get("ended_at"),
            "agent": graph.add(asker.entity()) if asker else None,
            "actionStatus": COMPLETED,
        }
    )


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def add_notebook(
    graph: Graph,
    files: dict[str, bytes | Path],
    path: str,
    content: dict[str, Any],
    people: Mapping[str, Person],
) -> None:
    """Who wrote each cell the agent wrote: a CreateAction per accepted cell (agent: the person
    who accepted it) and ``notebook-authorship.json`` with ``edited`` computed now."""
    cells = notebook_authorship(content)
    files[AUTHORSHIP_FILE] = as_json_bytes({"notebook": path, "cells": cells})
    table = graph.add(
        {
            "@id": AUTHORSHIP_FILE,
            "@type": "File",
            "name": f"who wrote the cells of {path}",
            "encodingFormat": "application/json",
        }
    )
    for cell in cells:
        who = cell.get("accepted_by")
        person = people.get(who) if isinstance(who, str) else None
        written = graph.add(
            {
                "@id": f"#cell-{cell.get('cell_id')}",
                "@type": "CreativeWork",
                "name": f"cell {cell.get('cell_id')} of {path}",
                "description": EDITED.get(cell.get("edited")),
                "isPartOf": table,
            }
        )
        graph.add(
            {
                "@id": f"#accept-{cell.get('proposal_id')}-{cell.get('cell_id')}",
                "@type": "CreateAction",
                "name": f"cell {cell.get('cell_id')} written by {cell.get('model') or 'the agent'}"
                f" in run {cell.get('run_id')}, accepted by a person",
                "instrument": {"@id": APP_ID},
                "object": {"@id": f"#run-{cell.get('run_id')}"}
                if f"#run-{cell.get('run_id')}" in graph.entities
                else None,
                "result": written,
                "agent": graph.add(person.entity()) if person else None,
                "endTime": cell.get("accepted_at"),
                "actionStatus": COMPLETED,
            }
        )


def finish(
    graph: Graph,
    files: dict[str, bytes | Path],
    name: str,
    description: str,
    published: str,
    license_id: str,
) -> CrateContent:
    """The root (conforming to the profile), the metadata descriptor, and every action
    mentioned from the root."""
    actions = [
        {"@id": i}
        for i, e in graph.entities.items()
        if e.get("@type") in ("CreateAction", "OrganizeAction")
    ]
    # the crate's authors: the people who promoted what it holds
    authors = [
        ref
        for i, e in graph.entities.items()
        if i.startswith("#promotion-")
        for ref in ([e["agent"]] if isinstance(e.get("agent"), dict) else [])
    ]
    graph.add({"@id": PROFILE, "@type": "CreativeWork", "name": "Process Run Crate"})
    graph.entities[PROFILE]["version"] = "0.5"
    parts = [{"@id": p} for p in sorted(files)]
    root = {
        "@id": "./",
        "@type": "Dataset",
        "name": name,
        "description": description,
        "datePublished": published,
        "conformsTo": {"@id": PROFILE},
        "hasPart": [*parts, {"@id": PROV_FILE}],
        "mentions": actions,
        "author": [dict(a) for a in {a["@id"]: a for a in authors}.values()] or None,
        # RO-Crate 1.1 needs one; without a configured license, a text saying there is none
        "license": {"@id": license_id} if license_id else NO_LICENSE,
    }
    descriptor = {
        "@id": "ro-crate-metadata.json",
        "@type": "CreativeWork",
        "conformsTo": {"@id": CRATE_SPEC},
        "about": {"@id": "./"},
    }
    graph.add(
        {
            "@id": PROV_FILE,
            "@type": "File",
            "name": "the same provenance in W3C PROV-JSON",
            "encodingFormat": "application/json",
        }
    )
    entities = [descriptor, single({k: v for k, v in root.items() if v is not None})]
    entities += [single(e) for e in graph.entities.values()]
    metadata = {"@context": CONTEXT, "@graph": entities}
    files[PROV_FILE] = prov_json(metadata)
    return CrateContent(metadata, files)


def single(entity: dict[str, Any]) -> dict[str, Any]:
    """A one-item list as its item (RO-Crate 1.1 prefers a value to a singleton array)."""
    return {k: v[0] if isinstance(v, list) and len(v) == 1 else v for k, v in entity.items()}


def build_crate(
    items: list[Exported],
    *,
    name: str,
    description: str,
    version: str,
    published: str,
    people: Mapping[str, Person],
    license_id: str = "",
    notebook: tuple[str, dict[str, Any]] | None = None,
) -> CrateContent:
    """The crate of ``items`` (one artifact, a session's, a notebook's); ``notebook``: the
    notebook's path and content, whose cells' authorship goes in."""
    graph = Graph()
    files: dict[str, bytes | Path] = {}
    graph.add(
        {
            "@id": APP_ID,
            "@type": "SoftwareApplication",
            "name": "jupyter-resolve",
            "softwareVersion": version,
            "description": "a research workbench inside Jupyter (it stored and exported this)",
        }
    )
    for item in items:
        add_artifact(graph, files, item, people, version)
    if notebook is not None:
        add_notebook(graph, files, notebook[0], notebook[1], people)
    return finish(graph, files, name, description, published, license_id)
