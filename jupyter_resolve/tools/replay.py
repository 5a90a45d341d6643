"""Replaying an artifact's recorded calls for a reproduction (artifacts/reproduce.py): the same
executors a run's calls use, in a fresh scratch kernel of the reproduction's own session,
started for the caller's permissions and shut down at the end. A caller may replay only what a
run of theirs could call (DESIGN 10.1): unsandboxed, ``python`` and ``shell`` need contents read
and write and kernels execute."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from kernel_tools.schemas import get_tool

from ..artifacts.provenance import Call
from ..artifacts.reproduce import Replayed
from ..artifacts.sources import inside
from ..contracts.bodies import ToolResult
from ..contracts.errors import ResolveError
from ..contracts.permissions import RunPermissions
from ..scratch.kernelspec import ScratchKernelUnavailable
from ..scratch.pool import ScratchKernels
from .kernel import notebook_folder_of, run_bridged, run_python

MAX_PACKAGES = 300

# Run after the calls, in the same kernel: what it is, and the versions of every installed
# distribution it has imported (the kernel's own and the code's).
ENVIRONMENT_PROBE = """
def __resolve_environment():
    import importlib.metadata as md, json, os, platform, sys
    names = {m.split(".")[0] for m in list(sys.modules)}
    found = {}
    for module, dists in md.packages_distributions().items():
        if module in names:
            for dist in dists:
                try:
                    found[dist] = md.version(dist)
                except Exception:
                    pass
    print(json.dumps({
        "python": sys.version.split()[0] + " (" + platform.python_implementation() + ")",
        "platform": platform.platform(),
        "seeds": {"PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", "random")},
        "packages": dict(sorted(found.items())[:MAX_PACKAGES]),
    }))
__resolve_environment(); del __resolve_environment
""".replace("MAX_PACKAGES", str(MAX_PACKAGES))


class Replayer:
    """:class:`~jupyter_resolve.artifacts.reproduce.Replay` over the server's scratch kernels."""

    def __init__(self, kernels: ScratchKernels, timeout: float, max_bytes: int) -> None:
        self.kernels = kernels
        self.timeout = timeout
        self.max_bytes = max_bytes

    def refusal(self, names: Sequence[str], permissions: RunPermissions) -> str | None:
        missing: set[str] = set()
        for name in names:
            schema = get_tool(name) or {}
            needs = list(schema.get("needs", []))
            if not self.kernels.isolated:
                needs += schema.get("needs_unsandboxed", [])
            missing.update(n for n in needs if not getattr(permissions, n, False))
        if not missing:
            return None
        return (
            f"reproducing runs {', '.join(names)} again, which needs you may "
            f"{', '.join(sorted(m.replace('_', ' ') for m in missing))}"
            + ("" if self.kernels.isolated else " (scratch kernels are not sandboxed)")
        )

    async def replay(
        self,
        session_id: str,
        calls: Sequence[Call],
        permissions: RunPermissions,
        file: str | None = None,
        notebooks: Sequence[str | None] = (),
    ) -> Replayed:
        replayed = Replayed()
        folders = self._folders(calls, notebooks, permissions, replayed.notes)
        try:
            kernel = await self.kernels.get(session_id, permissions)
            for call, folder in zip(calls, folders, strict=True):
                replayed.results.append(await self._call(kernel, call, folder))
            probe = await kernel.execute(ENVIRONMENT_PROBE, 60)
            replayed.environment = _environment(probe.stdout)
            if file is not None:
                replayed.file = await self._file(session_id, file, replayed.notes)
        except ScratchKernelUnavailable as exc:
            replayed.notes.append(f"no scratch kernel: {exc}")
        finally:
            await self.kernels.release(session_id)
        return replayed

    def _folders(
        self,
        calls: Sequence[Call],
        notebooks: Sequence[str | None],
        permissions: RunPermissions,
        notes: list[str],
    ) -> list[str | None]:
        """Where each python call reads: its notebook's folder, as in the run (for a caller who
        may read contents, as there), else ``work/``."""
        asked = [
            notebooks[n] if n < len(notebooks) and call.name == "python" else None
            for n, call in enumerate(calls)
        ]
        if not any(asked):
            return [None] * len(calls)
        if not permissions.contents_read:
            notes.append("python ran in work/: you may not read the files beside the notebook")
            return [None] * len(calls)
        folders = [
            None if n is None else notebook_folder_of(self.kernels.server_root, n) for n in asked
        ]
        gone = sorted({n for n, f in zip(asked, folders, strict=True) if n and f is None})
        read = sorted({n for n, f in zip(asked, folders, strict=True) if n and f})
        if gone:
            notes.append(f"the folder of {', '.join(gone)} is gone: its python ran in work/")
        if read:
            notes.append(
                f"python read beside {', '.join(read)}, as in the run: the person's files as "
                "they are now, not as they were"
            )
        return folders

    async def _call(self, kernel: Any, call: Call, folder: str | None = None) -> ToolResult:
        if call.name == "python":
            return await run_python(kernel, call.code, self.timeout, None, folder)
        arguments = dict(call.arguments)
        if call.name == "shell":
            arguments.setdefault("timeout", self.timeout)
        return await run_bridged(kernel, call.name, arguments, self.timeout)

    async def _file(self, session_id: str, path: str, notes: list[str]) -> bytes | None:
        problem = await self.kernels.bring_back(session_id, path, self.max_bytes)
        if problem is not None:
            notes.append(problem)
            return None
        work = self.kernels.workspace(session_id, create=False).work
        try:
            target = inside(work, path, "path", "the reproduction's work/")
            if target.stat().st_size > self.max_bytes:
                notes.append(f"work/{path} is over c.Resolve.max_artifact_bytes")
                return None
            return target.read_bytes()
        except ResolveError as exc:
            notes.append(exc.message)
        except OSError as exc:
            notes.append(f"work/{path} cannot be read ({exc.strerror or exc})")
        return None


def _environment(stdout: str) -> dict[str, Any]:
    for line in reversed(stdout.splitlines()):
        try:
            found = json.loads(line)
        except ValueError:
            continue
        if isinstance(found, dict):
            return found
    return {}
