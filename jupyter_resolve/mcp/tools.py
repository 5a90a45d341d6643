"""The workbench as MCP tools and resources (DESIGN 9.3), served at ``<base_url>resolve/mcp``.

``ask`` runs the agent (a :class:`RunRequest`) and answers with its text and run id, reporting
progress while it runs; the others read runs, artifacts, notebooks and souls. Run logs and
artifacts are also resources (``resolve://runs/<id>``, ``resolve://artifacts/<id>``).
``notebook_propose`` puts cells in front of a person in JupyterLab (mcp/propose.py).

Each tool says which authorization it needs beyond ``resolve`` read (the handler's): ``ask``
executes, ``notebook_read`` reads ``contents``, ``notebook_propose`` executes, reads ``contents``
and executes ``kernels``; the handler's Authorizer decides (DESIGN 9.4). The run ``ask`` starts
carries the caller's ``contents`` and ``kernels`` permissions (DESIGN 10.1); ``notebook_read``
reads through the server's contents manager, as ``GET /api/contents`` does.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..contracts.bodies import ChatRequest
from ..contracts.errors import ResolveError
from ..contracts.ids import Id, check_id
from ..contracts.ownership import OTHERS, Viewer
from ..contracts.pathargs import PathArg
from ..contracts.permissions import ASKED, RunPermissions
from ..contracts.run_rows import DEFAULT_PAGE, MAX_PAGE, RunQuery, decode_cursor
from ..runs.request import RunRequest
from .propose import McpProposeArgs, ProposeHost, propose

if TYPE_CHECKING:
    from pathlib import Path

    from ..artifacts import Artifacts
    from ..notebook.kernels import UserKernels
    from ..runs.run import Run
    from ..souls import Soul

Progress = Callable[[str], Awaitable[None]]
Allowed = Callable[[str, str], Awaitable[bool]]

MAX_EVENTS = 500
MAX_RESOURCE_BYTES = 10 * 1024 * 1024
LISTED_RUNS = 200
READ = {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False}
PROPOSE_NEEDS = (("execute", "resolve"), ("read", "contents"), ("execute", "kernels"))
SCOPED_PROPOSE_NEEDS = (("execute", "resolve"), ("read", "contents"))
"""What proposing needs under an MCP-scoped token, which never has ``kernels`` execute: its
proposals only wait for a person, who decides (and runs) them with the person's own rights."""


class AskArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    prompt: str = Field(min_length=1, max_length=100_000)
    session_id: Id | None = None
    soul: str | None = Field(default=None, max_length=64)


class RunsArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    session_id: Id | None = None
    status: str | None = Field(default=None, pattern="^(running|completed)$")
    before: str | None = Field(
        default=None, max_length=400, description="The 'next' of the previous page."
    )
    limit: int = Field(default=DEFAULT_PAGE, ge=1, le=MAX_PAGE)


class RunEventsArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    run_id: Id
    after: int = Field(default=0, ge=0)


class ArtifactArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    artifact_id: Id


class NotebookArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: PathArg


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _tool(name: str, description: str, args: type[BaseModel], hints: dict[str, bool]) -> Any:
    schema = args.model_json_schema()
    schema.pop("title", None)
    return {"name": name, "description": description, "inputSchema": schema, "annotations": hints}


