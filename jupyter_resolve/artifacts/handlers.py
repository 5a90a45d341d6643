"""The artifacts API under /resolve/api/artifacts (DESIGN 3.7): promote, list, get, content."""

from __future__ import annotations

import mimetypes
from typing import Any

from jupyter_core.utils import ensure_async
from tornado import web
from tornado.iostream import StreamClosedError

from ..contracts.errors import BadMediaType, BadRequest
from ..contracts.ids import check_id, optional_id
from ..handlers.base import ResolveHandler, authorized
from ..rooms import live_notebook, record_artifact_in_room
from .media import normalize_media_type, served_as
from .records import PromoteRequest
from .service import Artifacts, Promoted

# Whatever is served, it runs in a sandbox with an opaque origin: no script, no Jupyter cookies.
CONTENT_CSP = "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'"
CHUNK = 1 << 16


class ArtifactsAPIHandler(ResolveHandler):
    """Base: the artifact store and its promotion, built on first use."""

    @property
    def artifacts(self) -> Artifacts:
        artifacts: Artifacts = self.service("artifacts")()
        return artifacts


class ArtifactsHandler(ArtifactsAPIHandler):
    """``POST /resolve/api/artifacts`` (promote) and ``GET`` (list, filtered)."""

    @web.authenticated
    @authorized("write")
    async def post(self) -> None:
        request = self.parse(PromoteRequest)
        if request.notebook is not None or request.file is not None:
            await self.require("read", "contents")  # it reads (or names) a notebook or file
        room = None
        if request.kind == "notebook" and request.notebook is not None:
            room = await live_notebook(self.serverapp, request.notebook)
        promoted = self.artifacts.promote(
            request,
            created_by=self._user_name(),
            by_name=self._display_name(),
            live=room.get() if room is not None else None,
        )
        if room is not None:
            await self._record_in_room(room, request, promoted)
        else:
            await self._save_notebook(promoted)
        self.set_status(201 if promoted.created else 200)
        self.answer(promoted.manifest.to_json())

    @web.authenticated
    @authorized("read")
    def get(self) -> None:
        media_type = self.get_query_argument("media_type", None) or None
        if media_type is not None:
            try:
                media_type = normalize_media_type(media_type)
            except BadMediaType as exc:
                raise BadRequest(f"media_type: {exc}") from exc
        found = self.artifacts.store.find(
            notebook=self.get_query_argument("notebook", None) or None,
            media_type=media_type,
            run_id=optional_id("run", self.get_query_argument("run", None)),
        )
        self.answer({"artifacts": [m.to_json() for m in found]})

    def _user_name(self) -> str:
        user = self.current_user
        name = getattr(user, "username", None) or getattr(user, "name", None)
        return str(name or user or "")

    def _display_name(self) -> str:
        """The person's name to show (the login may be a random hex string under token auth)."""
        user = self.current_user
        name = getattr(user, "display_name", None) or getattr(user, "name", None)
        return str(name or self._user_name())

    async def _record_in_room(self, room: Any, request: PromoteRequest, promoted: Promoted) -> None:
        """Record the artifact id through the notebook's shared document (DESIGN 9.2): never a
        save under a live room, which would overwrite what people are typing."""
        assert request.cell_id is not None and request.output_index is not None
        if not await self.allowed("write", "contents"):
            self.log.warning(
                "artifact %s: its id is not recorded in %s (the user may not write contents)",
                promoted.manifest.id,
                promoted.notebook_path,
            )
            return
        record_artifact_in_room(room, request.cell_id, request.output_index, promoted.manifest.id)

    async def _save_notebook(self, promoted: Promoted) -> None:
        """Record the artifact id in the output's metadata, through the contents manager (no
        collaboration room is open for the notebook: nobody else is editing it)."""
        if promoted.notebook is None:
            return
        if not await self.allowed("write", "contents"):
            self.log.warning(
                "artifact %s: its id is not recorded in %s (the user may not write contents)",
                promoted.manifest.id,
                promoted.notebook_path,
            )
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


class ArtifactHandler(ArtifactsAPIHandler):
    """``GET /resolve/api/artifacts/{id}`` → the manifest."""

    @web.authenticated
    @authorized("read")
    def get(self, art_id: str) -> None:
        manifest = self.artifacts.store.get(check_id("art_id", art_id))
        self.answer(manifest.to_json())


class ArtifactContentHandler(ArtifactsAPIHandler):
    """``GET /resolve/api/artifacts/{id}/content`` → the bytes, never live in the Jupyter origin:
    ``nosniff``, a sandbox CSP on everything, and inline only a few passive types (every HTML,
    XML or SVG type is an attachment, see :mod:`jupyter_resolve.artifacts.media`)."""

    @web.authenticated
    @authorized("read")
    async def get(self, art_id: str) -> None:
        manifest, path = self.artifacts.store.content_path(check_id("art_id", art_id))
        content_type, disposition = served_as(manifest.media_type)
        self.set_header("Content-Type", content_type)
        self.set_header("X-Content-Type-Options", "nosniff")
        self.set_header("Content-Security-Policy", CONTENT_CSP)
        extension = mimetypes.guess_extension(content_type.split(";")[0]) or ""
        filename = art_id + extension
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
