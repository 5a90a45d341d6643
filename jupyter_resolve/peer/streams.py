"""Streaming A2A (``SendStreamingMessage`` / ``message/stream``, ``SubscribeToTask`` /
``tasks/resubscribe``): the JSON-RPC responses an SSE stream carries, from the job's run events.

The stream opens with the task as it is, then the answer as artifact updates while the run
writes it (the first piece replaces, later ones append, the last says ``lastChunk``), and ends
with the task's final status update. A failure before the task exists is the stream's only
event: a JSON-RPC error. The run belongs to the gateway: a client that goes away leaves it be.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from ..contracts.errors import ResolveError, RpcError
from .jobs import Job, JobManager
from .jsonrpc import (
    UNSUPPORTED_OPERATION,
    Call,
    context_id,
    error,
    message_text,
    result,
    rpc_error,
    steer_task,
    task_id,
)
from .rendering import artifact_update, status_update, task_event


async def _job(jobs: JobManager, owner: str, request: Call) -> Job:
    params = request.params
    if request.op == "stream":
        steered = await steer_task(jobs, owner, params)
        if steered is not None:
            return steered
        text, soul = message_text(params)
        return await jobs.submit(owner, text, soul, context_id(params))
    job = jobs.get(owner, task_id(params))
    if job.done:
        raise RpcError(
            UNSUPPORTED_OPERATION,
            f"task '{job.job_id}' already ended ({job.state}): read it with GetTask",
        )
    return job


async def frames(
    jobs: JobManager, owner: str, request: Call, *, idle: float | None = None
) -> AsyncIterator[dict[str, Any] | None]:
    """The responses to send, in order; None after ``idle`` seconds without one (a keep-alive)."""
    version = request.version
    try:
        job = await _job(jobs, owner, request)
    except RpcError as exc:
        yield error(request.id, exc)
        return
    except ResolveError as exc:
        yield error(request.id, rpc_error(exc))
        return
    yield result(request.id, task_event(job, version))
    run = job.run
    held: list[str] = []  # the newest piece waits: only the run's end tells it is the last
    sent = False
    async for event in run.watch(0, idle=idle):
        if event is None:
            yield None
            continue
        if event.type == "text.delta":
            held.append(str(event.data.get("text", "")))
        if event.seq < len(run.events) or run.completed or len(held) < 2:
            continue  # more is ready (or nothing to send yet): send it together
        text, held = "".join(held[:-1]), held[-1:]
        yield result(request.id, artifact_update(job, text, version, append=sent, last=False))
        sent = True
    if held:
        text = "".join(held)
        yield result(request.id, artifact_update(job, text, version, append=sent, last=True))
    yield result(request.id, status_update(job, version))
