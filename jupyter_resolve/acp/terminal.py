"""ACP's ``terminal/*`` for an external agent, when ``c.Resolve.acp_terminal`` is on.

A terminal is one command line run as the ``shell`` tool runs it: in the session's scratch
kernel, in its ``work/`` folder, under the sandbox when there is one (``c.Resolve.sandbox``),
killed after ``c.Resolve.tool_timeout``. It is recorded as a ``terminal`` call of the run, whose
``tool.output`` events show what it prints, live. The agent's ``cwd`` is not honoured (``work/``
is the only folder a command may write), and its ``env`` is set with ``env`` on the command
line, in the sandbox. Off (the default), every ``terminal/*`` request is declined.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import shlex
import time
from typing import Protocol

from acp import RequestError
from acp.schema import (
    CreateTerminalResponse,
    EnvVariable,
    KillTerminalResponse,
    ReleaseTerminalResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
)

from ..config import Resolve
from ..contracts.bodies import ToolCallRequest, ToolResult
from ..runs.run import Run
from ..tools.dispatch import ToolDispatcher

_STATUS = re.compile(r"\[(?:exit code (-?\d+)|killed by signal (\d+))\][^\n]*\Z")
MAX_TERMINALS = 16  # live at once in one turn


class TerminalHost(Protocol):
    config: Resolve
    tools: ToolDispatcher


class Terminal:
    def __init__(self, call_id: str, task: asyncio.Task[ToolResult], limit: int | None) -> None:
        self.call_id = call_id
        self.task = task
        self.limit = limit


def exit_status(result: ToolResult) -> tuple[int | None, str | None]:
    match = _STATUS.search(result.output.rstrip())
    if match is None:
        return None, "SIGKILL"  # timed out (or stopped): the group was killed
    if match.group(1) is not None:
        return int(match.group(1)), None
    return None, f"signal {match.group(2)}"


class Terminals:
    """The terminals of one turn (they end with it)."""

    def __init__(self, host: TerminalHost, run: Run) -> None:
        self.host = host
        self.run = run
        self.items: dict[str, Terminal] = {}
        self.made = 0

    def _get(self, terminal_id: str) -> Terminal:
        terminal = self.items.get(terminal_id)
        if terminal is None:
            raise RequestError.resource_not_found(f"terminal:{terminal_id[:100]}")
        return terminal

    async def create(
        self, command: str, args: list[str], env: list[EnvVariable], limit: int | None
    ) -> CreateTerminalResponse:
        if sum(not t.task.done() for t in self.items.values()) >= MAX_TERMINALS:
            raise RequestError(-32001, f"at most {MAX_TERMINALS} terminals run at once")
        self.made += 1
        terminal_id = call_id = f"term-{self.made}"
        assigned = [f"{e.name}={e.value}" for e in env]
        line = shlex.join([*(["env", *assigned] if assigned else []), command, *args])
        shown = shlex.join([command, *args])  # env values may be secrets: not in the log
        name = "terminal"
        self.run.emit_all(
            [
                (
                    "tool.requested",
                    {"call_id": call_id, "name": name, "arguments": {"command": shown}},
                ),
                ("tool.started", {"call_id": call_id, "name": name}),
            ]
        )
        task = asyncio.create_task(self._run(call_id, line))
        self.items[terminal_id] = Terminal(call_id, task, limit)
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def _run(self, call_id: str, line: str) -> ToolResult:
        started = time.monotonic()
        arguments = {"command": line, "timeout": self.host.config.tool_timeout}
        request = ToolCallRequest(
            run_id=self.run.run_id, call_id=call_id, name="shell", arguments=arguments
        )
        result = await self.host.tools.call(request, ["shell"])
        result.ms = int((time.monotonic() - started) * 1000)
        done = {"call_id": call_id, "name": "terminal", **result.model_dump()}
        self.run.emit("tool.completed", done)
        return result

    def _printed(self, terminal: Terminal) -> str:
        if terminal.task.done() and not terminal.task.cancelled():
            # what the command printed, without the shell tool's status line
            return _STATUS.sub("", terminal.task.result().output.rstrip()).rstrip("\n")
        return "".join(
            str(e.data.get("text", ""))
            for e in self.run.events
            if e.type == "tool.output" and e.data.get("call_id") == terminal.call_id
        )

    def output(self, terminal_id: str) -> TerminalOutputResponse:
        terminal = self._get(terminal_id)
        text = self._printed(terminal)
        truncated = False
        limit = terminal.limit
        if limit is not None and len(text.encode()) > limit:
            text = text.encode()[-limit:].decode("utf-8", "ignore")
            truncated = True
        status = None
        if terminal.task.done():
            code, signal = self._status(terminal)
            status = TerminalExitStatus(exit_code=code, signal=signal)
        return TerminalOutputResponse(output=text, truncated=truncated, exit_status=status)

    def _status(self, terminal: Terminal) -> tuple[int | None, str | None]:
        if terminal.task.cancelled():
            return None, "SIGKILL"
        return exit_status(terminal.task.result())

    async def wait(self, terminal_id: str) -> WaitForTerminalExitResponse:
        terminal = self._get(terminal_id)
        await asyncio.wait({terminal.task})
        code, signal = self._status(terminal)
        return WaitForTerminalExitResponse(exit_code=code, signal=signal)

    async def kill(self, terminal_id: str) -> KillTerminalResponse:
        terminal = self._get(terminal_id)
        await self._stop(terminal)
        return KillTerminalResponse()

    async def release(self, terminal_id: str) -> ReleaseTerminalResponse:
        await self._stop(self._get(terminal_id))
        del self.items[terminal_id]
        return ReleaseTerminalResponse()

    async def _stop(self, terminal: Terminal) -> None:
        if not terminal.task.done():
            terminal.task.cancel()  # the kernel is interrupted: the command's group is killed
            with contextlib.suppress(BaseException):
                await terminal.task

    async def close(self) -> None:
        for terminal in list(self.items.values()):
            await self._stop(terminal)
        self.items.clear()
