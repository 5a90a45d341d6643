"""The artifacts' routes (DESIGN 3.7). Their handlers (``handlers.py``) load on the first
request (``handlers/lazy.py``): most servers never promote."""

from __future__ import annotations

ART_ID = r"(?P<art_id>[^/]+)"  # any segment: a bad id is a 400 naming it (check_id)

HANDLERS = "jupyter_resolve.artifacts.handlers"
routes = [
    (r"/resolve/api/artifacts", "ArtifactsHandler"),
    # before {id}: "crate" is no artifact id
    (r"/resolve/api/artifacts/crate", "GroupCrateHandler"),
    (rf"/resolve/api/artifacts/{ART_ID}", "ArtifactHandler"),
    (rf"/resolve/api/artifacts/{ART_ID}/content", "ArtifactContentHandler"),
    (rf"/resolve/api/artifacts/{ART_ID}/crate", "ArtifactCrateHandler"),
    (rf"/resolve/api/artifacts/{ART_ID}/reproduce", "ReproduceHandler"),
]
