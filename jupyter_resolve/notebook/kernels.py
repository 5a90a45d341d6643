"""The user's notebooks and their kernels, through the server's own managers.

A notebook's kernel is the one of its session (``session_manager``). Inspection runs there
silently — a ``user_expressions`` of an empty, silent, history-less request, so nothing reaches
iopub, the notebook or its history — within a time limit after which the kernel is interrupted,
and never while the kernel is busy with the user's own cell (the interrupt would hit that cell).
Accepted cells run visibly (history stored, execution counts advance), and their outputs come
back as nbformat outputs.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from jupyter_core.utils import ensure_async
from tornado.web import HTTPError

from ..contracts.errors import BadRequest, Conflict, NotFound
from ..contracts.pathargs import check_path_text
from ..kernel_gateway import gateway_client, is_gateway_kernel, refreshed_state
from ..rooms import cell_source as shared_cell_source
from ..rooms import live_notebook
from . import inspector

INSPECTOR_SOURCE = Path(inspector.__file__).read_text(encoding="utf-8")
MAX_ANSWER_CHARS = 1_000_000  # an inspector answer larger than this is refused
BUSY_POLLS, BUSY_POLL_SECONDS = 40, 0.05  # up to 2 s for a kernel that is finishing a request


def notebook_path(value: str) -> str:
    """``value`` as the contents API names it (relative, ``/``-separated), or BadRequest."""
    try:
        check_path_text(value)
    except ValueError as exc:
        raise BadRequest(f"notebook: {exc}") from exc
    path = PurePosixPath(value.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts:
        raise BadRequest(f"notebook: '{value}' must be relative to the server root, without '..'")
    if path.suffix != ".ipynb":
        raise BadRequest(f"notebook: '{value}' is not a notebook (.ipynb)")
    return path.as_posix()


def _climbs_out(path: PurePosixPath) -> bool:
    """Whether ``path``'s ``..`` parts, taken literally, climb above its start."""
    depth = 0
    for part in path.parts:
        depth += -1 if part == ".." else 0 if part == "." else 1
        if depth < 0:
            return True
    return False


@dataclass
class CellRun:
    """One accepted code cell run in the notebook's kernel."""

    outputs: list[dict[str, Any]] = field(default_factory=list)  # nbformat outputs
    execution_count: int | None = None
    error: bool = False
    timed_out: bool = False


