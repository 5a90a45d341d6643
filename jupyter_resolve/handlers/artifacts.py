"""The artifacts API under /resolve/api/artifacts (DESIGN 3.7): promote, list, get, content."""

from __future__ import annotations

import mimetypes
from typing import Any

from jupyter_core.utils import ensure_async
from tornado import web
from tornado.iostream import StreamClosedError

from ..artifacts.models import PromoteRequest
from ..artifacts.service import Promoted
from ..errors import ResolveError
from .base import ResolveHandler

# Media types that can run script when a browser renders them: only ever downloaded.
ACTIVE = frozenset({"text/html", "image/svg+xml", "application/xhtml+xml", "text/xml"})
# Whatever is served, it runs in a sandbox with an opaque origin: no script, no Jupyter cookies.
CONTENT_CSP = "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'"
TEXTUAL = ("text/", "application/json", "image/svg+xml")
CHUNK = 1 << 16


class ArtifactsHandler(ResolveHandler):
    """``POST /resolve/api/artifacts`` (promote) and ``GET`` (list, filtered)."""

    @web.authenticated
    async def post(self) -> None:
        try:
            request = self.parse(PromoteRequest)
            promoted = self.gateway.artifacts.promote(request, created_by=self._user_name())
        except ResolveError as exc:
            return self.fail(exc)
        await self._save_notebook(promoted)
        self.set_status(201 if promoted.created else 200)
        self.answer(promoted.manifest.to_json())

    @web.authenticated
    def get(self) -> None:
        found = self.gateway.artifacts.store.find(
            notebook=self.get_query_argument("notebook", None),
            media_type=self.get_query_argument("media_type", None),
            run_id=self.get_query_argument("run", None),
        )
        self.answer({"artifacts": [m.to_json() for m in found]})

    def _user_name(self) -> str:
        user = self.current_user
        name = getattr(user, "username", None) or getattr(user, "name", None)
        return str(name or user or "")

    async def _save_notebook(self, promoted: Promoted) -> None:
        """Record the artifact id in the output's metadata, through the contents manager."""
        if promoted.notebook is None:
            return
        model = {"type": "notebook", "format": "json", "content": promoted.notebook}
        manager = self.contents_manager
        try:
            await ensure_async(manager.save(model, promoted.notebook_path))  # type: ignore[no-untyped-call]
        except web.HTTPError as exc:
            self.log.warning(
                "artifact %s: could not record its id in %s: %s",
                promoted.manifest.id,
                promoted.notebook_path,
                exc.log_message,
            )


class ArtifactHandler(ResolveHandler):
    """``GET /resolve/api/artifacts/{id}`` → the manifest."""

    @web.authenticated
    def get(self, art_id: str) -> None:
        try:
            manifest = self.gateway.artifacts.store.get(art_id)
        except ResolveError as exc:
            return self.fail(exc)
        self.answer(manifest.to_json())


class ArtifactContentHandler(ResolveHandler):
    """``GET /resolve/api/artifacts/{id}/content`` → the bytes, never live in the Jupyter origin:
    ``nosniff``, a sandbox CSP on everything, and HTML or SVG only as an attachment."""

    @web.authenticated
    async def get(self, art_id: str) -> None:
        try:
            manifest, path = self.gateway.artifacts.store.content_path(art_id)
        except ResolveError as exc:
            return self.fail(exc)
        media_type = manifest.media_type
        content_type = (
            f"{media_type}; charset=utf-8" if media_type.startswith(TEXTUAL) else media_type
        )
        self.set_header("Content-Type", content_type)
        self.set_header("X-Content-Type-Options", "nosniff")
        self.set_header("Content-Security-Policy", CONTENT_CSP)
        disposition = "attachment" if media_type in ACTIVE else "inline"
        filename = art_id + (mimetypes.guess_extension(media_type) or "")
        self.set_header("Content-Disposition", f'{disposition}; filename="{filename}"')
        self.set_header("Content-Length", str(manifest.size))
        try:
            with path.open("rb") as handle:
                for block in iter(lambda: handle.read(CHUNK), b""):
                    self.write(block)
                    await self.flush()
        except StreamClosedError:
            return
        self.finish(set_content_type=content_type)


ART_ID = r"(?P<art_id>[A-Za-z0-9_.-]{1,128})"

routes: list[tuple[str, Any]] = [
    (r"/resolve/api/artifacts", ArtifactsHandler),
    (rf"/resolve/api/artifacts/{ART_ID}", ArtifactHandler),
    (rf"/resolve/api/artifacts/{ART_ID}/content", ArtifactContentHandler),
]
