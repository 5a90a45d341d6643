"""The artifacts API under /resolve/api/artifacts (DESIGN 3.7): promote, list, get, content; the
provenance of artifacts: an RO-Crate of one, of a session's or a notebook's, and reproducing one
(its producing calls run again, the digests compared)."""

from __future__ import annotations

import mimetypes
from typing import IO, Any

from jupyter_core.utils import ensure_async
from tornado import web
from tornado.iostream import StreamClosedError

from ..contracts.errors import BadMediaType, BadRequest, NotFound
from ..contracts.ids import check_id, optional_id
from ..contracts.ownership import session_owner
from ..contracts.pathargs import check_path_text
from ..handlers.base import ResolveHandler, authorized
from ..rooms import live_notebook, record_artifact_in_room
from ..runs.manager import RunManager
from .export import zip_file
from .media import normalize_media_type, served_as
from .records import ArtifactManifest, PromoteRequest
from .service import Artifacts, Promoted

# Whatever is served, it runs in a sandbox with an opaque origin: no script, no Jupyter cookies.
CONTENT_CSP = "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'"
CHUNK = 1 << 16


def display_name(user: Any) -> str:
    """The person's name to show (the login may be a random hex string under token auth)."""
    return str(getattr(user, "display_name", None) or getattr(user, "name", None) or "")


class ArtifactsAPIHandler(ResolveHandler):
    """Base: the artifact store and its promotion, built on first use."""

    @property
    def artifacts(self) -> Artifacts:
        artifacts: Artifacts = self.service("artifacts")()
        return artifacts

    @property
    def runs(self) -> RunManager:
        runs: RunManager = self.service("runs")
        return runs

    async def seen(self, art_id: str) -> ArtifactManifest:
        """The artifact, if this person may see it: one promoted from a run or a scratch
        session is its owner's (DESIGN 10.2); else a 404 as for one that is not there."""
        manifest = self.artifacts.store.get(check_id("art_id", art_id))
        (await self.viewer()).check(manifest.owner, f"artifact '{art_id}'")
        return manifest

    async def session_seen(self, session_id: str) -> None:
        owner = session_owner(self.runs.session_rows(check_id("session", session_id)))
        (await self.viewer()).check(owner, f"session '{session_id}'")


class ArtifactsHandler(ArtifactsAPIHandler):
    """``POST /resolve/api/artifacts`` (promote) and ``GET`` (list, filtered)."""

    @web.authenticated
    @authorized("write")
    async def post(self) -> None:
        request = self.parse(PromoteRequest)
        if request.notebook is not None or request.file is not None:
            await self.require("read", "contents")  # it reads (or names) a notebook or file
        owner = await self._owner(request)
        room = None
        if request.kind == "notebook" and request.notebook is not None:
            room = await live_notebook(self.serverapp, request.notebook)
        promoted = self.artifacts.promote(
            request,
            created_by=self._user_name(),
            by_name=self._display_name(),
            live=room.get() if room is not None else None,
            owner=owner,
        )
        if room is not None:
            await self._record_in_room(room, request, promoted)
        else:
            await self._save_notebook(promoted)
        self.set_status(201 if promoted.created else 200)
        self.answer(promoted.manifest.to_json())

    async def _owner(self, request: PromoteRequest) -> str | None:
        """Whose run or scratch session ``request`` promotes from, once the caller may decide
        for it (its owner, or the Authorizer's execute on other people's); None for a person's
        own notebook output, file or value."""
        if request.run_id is not None:
            try:
                owner = self.runs.get(request.run_id).owner
            except NotFound:
                return None  # the promotion says so, as it says for a call not there
            viewer = await self.viewer(deciding=True)
            if not viewer.sees(owner):  # answered as for a run that is not there
                raise NotFound(f"run_id: no run '{request.run_id}'", code="unknown_run")
            viewer.check(owner, f"run '{request.run_id}'", deciding=True)
            return owner
        if request.session_id is None:
            return None
        owner = session_owner(self.runs.session_rows(request.session_id))
        what = f"session '{request.session_id}'"
        (await self.viewer(deciding=True)).check(owner, what, deciding=True)
        return owner

    @web.authenticated
    @authorized("read")
    async def get(self) -> None:
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
        viewer = await self.viewer()
        self.answer({"artifacts": [m.to_json() for m in found if viewer.sees(m.owner)]})

    def _user_name(self) -> str:
        user = self.current_user
        name = getattr(user, "username", None) or getattr(user, "name", None)
        return str(name or user or "")

    def _display_name(self) -> str:
        return display_name(self.current_user) or self._user_name()

    async def _may_record(self, promoted: Promoted) -> bool:
        """Whether the artifact's id may go into its notebook: the person may write contents."""
        if await self.allowed("write", "contents"):
            return True
        self.log.warning(
            "artifact %s: its id is not recorded in %s (the user may not write contents)",
            promoted.manifest.id,
            promoted.notebook_path,
        )
        return False

    async def _record_in_room(self, room: Any, request: PromoteRequest, promoted: Promoted) -> None:
        """Record the artifact id through the notebook's shared document (DESIGN 9.2): never a
        save under a live room, which would overwrite what people are typing."""
        assert request.cell_id is not None and request.output_index is not None
        if not await self._may_record(promoted):
            return
        record_artifact_in_room(room, request.cell_id, request.output_index, promoted.manifest.id)

    async def _save_notebook(self, promoted: Promoted) -> None:
        """Record the artifact id in the output's metadata, through the contents manager (no
        collaboration room is open for the notebook: nobody else is editing it)."""
        if promoted.notebook is None or not await self._may_record(promoted):
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
    async def get(self, art_id: str) -> None:
        self.answer((await self.seen(art_id)).to_json())


