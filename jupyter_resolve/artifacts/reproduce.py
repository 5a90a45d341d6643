"""Reproduce an artifact (DESIGN 3.7): its producing calls (provenance.py) run again, in order,
in a fresh scratch kernel of a session of its own that starts from the recorded inputs (the
context files and snapshots of the original session, as recorded; the code, from the run log),
then the result's bytes are compared with the artifact's (compare.py).

The replay itself is a :class:`Replay` the gateway hands in (tools/replay.py: the same
executors as a run's calls, in a kernel started for the caller's permissions, DESIGN 10.1).
Nondeterminism is reported, not hidden: the fresh kernel's Python, packages and hash seed, and
what in the code gives another result each time. The last reproduction is kept beside the
artifact (and goes into its crate).
"""

from __future__ import annotations

import shutil
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from kernel_tools.schemas import get_tool

from ..contracts.bodies import ToolResult
from ..contracts.errors import BadRequest, Conflict, Forbidden
from ..contracts.permissions import RunPermissions
from ..scratch.workspace import Workspace
from .compare import compare, nondeterminism
from .provenance import Call, Provenance, iso
from .records import ArtifactManifest
from .sources import pick

MAX_REPRODUCTIONS = 2  # running at once on a server (each starts a kernel)


@dataclass
class Replayed:
    """What a replay gave: each call's result, the kernel's environment, the bytes of the
    scratch file asked for (None: not asked, or not there), notes."""

    results: list[ToolResult] = field(default_factory=list)
    environment: dict[str, Any] = field(default_factory=dict)
    file: bytes | None = None
    notes: list[str] = field(default_factory=list)


class Replay(Protocol):
    def refusal(self, names: Sequence[str], permissions: RunPermissions) -> str | None:
        """Why a caller with ``permissions`` may not run these tools (None: they may)."""

    async def replay(
        self,
        session_id: str,
        calls: Sequence[Call],
        permissions: RunPermissions,
        file: str | None = None,
        notebooks: Sequence[str | None] = (),
    ) -> Replayed:
        """Run ``calls`` in the session's fresh kernel, in order; read ``work/<file>`` after.
        ``notebooks[i]``: the notebook of call i's run, when it was a notebook chat's (its
        python read in that notebook's folder, and does so again)."""


def reproducible(manifest: ArtifactManifest, provenance: Provenance) -> None:
    """Conflict ``not_reproducible`` saying why, unless calls that ran in a scratch kernel
    made the artifact (a gateway tool's result, a web page or a notebook's, is not replayed)."""
    elsewhere = sorted(
        {
            s.call.name
            for s in provenance.steps
            if (get_tool(s.call.name) or {}).get("runs_in") != "kernel"
        }
    )
    if elsewhere:
        raise Conflict(
            f"artifact {manifest.id} cannot be reproduced: it comes from {', '.join(elsewhere)}, "
            "which does not run in a scratch kernel (its result depends on what is outside it)",
            code="not_reproducible",
        )
    if provenance.steps:
        return
    why = {
        "notebook": "it is an output of a notebook cell the person ran (re-run the notebook)",
        "kernel": "it is a value of the person's kernel",
        "file": "it is a file of the server root, made outside any recorded run",
    }.get(manifest.source.kind, "no recorded run made it")
    notes = f" ({'; '.join(provenance.notes)})" if provenance.notes else ""
    raise Conflict(
        f"artifact {manifest.id} cannot be reproduced: {why}{notes}", code="not_reproducible"
    )


def result_bytes(manifest: ArtifactManifest, replayed: Replayed) -> bytes | None:
    """The reproduction's counterpart of the artifact's bytes: the last call's result, picked
    as the promotion picked it, or the scratch file read after the replay."""
    if manifest.source.kind == "scratch":
        return replayed.file
    if not replayed.results:
        return None
    last = replayed.results[-1]
    bundle = last.mime if last.mime else {"text/plain": last.output}
    try:
        return pick(bundle, "the reproduced result", manifest.media_type)[1]
    except BadRequest:
        return None


