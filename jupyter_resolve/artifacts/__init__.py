"""Artifacts (DESIGN 3.7): explicit promotion of notebook outputs and scratch files into a
content-addressed, read-only store with manifests and an index.

``records`` (data) → ``sources`` (reading and checking what is promoted) → ``store`` (blobs,
manifests, index) → ``service`` (promotion, for the REST API and the agent tool) → ``app`` (the
CLI). Provenance: ``provenance`` (what made an artifact, from the run logs) → ``crate``,
``crate_build`` and ``prov_document`` (its RO-Crate and PROV, pure) → ``export`` (the zip);
``compare`` and ``reproduce`` (running its calls again, through a replay the gateway hands in).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .records import AgentOrigin, ArtifactManifest, PromoteRequest, Source, artifact_id
    from .service import Artifacts, Promoted
    from .store import ArtifactStore, Report

# where each name lives: the package loads them on first use (its routes load at every start)
_HOMES = {
    "AgentOrigin": "records",
    "ArtifactManifest": "records",
    "PromoteRequest": "records",
    "Source": "records",
    "artifact_id": "records",
    "Artifacts": "service",
    "Promoted": "service",
    "ArtifactStore": "store",
    "Report": "store",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


__all__ = [
    "AgentOrigin",
    "ArtifactManifest",
    "ArtifactStore",
    "Artifacts",
    "PromoteRequest",
    "Promoted",
    "Report",
    "Source",
    "artifact_id",
]
