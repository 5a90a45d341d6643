"""An external agent for the tests, written against the official ACP SDK's agent side.

Each prompt's first word says what it does (``stream``, ``edit``, ``permission``, ``read``,
``readas``, ``write``, ``notebook``, ``wait``, ``crash``, ``session``, ``remember``, ``recall``,
``mcp``, ``mcpold``, ``terminal``, ``refuse``); its answer says what it saw, so a test reads the
outcome in the run's text. Sessions are kept in ``$BENCH_STATE`` so that a restarted agent can
load them; a session's MCP servers are those of its last ``session/new``, ``/load`` or
``/resume``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import acp
import httpx
from acp import schema

STATE = Path(os.environ.get("BENCH_STATE", "."))
OPTIONS = [
    schema.PermissionOption(option_id="yes-once", name="Allow", kind="allow_once"),
    schema.PermissionOption(option_id="yes-always", name="Always allow", kind="allow_always"),
    schema.PermissionOption(option_id="no-once", name="Reject", kind="reject_once"),
    schema.PermissionOption(option_id="no-always", name="Always reject", kind="reject_always"),
]


def saved() -> dict[str, Any]:
    try:
        loaded: dict[str, Any] = json.loads((STATE / "sessions.json").read_text())
        return loaded
    except (OSError, ValueError):
        return {}


def save(sessions: dict[str, Any]) -> None:
    STATE.mkdir(parents=True, exist_ok=True)
    (STATE / "sessions.json").write_text(json.dumps(sessions))


class BenchAgent:
    def __init__(self) -> None:
        self.conn: Any = None
        self.cancelled: dict[str, asyncio.Event] = {}
        self.mcp: dict[str, list[Any]] = {}
        self.kept: Any = None  # the MCP server of the last ``mcp`` command, token and all

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **_: Any) -> schema.InitializeResponse:
        capabilities = schema.AgentCapabilities(
            load_session=True,
            mcp_capabilities=schema.McpCapabilities(http=True),
            session_capabilities=schema.SessionCapabilities(
                resume=schema.SessionResumeCapabilities()
            ),
        )
        return schema.InitializeResponse(
            protocol_version=protocol_version, agent_capabilities=capabilities
        )

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> schema.NewSessionResponse:
        sessions = saved()
        session_id = f"bench-{len(sessions) + 1}-{os.getpid()}"
        sessions[session_id] = {"memory": None, "cwd": cwd, "turns": []}
        save(sessions)
        self.mcp[session_id] = list(mcp_servers or [])
        return schema.NewSessionResponse(session_id=session_id)

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> schema.LoadSessionResponse:
        session = saved().get(session_id)
        if session is None:
            raise acp.RequestError.resource_not_found(session_id)
        self.mcp[session_id] = list(mcp_servers or [])
        for prompt, answer in session["turns"]:  # the history, as the protocol replays it
            await self.say(session_id, acp.update_user_message_text(prompt))
            await self.say(session_id, acp.update_agent_message_text(answer))
        return schema.LoadSessionResponse()

    async def resume_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> schema.ResumeSessionResponse:
        if session_id not in saved():
            raise acp.RequestError.resource_not_found(session_id)
        self.mcp[session_id] = list(mcp_servers or [])
        return schema.ResumeSessionResponse()

    async def say(self, session_id: str, update: Any) -> None:
        await self.conn.session_update(session_id=session_id, update=update)

    async def text(self, session_id: str, text: str) -> None:
        await self.say(session_id, acp.update_agent_message_text(text))

    async def cancel(self, session_id: str, **_: Any) -> None:
        self.cancelled.setdefault(session_id, asyncio.Event()).set()

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> schema.PromptResponse:
        words = "".join(getattr(b, "text", "") for b in prompt).split()
        command, args = (words[0], words[1:]) if words else ("", [])
        self.cancelled[session_id] = asyncio.Event()
        handler = getattr(self, f"do_{command}", None)
        if handler is None:
            await self.text(session_id, f"unknown command {command!r}")
            return schema.PromptResponse(stop_reason="end_turn")
        reason = await handler(session_id, args, prompt) or "end_turn"
        sessions = saved()
        if session_id in sessions:
            sessions[session_id]["turns"].append([" ".join(words), command])
            save(sessions)
        usage = schema.Usage(input_tokens=11, output_tokens=7, total_tokens=18)
        return schema.PromptResponse(stop_reason=reason, usage=usage)

    async def do_stream(self, session_id: str, args: list[str], prompt: list[Any]) -> None:
        await self.say(session_id, acp.update_agent_thought_text("thinking it over"))
        await self.say(session_id, acp.update_plan([acp.plan_entry("say three words")]))
        for word in ("one ", "two ", "three"):
            await self.text(session_id, word)
            await asyncio.sleep(0.05)
        await self.say(
            session_id, schema.UsageUpdate(session_update="usage_update", used=40, size=1000)
        )
        links = [b.uri for b in prompt if getattr(b, "type", "") == "resource_link"]
        if links:
            await self.text(session_id, " links:" + ",".join(links))

    async def do_edit(self, session_id: str, args: list[str], prompt: list[Any]) -> None:
        path = args[0] if args else "/tmp/x.txt"
        await self.say(
            session_id, acp.start_edit_tool_call("edit-1", f"Edit {path}", path, "gamma")
        )
        await self.say(session_id, acp.update_tool_call("edit-1", status="in_progress"))
        diff = acp.tool_diff_content(path, "alpha\ngamma\n", "alpha\nbeta\n")
        note = acp.tool_content(acp.text_block("replaced beta"))
        await self.say(
            session_id, acp.update_tool_call("edit-1", status="completed", content=[diff, note])
        )
        await self.text(session_id, "edited")

    async def do_permission(self, session_id: str, args: list[str], prompt: list[Any]) -> None:
        call = acp.start_tool_call(
            "run-1", "Run make clean", kind="execute", raw_input={"cmd": "make clean"}
        )
        await self.say(session_id, call)
        answer = await self.conn.request_permission(
            session_id=session_id,
            tool_call=schema.ToolCallUpdate(tool_call_id="run-1", title="Run make clean"),
            options=OPTIONS,
        )
        outcome = answer.outcome
        chosen = getattr(outcome, "option_id", None) or outcome.outcome
        status = "completed" if chosen.startswith("yes") else "failed"
        await self.say(session_id, acp.update_tool_call("run-1", status=status))
        await self.text(session_id, f"outcome:{chosen}")

    async def do_read(
        self, session_id: str, args: list[str], prompt: list[Any], answer_in: str = ""
    ) -> None:
        line = int(args[1]) if len(args) > 1 else None
        limit = int(args[2]) if len(args) > 2 else None
        try:
            answer = await self.conn.read_text_file(
                session_id=session_id, path=args[0], line=line, limit=limit
            )
        except acp.RequestError as exc:
            await self.text(answer_in or session_id, f"error:{exc}")
            return
        await self.text(answer_in or session_id, f"content:{answer.content}")

    async def do_readas(self, session_id: str, args: list[str], prompt: list[Any]) -> None:
        """``readas SESSION PATH``: a read naming another session than the prompt's."""
        await self.do_read(args[0], args[1:], prompt, answer_in=session_id)

    async def do_write(self, session_id: str, args: list[str], prompt: list[Any]) -> None:
        try:
            await self.conn.write_text_file(
                session_id=session_id, path=args[0], content=" ".join(args[1:])
            )
        except acp.RequestError as exc:
            await self.text(session_id, f"error:{exc}")
            return
        await self.text(session_id, "wrote")

    async def do_notebook(self, session_id: str, args: list[str], prompt: list[Any]) -> None:
        """``notebook PATH edit``: cell 'cell-1' changed and a new cell after 'cell-2', written
        back whole; ``notebook PATH new``: a notebook of one cell; ``notebook PATH bad``: a text
        that is no notebook."""
        path, mode = args[0], args[1]
        text = "{'cells': not json"
        if mode == "new":
            cell = {"cell_type": "markdown", "metadata": {}, "source": "hi"}
            text = json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [cell]})
        if mode == "edit":
            read = await self.conn.read_text_file(session_id=session_id, path=path)
            notebook = json.loads(read.content)
            notebook["cells"][0]["source"] = "x = 4"
            new = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None}
            notebook["cells"].insert(2, {**new, "source": "print(x * 2)"})
            text = json.dumps(notebook, indent=1)
        try:
            answer = await self.conn.write_text_file(session_id=session_id, path=path, content=text)
        except acp.RequestError as exc:
            await self.text(session_id, f"error:{exc} data:{json.dumps(exc.data)}")
            return
        await self.text(session_id, f"wrote meta:{json.dumps(answer.field_meta)}")

    async def do_wait(self, session_id: str, args: list[str], prompt: list[Any]) -> str:
        await self.text(session_id, "waiting")
        await self.cancelled[session_id].wait()
        await self.text(session_id, " stopped by the cancel")
        return "cancelled"

    async def do_crash(self, session_id: str, args: list[str], prompt: list[Any]) -> None:
        await self.text(session_id, "about to crash")
        await asyncio.sleep(0.1)
        sys.stderr.write(f"bench agent: crashing, key {os.environ.get('BENCH_SECRET')}\n")
        sys.stderr.flush()
        os._exit(3)

    async def do_env(self, session_id: str, args: list[str], prompt: list[Any]) -> None:
        # its whole environment, names and values: the test looks for the server's secrets
        await self.text(session_id, " ".join(f"{k}={v}" for k, v in sorted(os.environ.items())))

    async def do_session(self, session_id: str, args: list[str], prompt: list[Any]) -> None:
        await self.text(session_id, f"session:{session_id}")

    async def do_remember(self, session_id: str, args: list[str], prompt: list[Any]) -> None:
        sessions = saved()
        sessions[session_id]["memory"] = " ".join(args)
        save(sessions)
        await self.text(session_id, "remembered")

    async def do_recall(self, session_id: str, args: list[str], prompt: list[Any]) -> None:
        await self.text(session_id, f"recalled:{saved()[session_id]['memory']}")

    async def do_mcp(self, session_id: str, args: list[str], prompt: list[Any]) -> None:
        servers = self.mcp.get(session_id) or []
        if not servers:
            await self.text(session_id, "mcp:none")
            return
        self.kept = server = servers[0]
        status, names = await self.tools_of(server)
        await self.text(session_id, f"mcp:{server.name}:{status}:{','.join(names)}")

    async def do_mcpold(self, session_id: str, args: list[str], prompt: list[Any]) -> None:
        """The MCP server (and token) the last ``mcp`` command used, whatever session it was."""
        if self.kept is None:
            await self.text(session_id, "mcpold:none")
            return
        status, _ = await self.tools_of(self.kept)
        await self.text(session_id, f"mcpold:{status}")

    async def tools_of(self, server: Any) -> tuple[int, list[str]]:
        headers = {h.name: h.value for h in server.headers}
        headers["Accept"] = "application/json, text/event-stream"
        async with httpx.AsyncClient(headers=headers, timeout=30, trust_env=False) as http:
            init = {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            }
            opened = await http.post(
                server.url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}
            )
            if opened.status_code != 200:
                return opened.status_code, []
            headers = {"Mcp-Session-Id": opened.headers.get("Mcp-Session-Id", "")}
            listed = await http.post(
                server.url,
                headers=headers,
                json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            )
        return opened.status_code, sorted(t["name"] for t in listed.json()["result"]["tools"])

    async def do_terminal(self, session_id: str, args: list[str], prompt: list[Any]) -> None:
        command, rest = (args[0], args[1:]) if args else ("echo", ["hi", "there"])
        try:
            made = await self.conn.create_terminal(
                session_id=session_id, command=command, args=rest
            )
            exited = await self.conn.wait_for_terminal_exit(
                session_id=session_id, terminal_id=made.terminal_id
            )
            output = await self.conn.terminal_output(
                session_id=session_id, terminal_id=made.terminal_id
            )
            await self.conn.release_terminal(session_id=session_id, terminal_id=made.terminal_id)
        except acp.RequestError as exc:
            await self.text(session_id, f"declined:{exc}")
            return
        await self.text(session_id, f"terminal:{exited.exit_code}:{output.output.strip()}")

    async def do_refuse(self, session_id: str, args: list[str], prompt: list[Any]) -> str:
        await self.text(session_id, "no")
        return "refusal"


if __name__ == "__main__":
    asyncio.run(acp.run_agent(BenchAgent(), use_unstable_protocol=True))  # session/resume
