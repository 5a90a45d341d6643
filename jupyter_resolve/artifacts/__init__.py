"""Artifacts (DESIGN 3.7): explicit promotion of notebook outputs and scratch files into a
content-addressed, read-only store with manifests and an index.

``models`` (data) → ``sources`` (reading and checking what is promoted) → ``store`` (blobs,
manifests, index) → ``service`` (promotion, for the REST API and the agent tool) → ``cli``.
"""

from __future__ import annotations

from .records import AgentOrigin, ArtifactManifest, PromoteRequest, Source, artifact_id
from .service import Artifacts, Promoted
from .store import ArtifactStore, Report

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
