"""A scratch kernel: the ipykernel of one chat session, started through jupyter_client (not the
server's kernel manager, so it never shows up among the user's notebook kernels) from the
kernelspec ``c.Resolve.scratch_kernel_name``, with its provisioner (kernelspec.py). Tool calls
reach it through its direct channel where it has one (direct.py), else as shell cells.

It runs in its session's ``work/`` (a notebook chat's python: in the notebook's folder, its files
read-only, kernel_tools/notebook_folder.py) with an allowlisted environment: no Jupyter, hub or
runtime tokens and no provider keys, so code the agent runs can neither read secrets nor approve its
own calls. A kernel that dies is restarted; the call that died gets a clear error.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import shutil
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from jupyter_client.manager import AsyncKernelManager

from kernel_tools.result import RESULT_MIME  # what the bridge publishes

from ..contracts.permissions import RunPermissions
from . import bootstrap, direct
from .direct import DirectChannel
from .environment import kernel_environment
from .iopub import Execution, IOPubReader, KernelMessage, KernelOutput, live_output
from .kernelspec import KernelChoice, ScratchKernelUnavailable
from .sandbox import sandboxed_manager
from .workspace import Workspace

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
OnOutput = Callable[[KernelOutput], None]
"""Takes what a running request prints or displays, as it comes (a call's live output)."""
Preload = dict[str, tuple[str, str]]  # snapshots for the namespace: name -> (file, sha256)


class ScratchKernel:
    """One session's kernel: start, execute with a timeout, restart when it dies."""

    _iopub: IOPubReader | None = None  # the current client's reader (see _reader)
    _iopub_client: Any = None

    def __init__(
        self,
        workspace: Workspace,
        server_root: Path,
        log: logging.Logger,
        sandbox: str = "",
        network: bool = False,
        state_dir: Path | None = None,
        choice: KernelChoice | None = None,
        permissions: RunPermissions | None = None,
    ) -> None:
        self.choice = choice or KernelChoice("python3", "local-provisioner")
        # the permissions of the runs it serves (DESIGN 10.1): sandboxed, the server root is
        # mounted only for a caller who may read contents; none given, none
        self.permissions = permissions or RunPermissions()
        self.sandbox = sandbox
        self.network = network
        self.state_dir = state_dir
        self.workspace = workspace
        self.server_root = server_root
        self.log = log
        self.km: AsyncKernelManager | None = None
        self._ipc_dir: Path | None = None
        self.client: Any = None
        self.direct: DirectChannel | None = None  # tool calls past the shell channel
        self.last_used = time.monotonic()
        self.restarts = 0
        self._lock = asyncio.Lock()
        self._reads_from: str | None = None  # the folder python is bound to (None: work/)
        self._loaded: dict[str, tuple[str, str]] = {}  # name -> (snapshot file, sha256)

    async def start(self) -> None:
        refusal = self.choice.refusal(self.sandbox)
        if refusal is not None:
            raise ScratchKernelUnavailable(refusal)
        self.workspace.create()
        self._reads_from, self._loaded = None, {}  # a new kernel: in work/, nothing loaded
        km: AsyncKernelManager
        if self.sandbox == "bwrap":  # the kernelspec's provisioner is local (refusal above)
            km, self._ipc_dir = await sandboxed_manager(
                self.choice.name,
                self.workspace.root,
                self.server_root,
                self.network,
                reads_root=self.permissions.contents_read,
                state_dir=self.state_dir,
                log=self.log,
            )
            # Its parent is bwrap's init, PID 1 in its namespace: say so, or ipykernel's parent
            # poller takes PID 1 for "the server died" and quits (--die-with-parent does that
            # job here).
            arguments = ["--HistoryManager.enabled=False", "--IPKernelApp.parent_handle=1"]
        else:
            km = AsyncKernelManager(kernel_name=self.choice.name)
            arguments = ["--HistoryManager.enabled=False"]
            km.connection_file = str(self.workspace.root / "kernel.json")
        self.km = km
        try:
            await km.start_kernel(
                cwd=str(self.workspace.work),
                env=kernel_environment(self.workspace),
                extra_arguments=arguments,
            )
            self.client = km.client()
            self.client.start_channels()
            await self.client.wait_for_ready(timeout=60)
            await self._install_bridge()
            await self._open_direct()
        except ScratchKernelUnavailable:
            await self.shutdown()  # no half-started kernel, no socket folder left behind
            raise
        except Exception as exc:  # the provisioner's or the kernel's failure, named for the model
            await self.shutdown()
            raise ScratchKernelUnavailable(
                f"scratch kernels: the kernel from kernelspec {self.choice.name!r} (provisioner "
                f"{self.choice.provisioner!r}) did not start: {type(exc).__name__}: {exc}"
            ) from exc
        except BaseException:
            await self.shutdown()
            raise

    async def _install_bridge(self) -> None:
        """The kernel_tools bridge in the kernel: imported, or shipped when the kernel cannot
        import it (bootstrap.py); a kernel without the bridge is not used."""
        session, root = self.workspace.root, self.server_root
        result = await self._silent(bootstrap.import_cell(session, root))
        if not result.error and bootstrap.MISSING in result.stdout:
            self.log.info("scratch kernel has no kernel_tools; shipping the bridge into it")
            result = await self._silent(bootstrap.shipping_cell(session, root))
        if result.error or result.timed_out or result.died:
            detail = (result.error or "no answer").strip().splitlines()[-1]
            raise ScratchKernelUnavailable(
                f"scratch kernels: the tool bridge could not be installed in the kernel from "
                f"kernelspec {self.choice.name!r}: {detail} (a kernel on another machine needs "
                f"the session folder {str(session)!r} mounted at the same path)"
            )

    async def _open_direct(self) -> None:
        """The direct channel, in a kernel launched here (direct.py); without it, the shell."""
        if not self.choice.local or self.km is None:
            return
        bind = direct.bind_address(self.km.transport, self.km.ip)
        result = await self._silent(direct.open_cell(bind))
        address = None if result.error else direct.address_from(result.stdout, bind)
        if address is None:
            self.log.info("scratch kernel: no direct channel, tool calls use the shell channel")
            return
        self.direct = DirectChannel(self.client.session, address)

    async def _silent(self, code: str) -> Execution:
        return await self._execute(lambda: self._send_cell(code, True), 60)

    async def alive(self) -> bool:
        return self.km is not None and bool(await self.km.is_alive())

    async def execute(
        self,
        code: str,
        timeout: float,
        silent: bool = False,
        on_output: OnOutput | None = None,
        reads_from: str | None = None,
        preload: Preload | None = None,
    ) -> Execution:
        """Run ``code`` as a cell; on timeout the kernel is interrupted; on death it is
        restarted. Cancelled (the run ended), the code is interrupted — the kernel keeps its
        state — and the cancel goes on once the kernel is idle (restarted, should it not get
        idle). ``on_output`` takes what the cell prints and displays while it runs;
        ``reads_from``, ``preload``: see :meth:`_prepare`."""
        notes: list[str] = []

        async def prepare() -> None:
            notes.extend(await self._prepare(reads_from, preload or {}))

        send = lambda: self._send_cell(code, silent)  # noqa: E731
        result = await self._call(send, timeout, None, on_output, prepare)
        result.stderr = "".join(f"{note}\n" for note in notes) + result.stderr
        return result

    async def _prepare(self, folder: str | None, preload: Preload) -> list[str]:
        """Bind the kernel to ``folder`` (a notebook's, its files read-only; None: ``work/``),
        load the snapshots ``{name: (file, sha256)}`` not yet loaded; the notes for the model
        (a value that did not load, a folder this kernel cannot see)."""
        missing = {k: v for k, v in preload.items() if self._loaded.get(k) != v}
        if folder == self._reads_from and not missing:
            return []
        files = {name: file for name, (file, _) in missing.items()}
        result = await self._silent(bootstrap.prepare_cell(folder, files))
        if result.error or result.timed_out or result.died:
            detail = (result.error or "no answer").strip().splitlines()[-1]
            raise ScratchKernelUnavailable(f"the scratch kernel could not be prepared: {detail}")
        self._reads_from, self._loaded = folder, {**self._loaded, **missing}
        return [line for line in result.stdout.splitlines() if line]  # the bridge's notes

    async def bridge_call(
        self,
        name: str,
        arguments: dict[str, Any],
        timeout: float,
        on_output: OnOutput | None = None,
    ) -> Any:
        """Run a kernel_tools builtin through the bridge; its one result bundle, or None.
        ``on_output`` takes what the tool prints while it runs (the shell tool's output)."""
        payload = json.dumps({"name": name, "arguments": arguments, "timeout": timeout})
        # The bridge publishes its one result last: the call ends there, not at idle (what is
        # left of the request runs before the next one).
        result = await self._call(
            lambda: self._send_bridge(payload), timeout + 5, RESULT_MIME, on_output
        )
        for bundle in result.outputs:
            if RESULT_MIME in bundle:
                return bundle[RESULT_MIME]
        return result

    async def _restart(self) -> None:
        self.restarts += 1
        self.log.warning("scratch kernel of %s is not alive; restarting it", self.workspace.root)
        await self.shutdown()
        self.workspace.verify(self.log, self.server_root)
        await self.start()

    async def _call(
        self,
        send: Callable[[], str],
        timeout: float,
        until: str | None = None,
        on_output: OnOutput | None = None,
        prepare: Callable[[], Awaitable[None]] | None = None,
    ) -> Execution:
        """One request, sent by ``send`` once the kernel is known alive (and ``prepare`` ran);
        ``until``: a MIME type whose first output ends the call."""
        async with self._lock:
            self.last_used = time.monotonic()
            if not await self.alive():
                await self._restart()
            if prepare is not None:
                await prepare()
            result = await self._execute(send, timeout, until, on_output)
            if result.died:
                await self._restart()
            self.last_used = time.monotonic()
            return result

    def _send_cell(self, code: str, silent: bool) -> str:
        if self.direct is not None and not silent:
            return self.direct.send_python(code)
        return str(
            self.client.execute(code, silent=silent, store_history=not silent, allow_stdin=False)
        )

    def _send_bridge(self, payload: str) -> str:
        if self.direct is not None:
            return self.direct.send_bridge(payload)
        code = f"__resolve_bridge.call({payload!r})"
        return str(self.client.execute(code, silent=True, store_history=False, allow_stdin=False))

    async def _execute(
        self,
        send: Callable[[], str],
        timeout: float,
        until: str | None = None,
        on_output: OnOutput | None = None,
    ) -> Execution:
        client = self.client
        msg_id = send()
        try:
            return await self._collect(client, msg_id, timeout, until, on_output)
        except asyncio.CancelledError:
            await self._interrupt(client, msg_id)
            raise

    def _reader(self, client: Any) -> IOPubReader:
        """The IOPub reader of ``client`` (a restart brings a new client, so a new reader)."""
        if self._iopub is None or self._iopub_client is not client:
            self._iopub = IOPubReader(client.iopub_channel.socket, client.session)
            self._iopub_client = client
        return self._iopub

    async def _next_message(self, client: Any, msg_id: str, timeout: float) -> KernelMessage | None:
        """The next IOPub message; None when none came, or what came was not a valid message,
        or the channel failed (the caller then checks the kernel is still alive)."""
        try:
            return await self._reader(client).next(timeout, msg_id)
        except ValueError as exc:  # not signed with the key, malformed: dropped
            self.log.warning("scratch kernel: an IOPub message was dropped: %s", exc)
            return None
        except Exception:  # the channel failed: as jupyter_client's Empty was, before
            return None

    async def _collect(
        self,
        client: Any,
        msg_id: str,
        timeout: float,
        until: str | None = None,
        on_output: OnOutput | None = None,
    ) -> Execution:
        """What the execution ``msg_id`` produces, until the kernel is idle again (or until
        an output with the MIME type ``until``); each output to ``on_output`` as it comes."""
        result = Execution()
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                result.timed_out = True
                await self._interrupt(client, msg_id)
                return result
            msg = await self._next_message(client, msg_id, min(remaining, 0.5))
            if msg is None:  # nothing for a while: check the kernel is still there
                if not await self.alive():
                    result.died = True
                    return result
                continue
            if msg.parent_id != msg_id:
                continue
            kind, content = msg.msg_type, msg.content
            if on_output is not None and (output := live_output(kind, content)) is not None:
                if until is None or until not in (output.data or {}):
                    on_output = self._pass_on(on_output, output)
            if kind == "stream":
                if content.get("name") == "stderr":
                    result.stderr += content.get("text", "")
                else:
                    result.stdout += content.get("text", "")
            elif kind in ("display_data", "execute_result"):
                result.outputs.append(dict(content.get("data", {})))
                if until is not None and until in result.outputs[-1]:
                    return result
            elif kind == "error":
                trace = "\n".join(content.get("traceback", []))
                result.error = (
                    ANSI.sub("", trace) or f"{content.get('ename')}: {content.get('evalue')}"
                )
            elif kind == "status" and content.get("execution_state") == "idle":
                return result

    def _pass_on(self, on_output: OnOutput, output: KernelOutput) -> OnOutput | None:
        """``output`` to ``on_output``; should that fail, the call goes on without it."""
        try:
            on_output(output)
        except Exception:
            self.log.exception("scratch kernel: a call's live output failed; the call goes on")
            return None
        return on_output

    async def _interrupt(self, client: Any, msg_id: str) -> None:
        if self.km is None:
            return
        with contextlib.suppress(Exception):
            await self.km.interrupt_kernel()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            msg = await self._next_message(client, msg_id, 0.5)
            if (
                msg is not None
                and msg.parent_id == msg_id
                and msg.msg_type == "status"
                and msg.content.get("execution_state") == "idle"
            ):
                return
        await self._restart()

    async def shutdown(self) -> None:
        if self.direct is not None:
            self.direct.close()
            self.direct = None
        if self.client is not None:
            self.client.stop_channels()
            self.client = None
        if self.km is not None:
            with contextlib.suppress(Exception):
                await self.km.shutdown_kernel(now=True)
            self.km = None
        if self._ipc_dir is not None:
            shutil.rmtree(self._ipc_dir, ignore_errors=True)
            self._ipc_dir = None


__all__ = [
    "Execution",
    "ScratchKernel",
    "ScratchKernelUnavailable",
    "kernel_environment",
]