class UserKernels:
    """The server's sessions, kernels and contents, as the notebook tools need them."""

    def __init__(self, serverapp: Any, log: logging.Logger) -> None:
        self.sessions = serverapp.session_manager
        self.kernels = serverapp.kernel_manager
        self.contents = serverapp.contents_manager
        self.serverapp = serverapp
        self.log = log

    async def check_notebook(self, value: str) -> str:
        """The notebook's contents path: BadRequest for a bad one, NotFound when it is missing
        or hidden (as ``/api/contents`` answers)."""
        path = notebook_path(value)
        await self.notebook_model(path, content=False)
        return path

    async def read_cells(self, path: str) -> list[dict[str, Any]]:
        """The saved notebook's cells (nbformat dicts)."""
        return [dict(cell) for cell in (await self.read_notebook(path)).get("cells", [])]

    async def cell_source(self, path: str, cell_id: str) -> str | None:
        """Cell ``cell_id``'s source as people see it now: in the notebook's live collaboration
        room when one is open, else in the saved file; None when there is no such cell."""
        room = await live_notebook(self.serverapp, path)
        if room is not None:
            return shared_cell_source(room, cell_id)
        for cell in await self.read_cells(path):
            if cell.get("id") == cell_id:
                source = cell.get("source", "")
                return "".join(source) if isinstance(source, list) else str(source)
        return None

    async def read_notebook(self, value: str) -> dict[str, Any]:
        """The notebook (nbformat, as a dict) through the server's contents manager."""
        model = await self.notebook_model(notebook_path(value), content=True)
        return dict(model["content"])

    async def check_visible(self, value: str, what: str) -> None:
        """NotFound unless the contents manager shows ``value`` (a chat's attachment or
        notebook): missing, hidden (unless ``allow_hidden``) or matched by ``hide_globs``."""
        path = value.replace("\\", "/")
        if PurePosixPath(path).is_absolute() or _climbs_out(PurePosixPath(path)):
            # a path that leaves the root is bad input (400), not a missing file
            raise BadRequest(f"{what}: '{value}' leaves the server root ('..' above it)")
        if not await self._shown(path.strip("/")):
            raise NotFound(f"{what}: no file '{value}' under the server root")

    async def _shown(self, path: str) -> bool:
        contents = self.contents
        if not all(contents.should_list(part) for part in PurePosixPath(path).parts):
            return False
        try:
            if not contents.allow_hidden and await ensure_async(contents.is_hidden(path)):
                return False
            return bool(await ensure_async(contents.exists(path)))
        except HTTPError:  # e.g. a path that leaves the root
            return False

    async def notebook_model(self, path: str, *, content: bool) -> dict[str, Any]:
        """The contents manager's model of the notebook at ``path`` (a checked path): hidden
        files (unless ``allow_hidden``), ``hide_globs`` and custom managers apply as for
        ``GET /api/contents``. Errors name the path, never the file's bytes."""
        contents = self.contents
        missing = NotFound(f"notebook: no notebook '{path}' under the server root")
        if not await self._shown(path):
            raise missing
        try:
            model = await ensure_async(contents.get(path, content=content, type="notebook"))
        except HTTPError as exc:  # its message may quote the file (nbformat's parse error)
            if exc.status_code == 404:
                raise missing from None
            if exc.status_code == 403:
                raise BadRequest(f"notebook: '{path}' may not be read", code="forbidden") from None
            raise BadRequest(f"notebook: '{path}' is not a readable notebook") from None
        if model.get("type") != "notebook":
            raise BadRequest(f"notebook: '{path}' is not a notebook")
        return dict(model)

    async def kernel_id(self, path: str) -> str | None:
        """The kernel of the notebook's session, when one runs."""
        for session in await ensure_async(self.sessions.list_sessions()):
            kernel = session.get("kernel") or {}
            if str(session.get("path", "")).lstrip("/") == path and kernel.get("id"):
                if kernel["id"] in self.kernels:
                    return str(kernel["id"])
        return None

    async def start_kernel(self, path: str) -> str:
        """Start the notebook's kernel (the kernelspec its metadata names, else the default) in
        a session for its path, as JupyterLab would on opening it: a page that opens the
        notebook later attaches to that session instead of starting another kernel."""
        metadata = (await self.read_notebook(path)).get("metadata") or {}
        name = (metadata.get("kernelspec") or {}).get("name") or None
        model = await ensure_async(
            self.sessions.create_session(path=path, name=path, type="notebook", kernel_name=name)
        )
        self.log.info("started kernel %s for %s to run accepted cells", model["kernel"]["id"], path)
        return str(model["kernel"]["id"])

    async def _client(self, kernel_id: str, iopub: bool) -> Any:
        """A client of the kernel, local or on a Jupyter gateway (``kernel_gateway.py``);
        with ``iopub``, once the kernel's outputs reach it."""
        kernel = self.kernels.get_kernel(kernel_id)
        client = gateway_client(kernel) if is_gateway_kernel(kernel) else kernel.client()
        started = client.start_channels(
            shell=True, iopub=iopub, stdin=False, hb=False, control=False
        )
        if inspect.isawaitable(started):  # a gateway client's is a coroutine
            await started
        if iopub:  # outputs are missed until the iopub subscription is live
            try:
                await _iopub_live(client, timeout=30)
            except BaseException:
                await _close(client)
                raise
        return client

    async def _execution_state(self, kernel: Any) -> str:
        if is_gateway_kernel(kernel):
            return await refreshed_state(kernel)
        return str(getattr(kernel, "execution_state", "idle"))

    async def inspect(
        self, kernel_id: str, request: dict[str, Any], timeout: float
    ) -> dict[str, Any]:
        """The inspector's answer to ``request`` (see :func:`inspector.main`); Conflict when the
        kernel is busy with a cell of the user."""
        kernel = self.kernels.get_kernel(kernel_id)
        # The server learns "idle" from the kernel's status messages, a moment after a request
        # (our own previous one too) ends: a short wait tells that from a cell still running.
        for _ in range(BUSY_POLLS):
            if await self._execution_state(kernel) != "busy":
                break
            await asyncio.sleep(BUSY_POLL_SECONDS)
        else:
            raise Conflict(
                "the notebook's kernel is busy running a cell; ask again when it is idle"
            )
        request = {"seconds": max(timeout - 1.0, 0.5), **request}
        expression = (
            "(lambda ns: (exec(compile(" + repr(INSPECTOR_SOURCE) + ", '<resolve-inspector>', "
            "'exec'), ns), ns['main'](" + repr(request) + ", get_ipython().user_ns))[1])"
            "({'__name__': '_resolve_inspector'})"
        )
        client = await self._client(kernel_id, iopub=False)
        try:
            msg_id = client.execute(
                "",
                silent=True,
                store_history=False,
                user_expressions={"answer": expression},
                allow_stdin=False,
            )
            reply = await self._reply(client, msg_id, timeout)
            if reply is None:
                await ensure_async(self.kernels.interrupt_kernel(kernel_id))
                await self._reply(client, msg_id, 10.0)
                return {
                    "ok": False,
                    "error": f"cut by the time limit ({timeout:g} s): the kernel was interrupted",
                }
        finally:
            await _close(client)
        found = (reply["content"].get("user_expressions") or {}).get("answer") or {}
        if found.get("status") != "ok":
            return {"ok": False, "error": f"{found.get('ename')}: {found.get('evalue')}"}
        text = found.get("data", {}).get("text/plain", "")
        if len(text) > MAX_ANSWER_CHARS:
            return {"ok": False, "error": "the kernel's answer is too large"}
        answer = json.loads(ast.literal_eval(text))
        return answer if isinstance(answer, dict) else {"ok": False, "error": "no answer"}

    async def _reply(self, client: Any, msg_id: str, timeout: float) -> dict[str, Any] | None:
        deadline = time.monotonic() + timeout
        while (remaining := deadline - time.monotonic()) > 0:
            try:
                msg: dict[str, Any] = await client.get_shell_msg(timeout=min(remaining, 1.0))
            except Exception:  # queue.Empty
                continue
            if msg.get("parent_header", {}).get("msg_id") == msg_id:
                return msg
        return None

    async def run_cells(self, kernel_id: str, sources: list[str], timeout: float) -> list[CellRun]:
        """Run ``sources`` one after the other, visibly, within ``timeout`` seconds in all
        (then the kernel is interrupted); after an error the rest do not run."""
        client = await self._client(kernel_id, iopub=True)
        deadline = time.monotonic() + timeout
        runs: list[CellRun] = []
        try:
            for source in sources:
                msg_id = client.execute(source, silent=False, store_history=True, allow_stdin=False)
                cell = await self._collect(client, msg_id, deadline)
                if cell.timed_out:
                    await ensure_async(self.kernels.interrupt_kernel(kernel_id))
                    await self._collect(client, msg_id, time.monotonic() + 10)
                reply = await self._reply(client, msg_id, 5.0)
                if reply is not None:
                    cell.execution_count = reply["content"].get("execution_count")
                runs.append(cell)
                if cell.error or cell.timed_out:
                    break
        finally:
            await _close(client)
        return runs

    async def _collect(self, client: Any, msg_id: str, deadline: float) -> CellRun:
        cell = CellRun()
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                cell.timed_out = True
                return cell
            try:
                msg = await client.get_iopub_msg(timeout=min(remaining, 1.0))
            except Exception:  # queue.Empty
                continue
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "status" and content.get("execution_state") == "idle":
                return cell
            output = nbformat_output(kind, content)
            if output is not None:
                cell.outputs.append(output)
                cell.error = cell.error or kind == "error"