def step_changes(provenance: Provenance, replayed: Replayed) -> list[dict[str, Any]]:
    """The steps that ended otherwise than recorded (ok then, failed now, or the reverse)."""
    changes = []
    for step, now in zip(provenance.steps, replayed.results, strict=False):
        then = bool((step.call.completed or {}).get("ok"))
        if then != now.ok:
            changes.append(
                {
                    "call_id": step.call.call_id,
                    "name": step.call.name,
                    "recorded_ok": then,
                    "ok": now.ok,
                    "output": now.output[:2000],
                }
            )
    return changes


def verdict(
    manifest: ArtifactManifest, expected: bytes, provenance: Provenance, replayed: Replayed
) -> dict[str, Any]:
    """The answer: ``{reproduced, ...}`` with what differs."""
    got = result_bytes(manifest, replayed)
    base: dict[str, Any] = {
        "artifact_id": manifest.id,
        "media_type": manifest.media_type,
        "expected_sha256": manifest.sha256,
        "steps": len(provenance.steps),
        "failed_steps": step_changes(provenance, replayed),
    }
    if got is None:
        missing = "the file" if manifest.source.kind == "scratch" else "the last call's result"
        found = {
            "reproduced": False,
            "identical": False,
            "difference": {"kind": "missing", "note": f"{missing} was not produced again"},
        }
    else:
        found = compare(expected, got, manifest.media_type)
    return {**base, **found}


async def reproduce(
    manifest: ArtifactManifest,
    expected: bytes,
    provenance: Provenance,
    replay: Replay,
    sessions_dir: Path,
    permissions: RunPermissions,
) -> dict[str, Any]:
    """Replay ``provenance``'s steps in a fresh session and compare with ``expected``."""
    reproducible(manifest, provenance)
    calls = [s.call for s in provenance.steps]
    refusal = replay.refusal(sorted({c.name for c in calls}), permissions)
    if refusal is not None:
        raise Forbidden(refusal, code="reproduce_not_permitted")
    session_id = f"repro-{manifest.id[4:16]}-{uuid.uuid4().hex[:8]}"
    workspace = Workspace(sessions_dir / session_id).create()
    started = time.time()
    notes = list(provenance.notes)
    try:
        original = provenance.steps[0].run.session_id
        if original:
            notes += workspace.copy_context(Workspace(sessions_dir / original))
        file = manifest.source.path if manifest.source.kind == "scratch" else None
        notebooks = [s.run.notebook for s in provenance.steps]
        replayed = await replay.replay(session_id, calls, permissions, file, notebooks)
    finally:
        _remove(workspace)
    result = verdict(manifest, expected, provenance, replayed)
    result["environment"] = replayed.environment
    result["nondeterminism"] = nondeterminism([c.code for c in calls if c.name == "python"])
    result["notes"] = notes + replayed.notes
    result["started_at"], result["ended_at"] = iso(started), iso(time.time())
    result["summary"] = summary(result)
    return result


def summary(result: dict[str, Any]) -> str:
    """One line for people."""
    steps = f"{result['steps']} call(s) run again"
    if result["reproduced"]:
        same = "the same bytes" if result.get("identical") else "the same image"
        return f"reproduced: {steps} gave {same}"
    kind = (result.get("difference") or {}).get("kind", "bytes")
    hints = result.get("nondeterminism") or []
    maybe = f"; the code may vary by itself: {', '.join(hints)}" if hints else ""
    return f"not reproduced: {steps}; the {kind} differs{maybe}"


def _remove(workspace: Workspace) -> None:
    """A reproduction's session leaves nothing behind."""
    shutil.rmtree(workspace.root, ignore_errors=True)
    shutil.rmtree(workspace.snapshots, ignore_errors=True)
    workspace.record_path.unlink(missing_ok=True)
