"""The run manager: starts runs, drives them through the runtime, cancels and lists them.

A run belongs to the gateway, not to the HTTP connection that started it: a client that goes
away leaves it running to its end; stopping is an explicit cancel.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from pathlib import Path
from typing import Any

from ..chat_body import build_agent_chat_body
from ..errors import NotFound, Unavailable
from ..models import AgentChatBody, ChatRequest, RunInfo
from ..runtime.client import RuntimeGone, RuntimeRejected
from ..runtime.supervisor import RuntimeStartError, RuntimeSupervisor
from .log import RunLog
from .run import Run


def new_id(prefix: str) -> str:
    return f"{prefix}-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(4)}"


class RunManager:
    """All runs of this gateway process."""

    def __init__(
        self,
        *,
        state_dir: Path,
        supervisor: RuntimeSupervisor,
        log: logging.Logger,
    ) -> None:
        self.runs_dir = state_dir / "runs"
        self.supervisor = supervisor
        self.log = log
        self.runs: dict[str, Run] = {}

    def start(
        self,
        request: ChatRequest,
        *,
        model: str,
        tools: list[dict[str, Any]],
        discipline: str,
        rounds: int,
        soul_prompt: str = "",
        tool_names: list[str] | None = None,
    ) -> Run:
        """Create a run, emit ``run.started`` and drive it in the background."""
        run_id = new_id("run")
        body = build_agent_chat_body(
            request,
            run_id=run_id,
            model=model,
            tools=tools,
            discipline=discipline,
            soul_prompt=soul_prompt,
            rounds=rounds,
        )
        session_id = request.session_id or new_id("session")
        run = Run(
            run_id=run_id,
            session_id=session_id,
            soul=request.soul,
            model=model,
            budget=rounds,
            log=RunLog(self.runs_dir, run_id),
            tool_names=tool_names or [],
        )
        self.runs[run_id] = run
        run.emit(
            "run.started",
            {
                "session_id": session_id,
                "soul": request.soul,
                "model": model,
                "budget": {"rounds": rounds},
                "tools": run.tool_names,
            },
        )
        run.task = asyncio.create_task(self._drive(run, body))
        return run

    async def _drive(self, run: Run, body: AgentChatBody) -> None:
        translator = run.translator
        try:
            client = await self.supervisor.ensure_running()
            async for payload in client.chat(body):
                run.emit_all(translator.translate_payload(payload))
                if translator.completed:
                    break
            if not translator.completed:
                if await self.supervisor.exited(within=1.0):
                    raise RuntimeGone("the stream ended when the process exited")
                run.emit_all(
                    translator.abort(
                        "runtime_protocol", "the runtime's stream ended without a 'done' frame"
                    )
                )
        except RuntimeGone as exc:
            if run.cancel_requested:
                run.emit_all(translator.finish("cancelled"))
            else:
                message = (
                    "the agent runtime stopped during this run (it is being restarted); "
                    f"ask again once /resolve/api/health shows it running ({exc})"
                )
                run.emit_all(translator.abort("runtime_died", message))
        except RuntimeRejected as exc:
            run.emit_all(translator.abort("runtime_rejected", str(exc)))
        except RuntimeStartError as exc:
            run.emit_all(translator.abort("runtime_unavailable", str(exc)))
        except asyncio.CancelledError:
            run.emit_all(translator.finish("cancelled" if run.cancel_requested else "interrupted"))
            raise
        except Exception as exc:  # never leave a run without its run.completed
            self.log.exception("run %s failed", run.run_id)
            run.emit_all(translator.abort("internal", f"{type(exc).__name__}: {exc}"))

    def get(self, run_id: str) -> Run:
        run = self.runs.get(run_id)
        if run is None:
            raise NotFound(f"no run '{run_id}' in this server")
        return run

    def list(self, session_id: str | None = None) -> list[RunInfo]:
        runs = [r for r in self.runs.values() if session_id in (None, r.session_id)]
        return [r.info() for r in sorted(runs, key=lambda r: r.started_at)]

    async def cancel(self, run_id: str) -> Run:
        """Cancel a live run: the runtime aborts its in-flight requests and says ``cancelled``."""
        run = self.get(run_id)
        if run.completed:
            return run
        run.cancel_requested = True
        client = self.supervisor.client
        cancelled = False
        if client is not None:
            with contextlib.suppress(Exception):
                cancelled = await client.cancel(run_id)
        if not cancelled and run.task is not None:
            # The runtime does not know the run (not started yet, or gone): stop it here.
            run.task.cancel()
        return run

    async def stop(self) -> None:
        """Server shutdown: runs still live end ``interrupted``."""
        for run in self.runs.values():
            if run.task is not None and not run.task.done():
                run.task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await run.task

    def require_runtime(self) -> None:
        if self.supervisor.state == "failed":
            raise Unavailable(f"the agent runtime is not available: {self.supervisor.last_error}")
