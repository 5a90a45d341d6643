"""Promotion: check the source, then store the bytes (DESIGN 3.7). Used by the REST handler and
by the agent's ``artifacts.promote`` trusted tool; nothing is written when a check fails."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernel_tools.schemas import get_tool, validate

from ..config import Resolve
from ..contracts.bodies import ToolCallRequest, ToolResult
from ..contracts.errors import ResolveError, TooManyRequests, Unavailable
from ..contracts.permissions import RunPermissions
from .export import CrateMaker
from .provenance import SessionRuns
from .records import AgentOrigin, ArtifactManifest, PromoteRequest
from .reproduce import MAX_REPRODUCTIONS, Replay, reproduce
from .sources import (
    Picked,
    kernel_value,
    notebook_output,
    project_file,
    record_artifact_id,
    scratch_file,
    tool_result,
)
from .store import ArtifactStore

TOOL = "artifacts.promote"


@dataclass
class Promoted:
    manifest: ArtifactManifest
    created: bool
    notebook: Any = None  # the notebook with the id recorded, to save; None: nothing to save
    notebook_path: str = ""


class Artifacts:
    """The store plus where sources live (server root, scratch sessions) and the size limit."""

    def __init__(
        self,
        store: ArtifactStore,
        *,
        root_dir: Path,
        sessions_dir: Path,
        config: Resolve,
        runs_dir: Path | None = None,
        on_promoted: list[Callable[[ArtifactManifest, bool], None]] | None = None,
        replay: Replay | None = None,
        session_runs: SessionRuns | None = None,
    ) -> None:
        # called with each promotion's manifest and whether it is new (the audit: audit/)
        self.on_promoted = on_promoted if on_promoted is not None else []
        self.store = store
        self.root_dir = root_dir
        self.sessions_dir = sessions_dir
        self.runs_dir = runs_dir if runs_dir is not None else sessions_dir.parent / "runs"
        self.config = config
        self.replay = replay  # reproductions' replays (tools/replay.py); None: not here
        self.crates = CrateMaker(
            store,
            self.runs_dir,
            sessions_dir,
            dict(config.orcids),
            config.crate_license,
            session_runs,
        )
        self._reproducing = 0

    async def reproduce(
        self, art_id: str, permissions: RunPermissions, by: str = "", by_name: str = ""
    ) -> dict[str, Any]:
        """Run the artifact's producing calls again and compare (reproduce.py); the result is
        kept as its last reproduction, naming who asked (``by``, the login; ``by_name``)."""
        if self.replay is None:
            raise Unavailable("reproducing needs the server's scratch kernels")
        manifest, blob = self.store.content_path(art_id)
        if self._reproducing >= MAX_REPRODUCTIONS:
            raise TooManyRequests(
                f"{MAX_REPRODUCTIONS} reproductions are running; try again when one ends",
                retry_after=10,
                code="busy",
            )
        self._reproducing += 1
        try:
            result = await reproduce(
                manifest,
                blob.read_bytes(),
                self.crates.provenance(manifest),
                self.replay,
                self.sessions_dir,
                permissions,
            )
        finally:
            self._reproducing -= 1
        result["by"], result["by_name"] = by, by_name or by
        self.store.save_reproduction(manifest.id, result)
        return result

    def promote(
        self,
        request: PromoteRequest,
        *,
        created_by: str,
        by_name: str = "",
        live: Any = None,
        owner: str | None = None,
    ) -> Promoted:
        """Promote what ``request`` names; a notebook comes back with the id in its output.
        ``created_by`` is the login, ``by_name`` the person's name to show, ``owner`` whose run
        or session it comes from (the caller checked they may). ``live``: the notebook's shared
        document content under real-time collaboration; the output is read from it and nothing
        comes back to save (the caller records the id in the room)."""
        who = (created_by, by_name, owner)
        limit = self.config.max_artifact_bytes
        if request.kind == "notebook":
            assert request.notebook is not None
            assert request.cell_id is not None and request.output_index is not None
            picked = notebook_output(
                self.root_dir, request.notebook, request.cell_id, request.output_index, limit, live
            )
            manifest, created = self._store(picked, request, *who)
            if live is not None:
                return Promoted(manifest, created, None, picked.path)
            changed = record_artifact_id(
                picked.notebook, request.cell_id, request.output_index, manifest.id
            )
            return Promoted(manifest, created, picked.notebook if changed else None, picked.path)
        if request.bundle is not None:
            picked_value = kernel_value(
                request.bundle,
                wanted=request.media_type,
                label=request.label,
                notebook=request.notebook,
                cell_id=request.cell_id,
                execution_count=request.execution_count,
                max_bytes=limit,
            )
            return Promoted(*self._store(picked_value, request, *who))
        if request.run_id is not None and request.call_id is not None:
            picked_result = tool_result(
                self.runs_dir, request.run_id, request.call_id, request.media_type, limit
            )
            return Promoted(*self._store(picked_result, request, *who))
        if request.file is not None:
            picked_file = project_file(self.root_dir, request.file, limit)
            return Promoted(*self._store(picked_file, request, *who))
        assert request.session_id is not None and request.path is not None
        scratch = scratch_file(self.sessions_dir, request.session_id, request.path, limit)
        return Promoted(*self._store(scratch, request, *who))

    def _store(
        self, picked: Picked, request: PromoteRequest, by: str, by_name: str, owner: str | None
    ) -> tuple[ArtifactManifest, bool]:
        manifest, created = self.store.promote(
            picked.data,
            picked.media_type,
            picked.source,
            title=request.title,
            note=request.note,
            created_by=by,
            created_by_name=by_name,
            owner=owner,
        )
        self._promoted(manifest, created)
        return manifest, created

    def _promoted(self, manifest: ArtifactManifest, created: bool) -> None:
        for promoted in self.on_promoted:
            promoted(manifest, created)

    def promote_for_agent(
        self, request: ToolCallRequest, *, session_id: str, run_seq: int, owner: str | None
    ) -> ToolResult:
        """``artifacts.promote {path, title?, note?}``: a file of the run's own session, the
        run's ``owner``'s."""
        schema = get_tool(TOOL)
        problems = validate(schema["parameters"], request.arguments) if schema else []
        if problems:
            return ToolResult(ok=False, output=f"{TOOL}: " + "; ".join(problems))
        args = request.arguments
        try:
            picked = scratch_file(
                self.sessions_dir, session_id, args["path"], self.config.max_artifact_bytes
            )
            manifest, created = self.store.promote(
                picked.data,
                picked.media_type,
                picked.source,
                title=args.get("title", ""),
                note=args.get("note", ""),
                created_by="agent",
                agent=AgentOrigin(run_id=request.run_id, call_id=request.call_id, run_seq=run_seq),
                owner=owner,
            )
        except ResolveError as exc:
            return ToolResult(ok=False, output=f"{TOOL}: {exc.message}")
        self._promoted(manifest, created)
        state = "promoted" if created else "already promoted"
        return ToolResult(
            ok=True,
            output=f"{state} '{picked.source.path}' as artifact {manifest.id} "
            f"({manifest.media_type}, {manifest.size} bytes, sha256 {manifest.sha256})",
        )
