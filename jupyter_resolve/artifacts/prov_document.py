"""The crate's story in W3C PROV (PROV-JSON, through the ``prov`` package), for tools that read
PROV rather than RO-Crate. Derived from the crate's own graph, so the two never disagree:

- a ``File``, ``CreativeWork`` or ``PropertyValue`` is a ``prov:Entity`` (its sha256 kept);
- a ``CreateAction`` or ``OrganizeAction`` is a ``prov:Activity`` with its times; it ``used``
  its ``object`` and generated its ``result`` (an action in a run's result was informed by
  the run);
- a ``Person`` is a ``prov:Person``; the tool, the model and the soul of an ``instrument`` are
  ``prov:SoftwareAgent``s associated with the action; each agent run is a software agent too,
  acting on behalf of the person who started it;
- an artifact is attributed to the person who promoted it.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

NAMESPACE = "urn:jupyter-resolve:crate:"  # the crate's local ids, as PROV qualified names
ENTITY_TYPES = {"File", "CreativeWork", "PropertyValue"}
ACTIVITY_TYPES = {"CreateAction", "OrganizeAction"}
AGENT_TYPES = {"SoftwareApplication", "SoftwareSourceCode"}


def _refs(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value]
    return [i["@id"] for i in items if isinstance(i, dict) and isinstance(i.get("@id"), str)]


def _time(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def prov_json(metadata: dict[str, Any]) -> bytes:
    """The PROV-JSON document of an RO-Crate's metadata (crate_build.py's)."""
    from prov.model import PROV_LABEL, PROV_TYPE, ProvDocument  # slow: only when exporting

    doc = ProvDocument()
    doc.add_namespace("crate", NAMESPACE)
    doc.add_namespace("schema", "http://schema.org/")
    graph = {e["@id"]: e for e in metadata["@graph"] if isinstance(e, dict)}

    def qn(entity_id: str) -> str:
        return "crate:" + entity_id.lstrip("#").replace(" ", "_")

    for entity_id, e in graph.items():
        kind = e.get("@type")
        attributes: dict[Any, Any] = {PROV_LABEL: str(e.get("name") or entity_id)}
        if kind in ENTITY_TYPES:
            if e.get("sha256"):
                attributes["schema:sha256"] = e["sha256"]
            doc.entity(qn(entity_id), {**attributes, PROV_TYPE: f"schema:{kind}"})
        elif kind in ACTIVITY_TYPES:
            start, end = _time(e.get("startTime")), _time(e.get("endTime"))
            doc.activity(qn(entity_id), start, end, {**attributes, PROV_TYPE: f"schema:{kind}"})
        elif kind == "Person":
            doc.agent(qn(entity_id), {**attributes, PROV_TYPE: "prov:Person"})
        elif kind in AGENT_TYPES:
            doc.agent(qn(entity_id), {**attributes, PROV_TYPE: "prov:SoftwareAgent"})
    for entity_id, e in graph.items():
        if e.get("@type") in ACTIVITY_TYPES:
            _relations(doc, graph, qn, entity_id, e)
    text = doc.serialize(format="json") or "{}"
    return (json.dumps(json.loads(text), indent=2) + "\n").encode()


def _relations(doc: Any, graph: dict[str, Any], qn: Any, action_id: str, e: dict[str, Any]) -> None:
    act = qn(action_id)
    for used in _refs(e.get("object")):
        kind = graph.get(used, {}).get("@type")
        if kind in ENTITY_TYPES:
            doc.used(act, qn(used))
        elif kind in ACTIVITY_TYPES:
            doc.wasInformedBy(act, qn(used))
    for made in _refs(e.get("result")):
        kind = graph.get(made, {}).get("@type")
        if kind in ENTITY_TYPES:
            doc.wasGeneratedBy(qn(made), act)
        elif kind in ACTIVITY_TYPES:
            doc.wasInformedBy(qn(made), act)
    people = [p for p in _refs(e.get("agent")) if graph.get(p, {}).get("@type") == "Person"]
    for person in people:
        doc.wasAssociatedWith(act, qn(person))
    for tool in _refs(e.get("instrument")):
        if graph.get(tool, {}).get("@type") in AGENT_TYPES:
            doc.wasAssociatedWith(act, qn(tool))
    if e.get("@type") == "OrganizeAction":
        run_agent = f"crate:agent-{action_id.lstrip('#')}"
        doc.agent(run_agent, {"prov:type": "prov:SoftwareAgent", "prov:label": "the agent run"})
        doc.wasAssociatedWith(act, run_agent)
        for person in people:
            doc.actedOnBehalfOf(run_agent, qn(person))
        for step in _refs(e.get("result")):
            doc.wasAssociatedWith(qn(step), run_agent)
    if action_id.startswith("#promotion-"):
        for made in _refs(e.get("result")):
            for person in people:
                doc.wasAttributedTo(qn(made), qn(person))
