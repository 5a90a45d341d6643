"""The client side of ACP: what this server answers an external agent (DESIGN 10.1, 10.4).

- ``session/update`` → the live run's events (:mod:`.events`), appended to its log before they
  are sent, like any run's;
- ``session/request_permission`` → a waiting ``tool.approval`` that a person decides with
  ``POST /resolve/api/runs/{id}/approvals/{call_id}`` (``always`` picks the agent's "always"
  option); no decision within ``c.Resolve.approval_timeout``, a cancel, or a run with no person
  behind it (an A2A peer's) is a rejection;
- ``fs/read_text_file`` and ``fs/write_text_file`` reach only the server root, its links
  followed (a path whose real path is outside is refused), through the server's contents manager
  (hidden files and ``hide_globs`` apply, to the path asked and to its real one), with the
  permissions the run recorded in ``run.started.permissions``; each is recorded as a ``fs.*``
  call of the run. A notebook's file (``.ipynb``, any case, or a link to one) is never written
  this way: what the agent writes to it becomes proposals of cells that a person accepts or
  rejects, and the write answers once they decided (:mod:`.notebook_write`);
- ``terminal/*`` is declined unless ``c.Resolve.acp_terminal``, and for a run whose caller may
  not read and write the server's files and run code in kernels (:mod:`.terminal`);
- every request names the agent's session: it is answered only while that session's turn runs
  (and the turns running are all one caller's: gate.py).

Imported when an agent starts (it imports the ``agent-client-protocol`` SDK).
"""

from __future__ import annotations

import os
import posixpath
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from acp import RequestError
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    EnvVariable,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    ToolCallUpdate,
    WriteTextFileResponse,
)
from jupyter_core.utils import ensure_async
from tornado.web import HTTPError

from ..contracts.errors import ResolveError
from ..contracts.permissions import RunPermissions
from ..runs.approvals import APPROVAL_RELEASED, await_decision
from ..runs.run import Run
from .access import missing
from .events import Emitted, UpdateTranslator, call_id_of, choose_option, cut

if TYPE_CHECKING:
    from ..notebook.tools import NotebookHost

REFUSED = -32001  # a JSON-RPC server error: the request was understood and refused