TOOLS = [
    _tool(
        "ask",
        "Ask the jupyter-resolve research agent; it plans, runs Python in its scratch kernel and "
        "answers. Returns the answer and the run id (read the run as resolve://runs/<id>). Pass "
        "session_id to continue a session; soul picks a role (see souls_list). Tools that need "
        "approval wait for a person in JupyterLab.",
        AskArgs,
        {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": True},
    ),
    _tool(
        "runs_list",
        "The agent's runs, a page at a time, newest first: {runs, next}; pass next as before "
        "for the next page (null: the last page).",
        RunsArgs,
        READ,
    ),
    _tool("run_events", "A run's normalized events (from seq 'after').", RunEventsArgs, READ),
    _tool("artifacts_list", "Promoted artifacts, newest first.", NoArgs, READ),
    _tool("artifact_get", "An artifact's manifest and content.", ArtifactArgs, READ),
    _tool("artifacts_verify", "Re-hash every artifact; list problems.", NoArgs, READ),
    _tool("notebook_read", "A notebook under the server root, as text.", NotebookArgs, READ),
    _tool("souls_list", "The souls (roles) ask can run as.", NoArgs, READ),
    _tool(
        "notebook_propose",
        "Propose cells for a notebook under the server root: a person accepts (optionally "
        "running them in the notebook's kernel), edits or rejects them in JupyterLab. Waits for "
        "the decision and returns it, with the cells' outputs when they ran. cells: "
        "[{cell_type: code|markdown, source}]; after_cell_id or replace_cell_id place them.",
        McpProposeArgs,
        {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False},
    ),
]
TOOL_NAMES = tuple(t["name"] for t in TOOLS)


def text_result(text: str, *, error: bool = False, structured: Any = None) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": error}
    if structured is not None:
        result["structuredContent"] = structured
    return result


def json_result(value: Any) -> dict[str, Any]:
    """A JSON value as text (every client shows it) and as structured content (an object)."""
    structured = value if isinstance(value, dict) else {"items": value}
    return text_result(json.dumps(value, indent=1, ensure_ascii=False), structured=structured)


class WorkbenchHost(ProposeHost, Protocol):
    """What the MCP server's tools need: runs (to start, list and read), artifacts, souls,
    the server root, and what a proposal needs."""

    root_dir: Path
    souls: dict[str, Soul]
    user_kernels: UserKernels | None

    @property
    def artifacts(self) -> Artifacts: ...

    def allowed_tools(self) -> list[str]: ...

    async def start(self) -> None: ...

    def start_run(self, request: RunRequest) -> Run: ...


class WorkbenchTools:
    """The MCP server's tools and resources over the workbench's services."""

    def __init__(self, gateway: WorkbenchHost) -> None:
        self.gateway = gateway

    async def call(
        self,
        name: str,
        arguments: dict[str, Any],
        progress: Progress,
        allowed: Allowed,
        *,
        scoped: bool = False,
        owner: str | None = None,
    ) -> dict[str, Any]:
        try:
            if name == "ask":
                if not await allowed("execute", "resolve"):
                    return text_result("ask: not authorized to execute on resolve", error=True)
                permissions = RunPermissions(
                    **{name: await allowed(*asked) for name, asked in ASKED.items()}
                )
                asked = AskArgs.model_validate(arguments)
                others = asked.session_id is not None and await allowed("execute", OTHERS)
                return await self.ask(asked, progress, permissions, owner, others)
            if name == "notebook_propose":
                for action, resource in SCOPED_PROPOSE_NEEDS if scoped else PROPOSE_NEEDS:
                    if not await allowed(action, resource):
                        return text_result(
                            f"notebook_propose: not authorized to {action} on {resource}",
                            error=True,
                        )
                args = McpProposeArgs.model_validate(arguments)
                return await propose(self.gateway, args, progress)
            if name == "notebook_read":
                if not await allowed("read", "contents"):
                    return text_result("notebook_read: not authorized to read contents", error=True)
                return await self.notebook_read(NotebookArgs.model_validate(arguments).path)
            return self.read_tool(name, arguments, Viewer(owner, await allowed("read", OTHERS)))
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"]) or "arguments"
            return text_result(f"{name}: {where}: {err['msg']}", error=True)
        except ResolveError as exc:
            return text_result(f"{name}: {exc.message}", error=True)

    def read_tool(self, name: str, arguments: dict[str, Any], viewer: Viewer) -> dict[str, Any]:
        gateway = self.gateway
        if name == "runs_list":
            runs_args = RunsArgs.model_validate(arguments)
            before = decode_cursor(runs_args.before) if runs_args.before else None
            query = RunQuery(
                session_id=runs_args.session_id,
                status=runs_args.status,
                owners=viewer.owners(),
                before=before,
                limit=runs_args.limit,
            )
            page = gateway.runs.page(query)
            return json_result({"runs": [i.model_dump() for i in page.runs], "next": page.next})
        if name == "run_events":
            events_args = RunEventsArgs.model_validate(arguments)
            run = gateway.runs.get(events_args.run_id)
            viewer.check(run.owner, f"run '{run.run_id}'")
            events = [e.model_dump() for e in run.events if e.seq > events_args.after]
            more = len(events) > MAX_EVENTS
            return json_result({"events": events[:MAX_EVENTS], "more": more})
        if name == "artifacts_list":
            NoArgs.model_validate(arguments)
            found = gateway.artifacts.store.find()
            return json_result([m.to_json() for m in found if viewer.sees(m.owner)])
        if name == "artifact_get":
            art_id = ArtifactArgs.model_validate(arguments).artifact_id
            manifest = gateway.artifacts.store.get(art_id)
            viewer.check(manifest.owner, f"artifact '{art_id}'")
            content = self.read_resource(f"resolve://artifacts/{art_id}", viewer)["contents"][0]
            result = json_result(manifest.to_json())
            result["content"].append({"type": "resource", "resource": content})
            return result
        if name == "artifacts_verify":
            NoArgs.model_validate(arguments)
            report = gateway.artifacts.store.verify()
            ok = not report.problems
            value = {"ok": ok, "checked": report.checked, "problems": report.problems}
            return {**json_result({**value, "notes": report.notes}), "isError": not ok}
        if name == "souls_list":
            NoArgs.model_validate(arguments)
            allowed = gateway.allowed_tools()
            souls = [
                {"name": s.name, "role": s.role, "description": s.description}
                | {"tools": s.tool_names(allowed)}
                for s in sorted(gateway.souls.values(), key=lambda s: s.name)
            ]
            return json_result(souls)
        return text_result(f"unknown tool '{name}' (known: {', '.join(TOOL_NAMES)})", error=True)

    async def notebook_read(self, path: str) -> dict[str, Any]:
        """The notebook through the server's contents manager (hidden files, ``hide_globs``
        and custom managers apply); a refusal names the path, never the file's bytes."""
        from kernel_tools.notebook import render
        from kernel_tools.result import truncate

        user = self.gateway.user_kernels
        if user is None:
            return text_result("notebook_read: only inside a Jupyter server", error=True)
        notebook = await user.read_notebook(path)  # a ResolveError is the tool's error
        return text_result(truncate(render(notebook, path)))

    async def ask(
        self,
        args: AskArgs,
        progress: Progress,
        permissions: RunPermissions,
        owner: str | None = None,
        others: bool = False,
    ) -> dict[str, Any]:
        gateway = self.gateway
        await gateway.start()
        request = ChatRequest.model_validate(
            {
                "messages": [{"role": "user", "content": args.prompt}],
                "session_id": args.session_id,
                "soul": args.soul,
            }
        )
        asked = RunRequest(request, owner=owner, permissions=permissions, others=others)
        run = gateway.start_run(asked)
        await progress(f"run {run.run_id} started")
        idle = gateway.config.keepalive_interval
        async for event in run.watch(0, idle=idle):
            note = _progress_note(event.type, event.data) if event is not None else "working"
            if note:
                await progress(note)
        answer = run.text() or (run.events[-1].data.get("summary") or {}).get("text", "")
        structured = {
            "answer": answer,
            "run_id": run.run_id,
            "session_id": run.session_id,
            "reason": run.reason,
        }
        result = text_result(answer or "(no answer)", structured=structured)
        result["content"].append(
            {
                "type": "resource_link",
                "uri": f"resolve://runs/{run.run_id}",
                "name": f"run {run.run_id} ({run.reason})",
                "mimeType": "application/x-ndjson",
            }
        )
        result["isError"] = run.reason not in ("stop", "budget")
        return result

    def resources(self, viewer: Viewer) -> list[dict[str, Any]]:
        query = RunQuery(owners=viewer.owners(), limit=LISTED_RUNS)
        infos = self.gateway.runs.page(query).runs
        runs = [
            {
                "uri": f"resolve://runs/{i.run_id}",
                "name": f"run {i.run_id}",
                "description": (i.prompt or "")[:200],
                "mimeType": "application/x-ndjson",
            }
            for i in infos
        ]
        artifacts = [
            {
                "uri": f"resolve://artifacts/{m.id}",
                "name": m.title or m.id,
                "mimeType": m.media_type,
                "size": m.size,
            }
            for m in self.gateway.artifacts.store.find()
            if viewer.sees(m.owner)
        ]
        return runs + artifacts

    def read_resource(self, uri: str, viewer: Viewer) -> dict[str, Any]:
        """``resources/read``: a run's events as JSON lines, an artifact's bytes."""
        kind, _, ident = uri.removeprefix("resolve://").partition("/")
        if not uri.startswith("resolve://") or kind not in ("runs", "artifacts"):
            raise ResolveError(f"no resource {uri!r}", code="unknown_resource")
        if kind == "runs":
            run = self.gateway.runs.get(check_id("run_id", ident))
            viewer.check(run.owner, f"run '{ident}'")
            text = "".join(e.model_dump_json() + "\n" for e in run.events)
            return {"contents": [{"uri": uri, "mimeType": "application/x-ndjson", "text": text}]}
        manifest, path = self.gateway.artifacts.store.content_path(check_id("artifact_id", ident))
        viewer.check(manifest.owner, f"artifact '{ident}'")
        if manifest.size > MAX_RESOURCE_BYTES:
            raise ResolveError(f"{uri}: {manifest.size} bytes, over the {MAX_RESOURCE_BYTES} limit")
        data = path.read_bytes()
        content: dict[str, Any] = {"uri": uri, "mimeType": manifest.media_type}
        if manifest.media_type.startswith("text/") or manifest.media_type.endswith("json"):
            content["text"] = data.decode("utf-8", "replace")
        else:
            content["blob"] = base64.b64encode(data).decode("ascii")
        return {"contents": [content]}


def _progress_note(event_type: str, data: dict[str, Any]) -> str | None:
    """What a progress notification says about an event (None: not worth one)."""
    if event_type == "tool.started":
        return f"calling {data.get('name')}"
    if event_type == "tool.completed":
        return f"{data.get('name')} {'done' if data.get('ok') else 'failed'}"
    if event_type == "tool.approval" and data.get("state") == "waiting":
        return f"waiting for a person to approve {data.get('name')} in JupyterLab"
    if event_type == "run.completed":
        return f"run ended: {data.get('reason')}"
    if event_type == "context.compacted":
        return "compacted the session's context"
    return None