async def _iopub_live(client: Any, timeout: float) -> None:
    """Return once a kernel_info request's status reaches iopub (so later outputs will), or
    raise :class:`Conflict` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg_id = client.kernel_info()
        ask_again = min(time.monotonic() + 1.0, deadline)
        while (remaining := ask_again - time.monotonic()) > 0:
            try:
                msg = await client.get_iopub_msg(timeout=min(remaining, 0.5))
            except Exception:  # queue.Empty
                continue
            if msg.get("parent_header", {}).get("msg_id") == msg_id:
                return
    raise Conflict(f"the notebook's kernel did not answer within {timeout:g} s")


async def _close(client: Any) -> None:
    # a gateway client closes a websocket and joins its reader: off the event loop
    if is_gateway_kernel(getattr(client, "parent", None)):
        await asyncio.to_thread(client.stop_channels)
    else:
        client.stop_channels()


def nbformat_output(kind: str, content: dict[str, Any]) -> dict[str, Any] | None:
    """An iopub message as the nbformat output a notebook stores (None: not an output)."""
    if kind == "stream":
        return {"output_type": "stream", "name": content.get("name"), "text": content.get("text")}
    if kind == "display_data":
        return {
            "output_type": kind,
            "data": content.get("data", {}),
            "metadata": content.get("metadata", {}),
        }
    if kind == "execute_result":
        return {
            "output_type": kind,
            "data": content.get("data", {}),
            "metadata": content.get("metadata", {}),
            "execution_count": content.get("execution_count"),
        }
    if kind == "error":
        return {
            "output_type": kind,
            "ename": content.get("ename"),
            "evalue": content.get("evalue"),
            "traceback": content.get("traceback", []),
        }
    return None