class FsRefused(ResolveError):
    """A file request this server refuses (the sentence says why); ``data`` goes with the
    error to the agent."""

    code = "fs_refused"
    word = "refused"

    def __init__(self, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.data = data


class NotAccepted(FsRefused):
    """A notebook's write whose proposals a person did not all accept."""

    word = "not accepted"


@dataclass
class Turn:
    """One prompt of an agent's session, and the run it feeds."""

    run: Run
    session_id: str  # this project's
    permissions: RunPermissions
    headless: bool  # no person behind the run: permission requests are rejected
    root: Path
    translator: UpdateTranslator = field(default_factory=UpdateTranslator)
    fs_calls: int = 0
    terminals: Any = None  # a Terminals of the turn when c.Resolve.acp_terminal

    def emit(self, emitted: list[Emitted]) -> None:
        if not self.run.completed:
            self.run.emit_all(emitted)


def is_notebook(rel: str) -> bool:
    """Whether ``rel`` names a notebook's file (``.ipynb`` in any case)."""
    return rel.lower().endswith(".ipynb")


def _inside(path: str, top: str) -> str | None:
    """``path``'s contents path under ``top``, or None when it is not inside."""
    if path == top or not path.startswith(top.rstrip(os.sep) + os.sep):
        return None
    return PurePosixPath(*Path(os.path.relpath(path, top)).parts).as_posix()


def server_paths(root: Path, path: str) -> tuple[str, str]:
    """The contents paths (relative, ``/``-separated) of ``path``, an absolute path inside the
    server root: as asked, and real (every link followed, as opening the file would; a file not
    there yet is where its folder really is); :class:`FsRefused` when either is outside."""
    if not os.path.isabs(path):
        raise FsRefused(f"'{path[:300]}' is not an absolute path (ACP paths are absolute)")
    top = os.path.normpath(str(root))
    asked = _inside(os.path.normpath(path), top)
    if asked is None:
        raise FsRefused(f"'{path[:300]}' is outside the server root ({top})")
    real = _inside(os.path.realpath(path), os.path.realpath(top))
    if real is None:
        raise FsRefused(f"'{path[:300]}' leads outside the server root ({top}) through a link")
    return asked, real


def lines_of(text: str, line: int | None, limit: int | None) -> str:
    """``limit`` lines of ``text`` from ``line`` (1-based), as ``fs/read_text_file`` asks."""
    if line is None and limit is None:
        return text
    lines = text.splitlines(keepends=True)
    start = max((line or 1) - 1, 0)
    return "".join(lines[start : start + limit if limit is not None else None])


class Files:
    """The server root as the contents manager serves it, for one agent."""

    def __init__(self, contents: Any) -> None:
        self.contents = contents  # None outside a Jupyter server

    async def visible(self, rel: str) -> None:
        """:class:`FsRefused` unless ``rel`` is shown by ``/api/contents`` (the path an agent
        asked for, when a link makes it another)."""
        await self._checked(rel)

    async def _checked(self, rel: str) -> Any:
        contents = self.contents
        if contents is None:
            raise FsRefused("files are reachable only inside a Jupyter server")
        hidden = not contents.allow_hidden and await ensure_async(contents.is_hidden(rel))
        if hidden or not all(contents.should_list(p) for p in PurePosixPath(rel).parts):
            # as /api/contents answers (the manager's own save does not check): hidden files
            # (.resolve/ among them) and hide_globs are not there for an agent
            raise FsRefused(f"no file '{rel}' under the server root (hidden)")
        return contents

    async def read(self, rel: str) -> str:
        contents = await self._checked(rel)
        try:
            model = await ensure_async(contents.get(rel, content=True, type="file", format="text"))
        except HTTPError as exc:
            if exc.status_code == 404:
                raise FsRefused(f"no file '{rel}' under the server root") from None
            raise FsRefused(f"'{rel}' cannot be read as text ({exc.status_code})") from None
        if model.get("format") != "text":
            raise FsRefused(f"'{rel}' is not a text file")
        return str(model.get("content") or "")

    async def notebook(self, rel: str) -> dict[str, Any]:
        """The notebook's content (nbformat, as a dict), as the contents manager reads it."""
        contents = await self._checked(rel)
        try:
            model = await ensure_async(contents.get(rel, content=True, type="notebook"))
        except HTTPError as exc:
            if exc.status_code == 404:
                raise FsRefused(
                    f"no notebook '{rel}' under the server root (a notebook is not created "
                    "over fs/write_text_file: its cells are proposed to a person)"
                ) from None
            raise FsRefused(f"'{rel}' cannot be read as a notebook ({exc.status_code})") from None
        return dict(model.get("content") or {})

    async def write(self, rel: str, content: str) -> None:
        if is_notebook(rel):  # never the file itself: see notebook_write.py
            raise FsRefused(f"'{rel}' is a notebook: its file is not written directly")
        contents = await self._checked(rel)
        folder = posixpath.dirname(rel)
        if folder and not await ensure_async(contents.dir_exists(folder)):
            raise FsRefused(f"no folder '{folder}' under the server root")
        model = {"type": "file", "format": "text", "content": content}
        try:
            await ensure_async(contents.save(model, rel))
        except HTTPError as exc:
            why = exc.log_message or exc.reason or str(exc.status_code)
            raise FsRefused(f"'{rel}' was not written: {why}") from None


class AgentClient:
    """What an agent's connection calls: routed by the agent's session id to the live turn."""

    def __init__(
        self,
        turns: Mapping[str, Turn],
        files: Files,
        timeout: float,
        notebooks: NotebookHost | None = None,
    ) -> None:
        self.turns = turns
        self.files = files
        self.approval_timeout = timeout
        self.notebooks = notebooks  # the notebook tools' services, for a notebook's write

    def _turn(self, session_id: str) -> Turn:
        turn = self.turns.get(session_id)
        if turn is None or turn.run.completed:
            raise RequestError(REFUSED, f"no run of session '{session_id[:100]}' is live")
        return turn

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        # no await before the events are appended: notifications are handled in order
        turn = self.turns.get(session_id)
        if turn is None:  # a loaded session's history, or an update after its run ended
            return
        wire = update.model_dump(mode="json", by_alias=True, exclude_none=True)
        turn.emit(turn.translator.translate(wire, time.monotonic()))

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **_: Any
    ) -> RequestPermissionResponse:
        turn = self.turns.get(session_id)
        if turn is None or turn.run.completed:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        wire = tool_call.model_dump(mode="json", by_alias=True, exclude_none=True)
        turn.emit(turn.translator.tool_update(wire, time.monotonic()))
        call = turn.translator.calls[call_id_of(tool_call.tool_call_id)]
        offered = [o.model_dump(mode="json", exclude_none=True) for o in options]
        asked = {**call.requested(), "options": offered}
        decision = "deny" if turn.headless else "ask"
        answer, always = await await_decision(
            turn.run, asked, decision, self.approval_timeout, lasting=True
        )
        chosen = None if answer == APPROVAL_RELEASED else choose_option(offered, answer, always)
        if chosen is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=chosen)
        )

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **_: Any,
    ) -> ReadTextFileResponse:
        turn = self._turn(session_id)
        arguments: dict[str, Any] = {"path": path, "line": line, "limit": limit}

        async def read(rel: str, _call_id: str) -> tuple[str, str]:
            if not turn.permissions.contents_read:
                raise FsRefused("this run's caller may not read the server's files")
            text = lines_of(await self.files.read(rel), line, limit)
            return text, f"read {len(text)} characters of {rel}"

        text = await self._recorded(turn, "fs.read_text_file", arguments, read)
        return ReadTextFileResponse(content=str(text))

    async def write_text_file(
        self, session_id: str, path: str, content: str, **_: Any
    ) -> WriteTextFileResponse:
        turn = self._turn(session_id)
        arguments: dict[str, Any] = {"path": path, "characters": len(content)}

        async def write(rel: str, call_id: str) -> tuple[dict[str, Any] | None, str]:
            if not turn.permissions.contents_write:
                raise FsRefused("this run's caller may not write the server's files")
            if is_notebook(rel):
                return await self._propose(turn, rel, content, call_id)
            await self.files.write(rel, content)
            return None, f"wrote {len(content)} characters to {rel}"

        meta = await self._recorded(turn, "fs.write_text_file", arguments, write)
        return WriteTextFileResponse(field_meta=meta)

    async def _propose(
        self, turn: Turn, rel: str, content: str, call_id: str
    ) -> tuple[dict[str, Any], str]:
        """A notebook's write: its changes proposed to a person, who decides (the module)."""
        from .notebook_write import (
            MAX_PROPOSALS,
            NotebookTextError,
            notebook_cells,
            outcome,
            parse_notebook,
            plan_proposals,
            propose_plan,
        )

        if self.notebooks is None:
            raise FsRefused("notebooks are reachable only inside a Jupyter server")
        if not turn.permissions.contents_read:
            raise FsRefused("this run's caller may not read the server's files (a notebook)")
        if turn.headless:
            raise FsRefused(f"no person is behind this run to accept changes of '{rel}'")
        try:
            written = parse_notebook(content)
        except NotebookTextError as exc:
            raise FsRefused(f"'{rel}' is unchanged: {exc}") from None
        plan = plan_proposals(notebook_cells(await self.files.notebook(rel)), written)
        if len(plan.proposals) > MAX_PROPOSALS:
            raise FsRefused(
                f"'{rel}' is unchanged: the text changes it in {len(plan.proposals)} places, "
                f"over {MAX_PROPOSALS} proposals at once; write fewer changes at a time"
            )
        results = await propose_plan(self.notebooks, turn.run, turn.emit, rel, plan, call_id)
        accepted, text, data = outcome(rel, plan, results)
        if not accepted:
            raise NotAccepted(text, {"jupyter-resolve": data})
        return {"jupyter-resolve": data}, text

    async def _recorded(self, turn: Turn, name: str, arguments: dict[str, Any], action: Any) -> Any:
        """Run a file request as a call of the run (``tool.requested`` … ``tool.completed``);
        its answer for the agent, or the refusal as a JSON-RPC error."""
        turn.fs_calls += 1
        call_id = f"fs-{turn.fs_calls}"
        shown = {k: v for k, v in arguments.items() if v is not None}
        turn.emit(
            [
                ("tool.requested", {"call_id": call_id, "name": name, "arguments": shown}),
                ("tool.started", {"call_id": call_id, "name": name}),
            ]
        )
        started, data = time.monotonic(), None
        try:
            asked, real = server_paths(turn.root, str(arguments["path"]))
            if asked != real:  # a link: both must be there for the agent
                await self.files.visible(asked)
            answer, note = await action(real, call_id)
            ok = True
        except FsRefused as exc:
            answer, note, ok, data = "", f"{name}: {exc.word}: {exc}", False, exc.data
        output, truncated = cut(note)
        done = {"call_id": call_id, "name": name, "ok": ok, "output": output, "mime": None}
        ms = int((time.monotonic() - started) * 1000)
        turn.emit([("tool.completed", {**done, "truncated": truncated, "ms": ms})])
        if not ok:
            raise RequestError(REFUSED, note, data)
        return answer

    # -- terminal/*: declined unless c.Resolve.acp_terminal ------------------------------------

    def _terminals(self, session_id: str) -> Any:
        turn = self._turn(session_id)
        if turn.terminals is None:
            raise RequestError(
                REFUSED, "terminal/* is declined by this server (c.Resolve.acp_terminal is off)"
            )
        lacking = missing(turn.permissions)
        if lacking:  # a command runs as the shell tool would, beyond the files' own checks
            why = f"its caller may not {', '.join(lacking)}"
            raise RequestError(REFUSED, f"terminal/* is declined for this run: {why}")
        return turn.terminals

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **_: Any,
    ) -> Any:
        terminals = self._terminals(session_id)
        return await terminals.create(command, args or [], env or [], output_byte_limit)

    async def terminal_output(self, session_id: str, terminal_id: str, **_: Any) -> Any:
        return self._terminals(session_id).output(terminal_id)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **_: Any) -> Any:
        return await self._terminals(session_id).wait(terminal_id)

    async def kill_terminal(self, session_id: str, terminal_id: str, **_: Any) -> Any:
        return await self._terminals(session_id).kill(terminal_id)

    async def release_terminal(self, session_id: str, terminal_id: str, **_: Any) -> Any:
        return await self._terminals(session_id).release(terminal_id)

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None