class ArtifactContentHandler(ArtifactsAPIHandler):
    """``GET /resolve/api/artifacts/{id}/content`` → the bytes, never live in the Jupyter origin:
    ``nosniff``, a sandbox CSP on everything, and inline only a few passive types (every HTML,
    XML or SVG type is an attachment, see :mod:`jupyter_resolve.artifacts.media`)."""

    @web.authenticated
    @authorized("read")
    async def get(self, art_id: str) -> None:
        await self.seen(art_id)
        manifest, path = self.artifacts.store.content_path(art_id)
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


class CrateDownload(ArtifactsAPIHandler):
    """Base: answer a crate as a zip download."""

    async def send_zip(self, content: Any, filename: str) -> None:
        archive: IO[bytes] = zip_file(content)
        try:
            self.set_header("Content-Type", "application/zip")
            self.set_header("X-Content-Type-Options", "nosniff")
            self.set_header("Content-Disposition", f'attachment; filename="{filename}"')
            for block in iter(lambda: archive.read(CHUNK), b""):
                self.write(block)
                await self.flush()
        except StreamClosedError:
            return
        finally:
            archive.close()
        self.finish()


class ArtifactCrateHandler(CrateDownload):
    """``GET /resolve/api/artifacts/{id}/crate`` → the artifact's RO-Crate (a zip)."""

    @web.authenticated
    @authorized("read")
    async def get(self, art_id: str) -> None:
        await self.seen(art_id)
        content = self.artifacts.crates.artifact_crate(art_id)
        await self.send_zip(content, f"{art_id}.crate.zip")


class GroupCrateHandler(CrateDownload):
    """``GET /resolve/api/artifacts/crate?session=ID`` or ``?notebook=PATH`` → the crate of a
    session's or a notebook's promoted artifacts (a notebook's with its cells' authorship)."""

    @web.authenticated
    @authorized("read")
    async def get(self) -> None:
        session = self.get_query_argument("session", None)
        notebook = self.get_query_argument("notebook", None)
        if (session is None) == (notebook is None):
            raise BadRequest("give one of ?session=ID or ?notebook=PATH")
        if session is not None:
            await self.session_seen(session)
            content = self.artifacts.crates.session_crate(session)
            await self.send_zip(content, f"{session}.crate.zip")
            return
        assert notebook is not None
        await self.require("read", "contents")  # it reads the notebook
        path = self._notebook_path(notebook)
        model = await self._notebook_content(path)
        content = self.artifacts.crates.notebook_crate(path, model)
        await self.send_zip(content, f"{path.rsplit('/', 1)[-1]}.crate.zip")

    def _notebook_path(self, notebook: str) -> str:
        try:
            check_path_text(notebook)
        except ValueError as exc:
            raise BadRequest(f"notebook: {exc}") from exc
        return notebook.replace("\\", "/").strip("/")

    async def _notebook_content(self, path: str) -> dict[str, Any] | None:
        """The notebook through the contents manager (its checks apply); None when it is not
        there (its artifacts still export)."""
        manager = self.contents_manager
        try:
            model = await ensure_async(
                manager.get(path, content=True, type="notebook")  # type: ignore[no-untyped-call]
            )
        except web.HTTPError as exc:
            if exc.status_code == 404:
                return None
            raise BadRequest(f"notebook: '{path}' cannot be read ({exc.log_message})") from exc
        content = model.get("content")
        return dict(content) if content is not None else None


class ReproduceHandler(ArtifactsAPIHandler):
    """``POST /resolve/api/artifacts/{id}/reproduce`` runs its producing calls again and
    compares: ``{reproduced, ...}``; ``GET`` the last reproduction."""

    @web.authenticated
    @authorized("execute")
    async def post(self, art_id: str) -> None:
        # like a run's: the code runs with what the caller may do (DESIGN 10.1)
        permissions = await self.run_permissions()
        by, name = self.run_owner() or "", display_name(self.current_user)
        await self.seen(art_id)
        result = await self.artifacts.reproduce(art_id, permissions, by, name)
        self.answer(result)

    @web.authenticated
    @authorized("read")
    async def get(self, art_id: str) -> None:
        manifest = await self.seen(art_id)
        result = self.artifacts.store.reproduction(manifest.id)
        if result is None:
            raise NotFound(f"artifact {manifest.id} was never reproduced", code="no_reproduction")
        self.answer(result)
