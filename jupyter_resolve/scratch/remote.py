"""A scratch kernel on the Jupyter gateway the server's kernels use (``c.Resolve.scratch_kernels
= "gateway"``, issue 39.3; DESIGN 7): the agent's Python runs on the cluster.

It is started through the server's kernel manager (a ``GatewayMappingKernelManager``) with a
kernel manager of its own, so it is not listed among the person's notebook kernels, and with an
environment this module chooses: no token, no key, nothing of the server's environment but the
gateway's placement variables (``FORWARDED_ENV``). Everything reaches it over the kernel
protocol, never a shared disk:

- the bridge: imported when the kernel's image has jupyter-resolve, else shipped as source text
  (bootstrap.py's shipping cell, loaded from memory: nothing of ours has to be installed there);
- its workspace: a temporary folder in the kernel (``work/``, its cwd, and ``context/``);
- the context files: sent as base64 chunks from the server's ``context/`` before each call
  whose context changed (context_cells.py), each checked against its sha256 there, 0400;
- the tool calls: cells on the shell channel (no direct channel: DESIGN 3.3).

Its isolation is the cluster's: bubblewrap wraps only kernels launched on this machine.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path, PurePosixPath
from typing import Any

from jupyter_server.gateway.gateway_client import gateway_request
from jupyter_server.gateway.managers import GatewayKernelManager, GatewayMappingKernelManager
from jupyter_server.utils import url_path_join
from tornado.escape import json_decode, json_encode, url_escape

from ..contracts.permissions import RunPermissions
from ..kernel_gateway import gateway_client
from . import bootstrap, context_cells
from .iopub import Execution, KernelMessage
from .kernels import OnOutput, ScratchKernel
from .kernelspec import KernelChoice, ScratchKernelUnavailable
from .workspace import Workspace

# What an Enterprise Gateway reads to place a kernel (its user and namespace); never a secret.
FORWARDED_ENV = ("KERNEL_USERNAME", "KERNEL_NAMESPACE")


def gateway_problem(server_kernels: Any) -> str | None:
    """Why scratch kernels cannot run on the gateway with this server's kernel manager."""
    if isinstance(server_kernels, GatewayMappingKernelManager):
        return None
    kind = type(server_kernels).__name__ if server_kernels is not None else "none"
    return (
        "scratch kernels: c.Resolve.scratch_kernels = 'gateway' needs the server's kernels on a "
        f"Jupyter gateway (GatewayClient.url), but its kernel manager is {kind}; set "
        "GatewayClient.url, or c.Resolve.scratch_kernels = 'local'"
    )


class ScratchGatewayKernelManager(GatewayKernelManager):
    """A gateway kernel started with exactly the environment it is given: the stock manager
    adds every ``KERNEL_*`` variable of the server's own environment, tokens included."""

    async def start_kernel(self, **kwargs: Any) -> None:  # type: ignore[override]
        body = json_encode({"name": kwargs.get("kernel_name", "python3"), "env": kwargs["env"]})
        response = await gateway_request(
            self.kernels_url,
            method="POST",
            headers={"Content-Type": "application/json"},
            body=body,
        )
        self.kernel = json_decode(response.body)
        self.kernel_id = self.kernel["id"]
        self.kernel_url = url_path_join(self.kernels_url, url_escape(str(self.kernel_id)))
        self.log.info("jupyter-resolve: scratch kernel %s started on the gateway", self.kernel_id)


def remote_environment() -> dict[str, str]:
    """What the gateway is asked to put in the kernel's environment."""
    env = {k: os.environ[k] for k in FORWARDED_ENV if k in os.environ}
    env["KERNEL_RESOLVE_SCRATCH"] = "1"  # says what the kernel is, to the cluster's admin
    return env


NOT_BOUND = (
    "[python runs on the gateway's cluster, in its own work/: the notebook's folder is on the "
    "server and not reachable there; notebook_read, notebook_variables and snapshot_variable "
    "reach the person's notebook]"
)


def read_notebook_here(
    session_dir: Path, server_root: Path, arguments: dict[str, Any]
) -> dict[str, Any]:
    """``notebook_read`` in the server (kernel_tools' own code, read-only, confined to the
    server root; hidden paths refused as the contents manager refuses them)."""
    path = arguments.get("path")
    if not isinstance(path, str):
        return {"ok": False, "output": "notebook_read: 'path' must be a string", "mime": None}
    if any(part.startswith(".") for part in PurePosixPath(path).parts if part != ".."):
        return {"ok": False, "output": f"notebook_read: {path!r} is hidden", "mime": None}
    from kernel_tools.notebook import notebook_read
    from kernel_tools.paths import Workspace as ToolWorkspace

    tools = ToolWorkspace(str(session_dir), str(server_root))
    return notebook_read(tools, path).to_json()


