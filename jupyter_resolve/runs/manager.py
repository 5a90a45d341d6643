"""The run manager: starts runs, drives them through the runtime, enforces the budgets the
runtime does not, cancels, lists and reloads them.

A run belongs to the gateway, not to the HTTP connection that started it: a client that goes
away leaves it running to its end; stopping is an explicit cancel.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ..config import Resolve
from ..contracts.bodies import AgentChatBody, CompletionReason, ToolCallRequest, ToolResult
from ..contracts.budget import Limits, exceeded, phrase
from ..contracts.context import fit_round, surely_fits
from ..contracts.errors import NotFound, RuntimeGone, RuntimeRejected, RuntimeStartError
from ..contracts.frames import Emitted
from ..contracts.run_rows import Owners, Position, RunQuery, RunRow
from ..runtime.supervisor import RuntimeSupervisor
from ..tools.dispatch import ToolDispatcher
from . import listing
from .approvals import release_approvals
from .compaction import Prepare
from .index import FILE as INDEX_FILE
from .index import RunIndex
from .index_upkeep import Ids, Upkeep, close_left_live
from .inference_notes import InferenceNotes
from .listing import SessionPage
from .log import RunLog, read_run_log
from .run import Run
from .tool_calls import SchemaOf, ToolCalls

# How long the end of a run waits for its calls in flight to stop (an interrupted kernel that
# does not go idle within 5 s is restarted, which takes a few seconds more). A call still
# running after that ends unseen: nothing of a run is sent or logged after run.completed.
CALL_STOP_SECONDS = 15.0
RECENT_RUNS = 32  # ended runs kept in memory (a client reattaching, a job's status read)
RETENTION_EVERY = 86400.0  # seconds between retention passes after the one at start


def new_id(prefix: str) -> str:
    return f"{prefix}-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(4)}"


class RunManager:
    """All runs of this gateway process, and the finished ones in the run log. A run owns its
    rounds (:meth:`fit_round`), its tool calls (:meth:`call_tool`), its budgets and its notes.

    ``runs`` holds the live runs only: an ended run leaves it (a few stay in a small cache),
    and :meth:`get` reads it back from its log; listings read the run index (DESIGN 10.2)."""

    def __init__(
        self,
        *,
        state_dir: Path,
        supervisor: RuntimeSupervisor,
        log: logging.Logger,
        config: Resolve,
        tools: ToolDispatcher,
        schema: SchemaOf,
        notes: InferenceNotes | None = None,
        protected: Ids | None = None,
    ) -> None:
        self.runs_dir = state_dir / "runs"
        self.notes = notes or InferenceNotes({})
        self.supervisor = supervisor
        self.log = log
        self.config = config
        self.runs: dict[str, Run] = {}
        self._recent: OrderedDict[str, Run] = OrderedDict()
        self.since = time.time()
        self.index = RunIndex(state_dir / INDEX_FILE, self.runs_dir, log)
        self._protected = protected or set
        self.calls = ToolCalls(config=config, log=log, tools=tools, schema=schema, budget=self)
        self.admitted: Callable[[Run], object] = lambda run: None  # sees each run start: audit/

    def start(
        self,
        body: AgentChatBody,
        *,
        session_id: str,
        soul: str | None,
        limits: Limits,
        started: dict[str, Any],
        tool_names: list[str],
        peer: str | None = None,
        parent: str | None = None,
        prepare: Prepare | None = None,
    ) -> Run:
        """Create a run, emit ``run.started`` and drive it in the background; ``prepare``, when
        given, is its first step (it may change the body: compaction's summary)."""
        run = Run(
            run_id=body.run_id,
            session_id=session_id,
            soul=soul,
            model=body.model,
            budget=limits.rounds,
            log=RunLog(self.runs_dir, body.run_id),
            tool_names=tool_names,
            limits=limits,
        )
        run.peer, run.parent = peer, parent
        run.task_id = started.get("task_id")
        self._admit(run, started)
        run.task = asyncio.create_task(self._drive(run, body, limits, prepare))
        run.task.add_done_callback(lambda _task: self._retire(run))
        return run

    def _admit(self, run: Run, started: dict[str, Any]) -> None:
        self.runs[run.run_id] = run
        self.admitted(run)  # before the run's first event
        run.emit("run.started", started)
        run.after_next_batch(lambda: listing.put_live(self.index, run))  # after 1st output

    def _retire(self, run: Run) -> None:
        """An ended run: its row says how it ended, and it leaves the registry."""
        if not run.completed:
            return
        self.index.put(listing.row_of(run))
        if self.runs.get(run.run_id) is run:
            del self.runs[run.run_id]
        self._remember(run)

    def _remember(self, run: Run) -> None:
        self._recent[run.run_id] = run
        self._recent.move_to_end(run.run_id)
        while len(self._recent) > RECENT_RUNS:
            self._recent.popitem(last=False)

    def start_local(
        self,
        *,
        session_id: str,
        started: dict[str, Any],
        tool_names: list[str],
        work: Callable[[Run], Awaitable[CompletionReason]],
    ) -> Run:
        """A run the gateway drives itself, with no model and no runtime: ``work`` emits its
        events and says how it ended (an MCP client's proposal is one such run, so that a
        person sees and decides it like any other)."""
        run_id = new_id("run")
        run = Run(
            run_id=run_id,
            session_id=session_id,
            soul=None,
            model="none",
            budget=0,
            log=RunLog(self.runs_dir, run_id),
            tool_names=tool_names,
        )
        self._admit(run, {**started, "session_id": session_id, "model": "none"})

        async def drive() -> None:
            reason: CompletionReason = "error"
            try:
                reason = await work(run)
            except asyncio.CancelledError:
                reason = "cancelled" if run.cancel_requested else "interrupted"
                raise
            finally:
                release_approvals(run)
                run.emit("run.completed", {"reason": reason, "rounds": 0})

        run.task = asyncio.create_task(drive())
        run.task.add_done_callback(lambda _task: self._retire(run))
        return run

    async def _drive(
        self, run: Run, body: AgentChatBody, limits: Limits, prepare: Prepare | None
    ) -> None:
        translator = run.translator
        timer = asyncio.get_running_loop().call_later(
            limits.seconds, lambda: asyncio.ensure_future(self.stop_for_budget(run, "time"))
        )
        try:
            if prepare is not None:
                body = await prepare(run, body)
            client = await self.supervisor.ensure_running()
            async for payloads in client.chat(body):
                emitted = self.notes.enrich(run.notes, translator.translate_batch(payloads))
                if translator.completed:
                    await self._end(run, emitted)
                    break
                run.emit_all(emitted)
                await asyncio.sleep(0)  # the clients' streams send what is ready meanwhile
                tokens = translator.prompt_tokens + translator.completion_tokens
                if limits.tokens and tokens > limits.tokens:
                    await self.stop_for_budget(run, "tokens")
                if limits.cost and run.notes.cost > limits.cost:
                    await self.stop_for_budget(run, "cost")
            if not translator.completed:
                if await self.supervisor.exited(within=1.0):
                    raise RuntimeGone("the stream ended when the process exited")
                message = "the runtime's stream ended without a 'done' frame"
                await self._end(run, translator.abort("runtime_protocol", message))
        except RuntimeGone as exc:
            if run.cancel_requested:
                await self._end(run, translator.finish("cancelled"))
            else:
                message = (
                    "the agent runtime stopped during this run (it is being restarted); "
                    f"ask again once /resolve/api/health shows it running ({exc})"
                )
                await self._end(run, translator.abort("runtime_died", message))
        except RuntimeRejected as exc:
            await self._end(run, translator.abort("runtime_rejected", str(exc)))
        except RuntimeStartError as exc:
            await self._end(run, translator.abort("runtime_unavailable", str(exc)))
        except asyncio.CancelledError:
            ended = translator.finish("cancelled" if run.cancel_requested else "interrupted")
            await self._end(run, ended)
            raise
        except Exception as exc:  # never leave a run without its run.completed
            self.log.exception("run %s failed", run.run_id)
            await self._end(run, translator.abort("internal", f"{type(exc).__name__}: {exc}"))
        finally:
            timer.cancel()
            release_approvals(run)

    async def _end(self, run: Run, emitted: list[Emitted]) -> None:
        """Emit the run's last events (they end with run.completed), its calls in flight
        stopped first: a call running in the scratch kernel is interrupted (the kernel keeps
        its state; the shell tool kills its process group), one in the gateway (web_fetch, a
        delegated run) cancelled, and each ends with its tool.completed (DESIGN 3.6)."""
        release_approvals(run)  # a call waiting for a person runs nothing, records nothing
        calls = [task for task in run.executing.values() if not task.done()]
        for task in calls:
            task.cancel()
        if calls:
            _, late = await asyncio.wait(calls, timeout=CALL_STOP_SECONDS)
            if late:
                self.log.warning("run %s ended with %d call(s) not stopped", run.run_id, len(late))
        run.emit_all(emitted)

    async def call_tool(self, request: ToolCallRequest) -> ToolResult:
        """``POST /resolve/internal/tools``: one tool call of a run (runs/tool_calls.py)."""
        try:
            run = self.get(request.run_id)
        except NotFound as exc:
            return ToolResult(ok=False, output=exc.message)
        return await self.calls.call(run, request)

    def fit_round(
        self, run_id: str | None, body: dict[str, Any], body_bytes: int | None = None
    ) -> dict[str, Any]:
        """A round's request fitted to its run's window (logged as ``context.compacted``);
        ``body_bytes``, the request's size, spares the count when it surely fits."""
        run = self.runs.get(run_id or "")
        if run is None or not run.window or run.completed:
            return body
        fits = body_bytes is not None and surely_fits(
            body_bytes, len(body["messages"]), window=run.window, ratio=run.ratio
        )
        if fits and not run.stepped:  # its own outputs a step elided must stay elided
            return body
        kept, tools = run.elided_tools, body.get("tools") or ()
        messages, compacted = fit_round(
            body["messages"], tools, window=run.window, ratio=run.ratio, elided_tools=kept
        )
        if compacted is not None:
            run.elided_tools = compacted["elided_tools"]
            run.stepped = True
            run.emit("context.compacted", compacted)
        return {**body, "messages": messages}

    def check_tool_budget(self, run: Run) -> str | None:
        """Count one tool call; the phrase of the budget it exceeds, if any."""
        run.tool_calls += 1
        limits = run.limits
        tokens = run.translator.prompt_tokens + run.translator.completion_tokens
        return exceeded(
            limits,
            tool_calls=run.tool_calls,
            seconds=time.time() - run.started_at,
            tokens=tokens,
            cost=run.notes.cost,
        )

    async def stop_for_budget(self, run: Run, which: str) -> None:
        """End a run whose tool-call, time, token or cost budget is used up (``budget``)."""
        if run.completed or run.translator.override_reason:
            return
        run.translator.override_reason = "budget"
        run.translator.note_error(f"stopped: the {phrase(run.limits, which)} is used up")
        await self._cancel_in_runtime(run)

    def get(self, run_id: str) -> Run:
        """A live run, or an ended one (from the cache, else read back from its log)."""
        run = self.runs.get(run_id) or self._recent.get(run_id)
        if run is None:
            run = self.load(run_id)
            self._remember(run)
        return run

    def held(self, run_id: str) -> Run | None:
        """The run if memory has it (live, or ended a moment ago)."""
        return self.runs.get(run_id) or self._recent.get(run_id)

    def load(self, run_id: str) -> Run:
        """A run as its log has it (not kept in memory: for reading a page of ended runs)."""
        run = self.runs.get(run_id) or self._recent.get(run_id)
        if run is not None:
            return run
        path = self.runs_dir / f"{run_id}.jsonl"
        if "/" in run_id or not path.is_file():
            raise NotFound(f"no run '{run_id}' in this server")
        return Run.from_log(run_id, read_run_log(path))

    def page(self, query: RunQuery) -> listing.RunPage:
        """A page of runs, newest first (``query.before``: after that cursor's run)."""
        return listing.page(self.index, list(self.runs.values()), query)

    def count(self, query: RunQuery) -> int:
        return listing.count(self.index, list(self.runs.values()), query)

    def sessions(self, before: Position | None, limit: int, owners: Owners = None) -> SessionPage:
        return listing.sessions(self.index, list(self.runs.values()), before, limit, owners)

    def session_rows(self, session_id: str) -> list[RunRow]:
        """A session's runs, oldest first (its transcript reads only these)."""
        live = list(self.runs.values())
        if self.index.reconciled.is_set():
            return listing.session_rows(self.index, live, session_id)
        # while the index is rebuilt from the logs, the logs' first lines still find them all
        return listing.session_rows(self.index, live, session_id, scan=self.runs_dir)

    def indexed(self, timeout: float | None = None) -> bool:
        """Wait until the index has every row queued so far (its rebuild included)."""
        return self.index.flush(timeout)

    async def cancel(self, run_id: str) -> Run:
        """Cancel a live run: the runtime aborts its in-flight requests and says ``cancelled``,
        the run's calls in flight are stopped, and the run ends ``cancelled``: returns once it
        has (or after a bound, should a tool not stop)."""
        run = self.get(run_id)
        if run.completed:
            return run
        run.cancel_requested = True
        # A cancel that crosses the run's end in the runtime (its last round already answered,
        # a call refused because of this cancel) still ends the run cancelled: as it was asked.
        run.translator.override_reason = run.translator.override_reason or "cancelled"
        await self._cancel_in_runtime(run)
        if run.task is not None and not run.task.done():
            await asyncio.wait({run.task}, timeout=CALL_STOP_SECONDS + 5)
        return run

    async def _cancel_in_runtime(self, run: Run) -> None:
        # The runtime hears of the cancel before a waiting call is released: released first,
        # the call's result reached the runtime, which went on to another round and ended `stop`.
        client = self.supervisor.client
        cancelled = False
        if client is not None:
            with contextlib.suppress(Exception):
                cancelled = await client.cancel(run.run_id)
        release_approvals(run)
        if not cancelled and run.task is not None and not run.task.done():
            # The runtime does not know the run (not started yet, or gone): stop it here.
            run.task.cancel()

    def mark_interrupted(self) -> list[str]:
        """On start: runs a previous process left live end ``interrupted`` in their log (those
        the index says were live, and logs it does not know; a new index leaves them to
        :meth:`start_upkeep`, in the background)."""
        return close_left_live(self.index, self.runs_dir)

    def start_upkeep(self) -> None:
        """In the background: bring the index up to date with the logs, then apply
        ``c.Resolve.run_retention_days`` now and once a day."""
        upkeep = Upkeep(
            runs_dir=self.runs_dir,
            since=self.since,
            live=lambda: set(self.runs.copy()),
            protected=self._protected,
            stopping=self.index.stopping,
            reconciled=self.index.reconciled,
            log=self.log,
        )
        self.index.submit(upkeep.reconcile)
        days = float(getattr(self.config, "run_retention_days", 0) or 0)
        if days > 0:
            self.index.submit(lambda db: upkeep.retain(db, days))
            self.index.every(RETENTION_EVERY, lambda db: upkeep.retain(db, days))

    async def stop(self) -> None:
        """Server shutdown: runs still live end ``interrupted``."""
        for run in list(self.runs.values()):  # an ended run leaves the registry meanwhile
            if run.task is not None and not run.task.done():
                run.task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await run.task
        await asyncio.to_thread(self.index.close)
