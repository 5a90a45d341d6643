"""Reading an exported crate back as its consumers do: ro-crate-py, and roc-validator against
the Process Run Crate profile — offline. The validator resolves the crate's JSON-LD context
(``https://w3id.org/ro/crate/1.1/context``) through its HTTP cache (requests-cache, SQLite); the
cache is seeded here from the RO-Crate context that ro-crate-py ships (its 1.3 context, a
superset whose terms map to the same IRIs), so nothing is fetched. The profile's own SHACL
shapes ship inside roc-validator."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import requests
import rocrate
from requests.adapters import HTTPAdapter
from urllib3 import HTTPResponse

CONTEXT_URL = "https://w3id.org/ro/crate/1.1/context"
SHIPPED_CONTEXT = Path(rocrate.__file__).parent / "data" / "ro-crate.jsonld"


class _Files(HTTPAdapter):
    """Answers GETs of known URLs from local files (and nothing else)."""

    def __init__(self, files: dict[str, Path]) -> None:
        super().__init__()
        self.files = files

    def send(self, request: Any, *args: Any, **kwargs: Any) -> requests.Response:
        body = self.files[request.url].read_bytes()
        raw = HTTPResponse(
            body=io.BytesIO(body),
            headers={"Content-Type": "application/ld+json"},
            status=200,
            preload_content=False,
            request_url=request.url,
        )
        return self.build_response(request, raw)


def seed_cache(cache: Path) -> Path:
    """A requests-cache database holding the crate context, for the validator's offline mode."""
    from requests_cache import CachedSession

    session = CachedSession(cache_name=str(cache), backend="sqlite", expire_after=-1)
    session.mount("https://", _Files({CONTEXT_URL: SHIPPED_CONTEXT}))
    assert session.get(CONTEXT_URL).status_code == 200
    session.close()
    return cache


def unzip(data: bytes, folder: Path) -> Path:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        archive.extractall(folder)
    return folder


def graph(folder: Path) -> dict[str, dict[str, Any]]:
    metadata = json.loads((folder / "ro-crate-metadata.json").read_text())
    return {e["@id"]: e for e in metadata["@graph"]}


def refs(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value]
    return [i["@id"] for i in items if isinstance(i, dict)]