# What the gateway's websocket says of a kernel that died: its own restarter started it again
# (same id, empty namespace, no bridge), or it is gone.
LOST = ("restarting", "dead")


class GatewayScratchKernel(ScratchKernel):
    """One session's scratch kernel on the gateway; see the module's docstring."""

    def __init__(
        self,
        workspace: Workspace,
        server_root: Path,
        log: logging.Logger,
        server_kernels: GatewayMappingKernelManager,
        choice: KernelChoice,
        permissions: RunPermissions | None = None,
    ) -> None:
        super().__init__(
            workspace, server_root, log, sandbox="gateway", choice=choice, permissions=permissions
        )
        self.server_kernels = server_kernels
        self.remote_session: str | None = None  # the workspace's folder in the kernel
        self._sent: dict[str, str] = {}  # context file -> sha256, as the kernel has it
        self._notes: list[str] = []  # what the last sync could not send, for the model
        self._lost = False  # the gateway said the kernel died (restarted empty, or dead)

    async def start(self) -> None:
        self.workspace.create()
        self._reads_from, self._loaded, self._sent = None, {}, {}
        self._lost = False
        km = ScratchGatewayKernelManager(parent=self.server_kernels, log=self.log)  # type: ignore[no-untyped-call]
        self.km = km  # the kernel protocol's manager, on the gateway
        try:
            await km.start_kernel(kernel_name=self.choice.name, env=remote_environment())
            client = gateway_client(km)
            await client.start_channels()
            self.client = client
            await client.wait_for_ready(timeout=60)
            await self._install_bridge()
            self._notes = await self._sync_context()
        except ScratchKernelUnavailable:
            await self.shutdown()
            raise
        except Exception as exc:  # the gateway's failure, named for the model
            await self.shutdown()
            raise ScratchKernelUnavailable(
                f"scratch kernels: the gateway did not start a kernel from kernelspec "
                f"{self.choice.name!r}: {type(exc).__name__}: {exc}"
            ) from exc
        except BaseException:
            await self.shutdown()
            raise

    async def _install_bridge(self) -> None:
        """A temporary workspace in the kernel, then the bridge bound to it: imported, or
        shipped as source when the kernel's image lacks jupyter-resolve."""
        made = await self._silent(context_cells.workspace_cell())
        folder = context_cells.folder_from(made.stdout)
        if made.error or folder is None:
            said = (made.error or made.stdout or "no answer").strip().splitlines()[-1:]
            raise ScratchKernelUnavailable(
                f"scratch kernels: no workspace could be made in the gateway's kernel: {said}"
            )
        self.remote_session = folder
        # No server root there: notebook paths resolve in the kernel's own workspace.
        remote = Path(folder)
        result = await self._silent(bootstrap.import_cell(remote, remote))
        if not result.error and bootstrap.MISSING in result.stdout:
            self.log.info("gateway scratch kernel has no kernel_tools; shipping the bridge")
            result = await self._silent(bootstrap.shipping_cell(remote, remote))
        if result.error or result.timed_out or result.died:
            detail = (result.error or "no answer").strip().splitlines()[-1]
            raise ScratchKernelUnavailable(
                f"scratch kernels: the tool bridge could not be installed in the gateway's "
                f"kernel from kernelspec {self.choice.name!r}: {detail}"
            )

    async def _sync_context(self) -> list[str]:
        """Send the context files the kernel lacks or has in another version; notes on those
        not sent."""
        plan = context_cells.plan(self.workspace, self._sent)
        for target, digest, cells in plan.sends:
            for cell in cells:
                result = await self._silent(cell)
                if result.error or result.timed_out or result.died:
                    detail = (result.error or "no answer").strip().splitlines()[-1]
                    raise ScratchKernelUnavailable(
                        f"context/{target} could not be sent to the gateway's kernel: {detail}"
                    )
            self._sent[target] = digest
        return plan.notes

    async def execute(
        self,
        code: str,
        timeout: float,
        silent: bool = False,
        on_output: OnOutput | None = None,
        reads_from: str | None = None,
        preload: dict[str, tuple[str, str]] | None = None,
    ) -> Execution:
        result = await super().execute(code, timeout, silent, on_output, reads_from, preload)
        notes, self._notes = self._notes, []
        result.stderr = "".join(f"{note}\n" for note in notes) + result.stderr
        return result

    async def _prepare(self, folder: str | None, preload: dict[str, tuple[str, str]]) -> list[str]:
        """As a local kernel's, but never bound to the notebook's folder: that is on the
        server's disk, which the gateway's kernel does not share (even where a path of the
        same name exists there)."""
        notes = await super()._prepare(None, preload)
        if folder is None:
            return notes
        return [NOT_BOUND, *notes]

    async def bridge_call(
        self,
        name: str,
        arguments: dict[str, Any],
        timeout: float,
        on_output: OnOutput | None = None,
    ) -> Any:
        """``notebook_read`` reads the person's notebook on the server (the gateway's kernel
        cannot); every other builtin runs in the kernel, in its workspace."""
        if name == "notebook_read":
            return await asyncio.to_thread(
                read_notebook_here, self.workspace.root, self.server_root, arguments
            )
        return await super().bridge_call(name, arguments, timeout, on_output)

    async def bring_back(self, path: str, limit: int) -> str | None:
        """Copy ``work/<path>`` from the kernel to the session's ``work/`` on the server (to be
        promoted there), in chunks over the kernel protocol; None, or why it was not."""
        target = self.workspace.work / path
        if not target.resolve().is_relative_to(self.workspace.work.resolve()):
            return f"{path!r} leaves work/"
        received, size = bytearray(), None
        async with self._lock:
            while size is None or len(received) < size:
                result = await self._silent(
                    context_cells.send_back_cell(path, len(received), limit)
                )
                answer = context_cells.answer_from(result.stdout)
                if answer is None or "error" in answer:
                    return str((answer or {}).get("error") or result.error or "no answer")
                size = int(answer["size"])
                piece = base64.b64decode(answer["data"])
                if not piece and len(received) < size:
                    return f"{path!r} changed while it was copied"
                received += piece
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(bytes(received))
        return None

    async def _call(
        self,
        send: Callable[[], str],
        timeout: float,
        until: str | None = None,
        on_output: OnOutput | None = None,
        prepare: Callable[[], Awaitable[None]] | None = None,
    ) -> Execution:
        """As a local kernel's call, the context brought up to date first (a run may have
        attached files since the last call)."""

        async def sync_then_prepare() -> None:
            self._notes.extend(await self._sync_context())
            if prepare is not None:
                await prepare()

        return await super()._call(send, timeout, until, on_output, sync_then_prepare)

    async def alive(self) -> bool:
        km = self.km
        if km is None or self.client is None or self._lost:
            return False
        try:
            model = await km.refresh_model()  # type: ignore[attr-defined]
        except Exception:
            return False
        return bool(model) and model.get("execution_state") != "dead"

    async def _next_message(self, client: Any, msg_id: str, timeout: float) -> KernelMessage | None:
        """The next IOPub message from the gateway's websocket (the gateway checked its
        signature), None when none came."""
        try:
            msg = await client.iopub_channel.get_msg(timeout=timeout)
        except Exception:  # nothing came, or the socket closed: the caller checks the kernel
            return None
        parent = msg.get("parent_header") or {}
        content = msg.get("content") or {}
        if msg.get("msg_type") == "status" and content.get("execution_state") in LOST:
            self._lost = True  # the gateway restarted it: a new, empty kernel (alive: False)
        return KernelMessage(str(msg.get("msg_type")), parent.get("msg_id"), msg.get("content"))

    def _send_cell(self, code: str, silent: bool) -> str:
        context_cells.drain(self.client)
        return super()._send_cell(code, silent)

    def _send_bridge(self, payload: str) -> str:
        context_cells.drain(self.client)
        return super()._send_bridge(payload)

    async def shutdown(self) -> None:
        client, km = self.client, self.km
        self.client, self.km, self.remote_session = None, None, None
        if client is not None:
            with contextlib.suppress(Exception):
                client.stop_channels()
        if km is not None:
            with contextlib.suppress(Exception):
                await km.shutdown_kernel(now=True)  # its temporary folder goes with it
            # refresh_model counted its connections in the server's manager, which never
            # listed it: drop that count with the kernel
            connections = getattr(self.server_kernels, "_kernel_connections", None)
            if isinstance(connections, dict):
                connections.pop(km.kernel_id, None)


__all__ = ["GatewayScratchKernel", "gateway_problem"]
