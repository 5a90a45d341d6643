"""The scratch kernels of all sessions (kernels.py: one of them; remote.py: one on the
Jupyter gateway, with ``c.Resolve.scratch_kernels = "gateway"``): started on first use from the
configured kernelspec, shut down when idle."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from typing import Any

from jupyter_client.kernelspec import KernelSpecManager

from ..contracts.permissions import RunPermissions
from . import sandbox as scratch_sandbox
from .kernels import ScratchKernel
from .kernelspec import KernelChoice, ScratchKernelUnavailable, inspect_kernelspec
from .workspace import Workspace


class ScratchKernels:
    """The scratch kernels of all sessions, started on first use, shut down when idle."""

    def __init__(
        self,
        sessions_dir: Path,
        server_root: Path,
        log: logging.Logger,
        sandbox: str = "",
        network: bool = False,
        kernel_name: str = "python3",
        where: str = "local",
    ) -> None:
        # on the gateway the isolation is the cluster's: "gateway" stands for the sandbox
        self.sandbox = "gateway" if where == "gateway" else sandbox
        self.where = where
        self.server_kernels: Any = None  # the server's kernel manager (set by the extension)
        self.network = network
        self.kernel_name = kernel_name
        self._choice: KernelChoice | None = None  # kept once usable; a problem is looked at again
        self._logged_problem: str | None = None
        self.sessions_dir = sessions_dir
        self.server_root = server_root
        self.log = log
        self.kernels: dict[str, ScratchKernel] = {}
        self._starting: dict[str, asyncio.Lock] = {}

    def workspace(self, session_id: str, create: bool = True) -> Workspace:
        """The session's workspace; its folders made unless ``create`` is False (a run start
        that puts nothing in: the kernel makes them when it starts)."""
        workspace = Workspace(self.sessions_dir / session_id)
        return workspace.create() if create else workspace

    def kernel_choice(self) -> KernelChoice:
        """The configured kernelspec as found; one with a problem is looked up again next time,
        so installing it fixes the next call without a restart."""
        if self._choice is not None:
            return self._choice
        if self.where == "gateway":  # the gateway's kernelspecs, not this machine's
            return self._gateway_choice()
        choice = inspect_kernelspec(self.kernel_name, KernelSpecManager(), self.log)
        if choice.problem is None:
            self._choice = choice
        elif choice.problem != self._logged_problem:  # once, not at every health request
            self._logged_problem = choice.problem
            self.log.error("jupyter-resolve: %s", choice.problem)
        return choice

    def _gateway_choice(self) -> KernelChoice:
        from .remote import gateway_problem  # jupyter_server's gateway: only in this mode

        problem = gateway_problem(self.server_kernels)
        choice = KernelChoice(self.kernel_name, "gateway", local=False, problem=problem)
        if problem is None:
            self._choice = choice
        elif problem != self._logged_problem:
            self._logged_problem = problem
            self.log.error("jupyter-resolve: %s", problem)
        return choice

    def describe(self) -> dict[str, Any]:
        """The ``scratch_kernel`` entry of ``/resolve/api/health``."""
        described = self.kernel_choice().describe(self.sandbox)
        described["where"] = self.where
        described["isolation"] = scratch_sandbox.describe(self.sandbox)["label"]
        return described

    @property
    def isolated(self) -> bool:
        """Agent code cannot reach the server's files or processes: bubblewrap, or a kernel on
        the gateway's cluster. Otherwise it runs as the server's user (DESIGN 10.1)."""
        return self.sandbox in ("bwrap", "gateway")

    def _new_kernel(
        self, session_id: str, choice: KernelChoice, permissions: RunPermissions
    ) -> ScratchKernel:
        if self.where == "gateway":
            from .remote import GatewayScratchKernel

            return GatewayScratchKernel(
                self.workspace(session_id),
                self.server_root,
                self.log,
                self.server_kernels,
                choice,
                permissions,
            )
        return ScratchKernel(
            self.workspace(session_id),
            self.server_root,
            self.log,
            sandbox=self.sandbox,
            network=self.network,
            state_dir=self.sessions_dir.parent,
            choice=choice,
            permissions=permissions,
        )

    async def get(self, session_id: str, permissions: RunPermissions) -> ScratchKernel:
        """The session's kernel for a run with ``permissions``. A kernel is started for one set
        of permissions (what its sandbox mounts follows them); a run with other permissions gets
        a new kernel, so nothing an earlier run mounted or loaded (its variables) reaches it."""
        lock = self._starting.setdefault(session_id, asyncio.Lock())
        async with lock:
            kernel = self.kernels.get(session_id)
            if kernel is not None and kernel.permissions != permissions:
                self.log.info(
                    "scratch kernel of session %s: a run with other permissions; a new kernel",
                    session_id,
                )
                del self.kernels[session_id]
                async with kernel._lock:  # the call it is running ends first
                    await kernel.shutdown()
                kernel = None
            if kernel is None:
                choice = self.kernel_choice()
                if choice.problem is not None:
                    raise ScratchKernelUnavailable(choice.problem)
                kernel = self._new_kernel(session_id, choice, permissions)
                await kernel.start()
                self.kernels[session_id] = kernel
            return kernel

    async def bring_back(self, session_id: str, path: str, limit: int) -> str | None:
        """Before a scratch file is promoted: on the gateway, copy ``work/<path>`` from the
        session's kernel to its ``work/`` here; None, or why it could not be (locally, and for
        ``context/`` files, which are here already: None)."""
        if self.where != "gateway" or path.replace("\\", "/").startswith("context/"):
            return None
        kernel = self.kernels.get(session_id)
        if kernel is None:
            return (
                "the session has no scratch kernel on the gateway now (none started, or it was "
                "shut down when idle, taking its work/ along)"
            )
        from .remote import GatewayScratchKernel

        assert isinstance(kernel, GatewayScratchKernel)
        return await kernel.bring_back(path, limit)

    async def release(self, session_id: str) -> None:
        """Shut down the session's kernel now (a reproduction's, once it is done)."""
        kernel = self.kernels.pop(session_id, None)
        self._starting.pop(session_id, None)
        if kernel is not None:
            async with kernel._lock:
                await kernel.shutdown()

    async def cull(self, idle_seconds: float) -> None:
        """Shut down kernels idle for longer than ``idle_seconds``; their files stay on disk."""
        now = time.monotonic()
        for session_id, kernel in list(self.kernels.items()):
            if now - kernel.last_used > idle_seconds and not kernel._lock.locked():
                self.log.info("shutting down idle scratch kernel of session %s", session_id)
                del self.kernels[session_id]
                await kernel.shutdown()

    async def stop(self) -> None:
        for kernel in list(self.kernels.values()):
            await kernel.shutdown()
        self.kernels.clear()


__all__ = ["ScratchKernels"]
