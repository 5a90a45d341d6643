"""A2A over JSON-RPC 2.0: ``SendMessage``, ``GetTask``, ``CancelTask``, ``ListTasks``,
``SendStreamingMessage``, ``SubscribeToTask`` (v1.0 names) and ``message/send``, ``tasks/get``,
``tasks/cancel``, ``tasks/list``, ``message/stream``, ``tasks/resubscribe`` (v0.3 names), mapped
onto the peer jobs. The two streaming ones answer as SSE (``peer/streams.py``).

A task is a job: its id is the job id, its context the job's session, its answer one text
artifact. A send whose message names a working task (``taskId``) steers it: the text reaches
its model at the next step, as a person's message does (runs/steering.py). Answers use the
shapes of the version the method name belongs to (``rendering``).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Literal

from ..contracts.errors import JsonBodyError, ResolveError, RpcError, TooManyRequests
from .jobs import Job, JobManager
from .limits import id_problem, loads
from .listing import list_answer, list_params, run_query
from .rendering import Version, render_task

Op = Literal["send", "get", "cancel", "list", "stream", "subscribe"]

METHODS: dict[str, tuple[Op, Version]] = {
    "SendMessage": ("send", "1.0"),
    "GetTask": ("get", "1.0"),
    "CancelTask": ("cancel", "1.0"),
    "ListTasks": ("list", "1.0"),
    "SendStreamingMessage": ("stream", "1.0"),
    "SubscribeToTask": ("subscribe", "1.0"),
    "message/send": ("send", "0.3"),
    "tasks/get": ("get", "0.3"),
    "tasks/cancel": ("cancel", "0.3"),
    "tasks/list": ("list", "0.3"),
    "message/stream": ("stream", "0.3"),
    "tasks/resubscribe": ("subscribe", "0.3"),
}

STREAMING: frozenset[Op] = frozenset({"stream", "subscribe"})
"""The operations answered as an SSE stream of JSON-RPC responses."""

READING: frozenset[Op] = frozenset({"get", "list", "subscribe"})
"""The operations that only read (``resolve`` read; the others start or stop work: execute)."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_ERROR = -32000
TASK_NOT_FOUND = -32001
TASK_NOT_CANCELABLE = -32002
UNSUPPORTED_OPERATION = -32004
CONTENT_TYPE_NOT_SUPPORTED = -32005
RATE_LIMITED = -32029
"""A server-defined code: the peer went over ``c.Resolve.peer_submit_rate`` (HTTP 429, with
``Retry-After`` and ``error.data.retry_after``)."""

SEND_WAIT = 120.0
"""Longest a blocking send waits for its task to end before answering with it still working."""


class RateLimited(RpcError):
    """:data:`RATE_LIMITED`, with the seconds to wait."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(RATE_LIMITED, message)
        self.retry_after = retry_after


@dataclass(frozen=True)
class Call:
    id: Any
    op: Op
    version: Version
    params: dict[str, Any]


def parse_call(raw: bytes) -> Call:
    """Read one JSON-RPC request; raise :class:`RpcError` for what JSON-RPC calls invalid."""
    try:
        body = loads(raw)
    except JsonBodyError as exc:
        raise RpcError(PARSE_ERROR, str(exc)) from exc
    if isinstance(body, list):
        raise RpcError(INVALID_REQUEST, "batch requests are not supported; send one at a time")
    if not isinstance(body, dict) or body.get("jsonrpc") != "2.0":
        raise RpcError(INVALID_REQUEST, 'a JSON-RPC request is an object with "jsonrpc": "2.0"')
    request_id = body.get("id")
    method = body.get("method")
    params = body.get("params", {})
    if not isinstance(method, str):
        raise RpcError(INVALID_REQUEST, '"method" must be a string')
    if method not in METHODS:
        raise RpcError(
            METHOD_NOT_FOUND, f"no method '{method[:64]}'; this agent offers " + ", ".join(METHODS)
        )
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, '"params" must be an object')
    op, version = METHODS[method]
    return Call(id=request_id, op=op, version=version, params=params)


def request_id(raw: bytes) -> Any:
    """The id of a request that failed to parse, when it has one (else null)."""
    body = None
    with contextlib.suppress(JsonBodyError):
        body = loads(raw)
    value = body.get("id") if isinstance(body, dict) else None
    # JSON-RPC ids are strings, numbers or null: anything else is not echoed back
    return value if isinstance(value, (str, int, float)) and not isinstance(value, bool) else None


def message_text(params: dict[str, Any]) -> tuple[str, str | None]:
    """The prompt and the soul (``metadata.soul``) of a send's message."""
    message = params.get("message")
    if not isinstance(message, dict):
        raise RpcError(INVALID_PARAMS, "params.message: an object with parts is required")
    parts = message.get("parts")
    if not isinstance(parts, list) or not parts:
        raise RpcError(INVALID_PARAMS, "params.message.parts: a non-empty list is required")
    texts: list[str] = []
    for part in parts:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
        else:
            raise RpcError(
                CONTENT_TYPE_NOT_SUPPORTED, "only text parts are accepted (defaultInputModes)"
            )
    text = "\n\n".join(t for t in texts if t.strip())
    if not text:
        raise RpcError(INVALID_PARAMS, "params.message.parts: the text is empty")
    soul = None
    for metadata in (message.get("metadata"), params.get("metadata")):
        if isinstance(metadata, dict) and isinstance(metadata.get("soul"), str):
            soul = metadata["soul"]
            break
    if soul is not None:
        problem = id_problem("metadata.soul", soul)
        if problem:
            raise RpcError(INVALID_PARAMS, problem)
    return text, soul


def message_task(params: dict[str, Any]) -> str | None:
    """The working task a send's message continues (``message.taskId``), else None."""
    message = params.get("message")
    value = message.get("taskId") if isinstance(message, dict) else None
    if value is None or value == "":
        return None
    return task_id({"id": value})


async def steer_task(jobs: JobManager, owner: str, params: dict[str, Any]) -> Job | None:
    """A send to a working task (``taskId``) steers it: its text reaches the model at the
    task's next step. None when the message names no task (it starts one)."""
    target = message_task(params)
    if target is None:
        return None
    text, _soul = message_text(params)
    job = jobs.get(owner, target)
    context = context_id(params)
    if context is not None and context != job.context_id:
        raise RpcError(INVALID_PARAMS, f"task '{target}' is not in contextId '{context}'")
    if job.done:
        raise RpcError(
            UNSUPPORTED_OPERATION,
            f"task '{target}' already ended ({job.state}); send a new message without taskId "
            "(with its contextId to continue the conversation)",
        )
    await jobs.steer(job, text)
    return job


def context_id(params: dict[str, Any]) -> str | None:
    """The message's ``contextId`` when it is an id (the session it continues), else None."""
    message = params.get("message")
    value = message.get("contextId") if isinstance(message, dict) else None
    return value if isinstance(value, str) and not id_problem("contextId", value) else None


def task_id(params: dict[str, Any]) -> str:
    """``params.id`` (or a v1.0 resource name ``tasks/{id}``)."""
    value = params.get("id")
    if value is None and isinstance(params.get("name"), str):
        value = params["name"].removeprefix("tasks/")
    if value is None or value == "":
        raise RpcError(INVALID_PARAMS, "params.id: the task id is required")
    problem = id_problem("params.id: a task id", value)
    if problem:
        raise RpcError(INVALID_PARAMS, problem)
    return str(value)


def history_length(params: dict[str, Any]) -> int | None:
    config = params.get("configuration")
    value = params.get("historyLength")
    if value is None and isinstance(config, dict):
        value = config.get("historyLength")
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise RpcError(INVALID_PARAMS, "historyLength: a whole number ≥ 0")
    return value


def _blocking(params: dict[str, Any], version: Version) -> bool:
    config = params.get("configuration")
    if not isinstance(config, dict):
        return True
    if version == "1.0":
        return config.get("returnImmediately") is not True
    return config.get("blocking") is not False


def rpc_error(exc: ResolveError) -> RpcError:
    if isinstance(exc, TooManyRequests):
        return RateLimited(exc.message, exc.retry_after)
    if exc.status == 400:
        return RpcError(INVALID_PARAMS, exc.message)
    if exc.status == 404:
        return RpcError(TASK_NOT_FOUND, exc.message)
    if exc.status in (409, 503):
        return RpcError(SERVER_ERROR, exc.message)
    return RpcError(INTERNAL_ERROR, exc.message)


async def call(jobs: JobManager, owner: str, request: Call, *, wait: float = SEND_WAIT) -> Any:
    """Run one parsed call for ``owner`` and return its ``result``."""
    params, version = request.params, request.version
    history = history_length(params)
    if request.op in STREAMING:
        raise RpcError(INTERNAL_ERROR, "a streaming method is answered as a stream")
    try:
        if request.op == "list":
            wanted = list_params(params)
            page, following, total = await jobs.page(owner, run_query(owner, wanted))
            return list_answer(page, following, total, wanted, params, version, history)
        if request.op == "send":
            job = await steer_task(jobs, owner, params)
            if job is None:
                text, soul = message_text(params)
                job = await jobs.submit(owner, text, soul, context_id(params))
            if _blocking(params, version):
                await jobs.wait(job, wait)
            task = render_task(job, version, history)
            return {"task": task} if version == "1.0" else task
        job = jobs.get(owner, task_id(params))
        if request.op == "cancel":
            if job.done:
                raise RpcError(
                    TASK_NOT_CANCELABLE, f"task '{job.job_id}' already ended: {job.state}"
                )
            await jobs.cancel(owner, job.job_id)
            await jobs.wait(job, 10.0)
        return render_task(job, version, history)
    except RpcError:
        raise  # already the answer (and a ResolveError too)
    except ResolveError as exc:
        raise rpc_error(exc) from exc


def result(request_id: Any, value: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def error(request_id: Any, exc: RpcError) -> dict[str, Any]:
    body: dict[str, Any] = {"code": exc.code, "message": exc.message}
    if isinstance(exc, RateLimited):
        body["data"] = {"retry_after": exc.retry_after}
    return {"jsonrpc": "2.0", "id": request_id, "error": body}


def http_status(response: dict[str, Any]) -> int:
    """The HTTP status to send a response with: 400 when the body could not be read as JSON
    (bad or too deeply nested), 429 over the submit rate, else 200 (JSON-RPC errors travel in
    the body)."""
    err = response.get("error")
    code = err.get("code") if isinstance(err, dict) else None
    return {PARSE_ERROR: 400, RATE_LIMITED: 429}.get(code, 200) if isinstance(code, int) else 200


def retry_after(response: dict[str, Any]) -> int | None:
    """The seconds a rate-limited response asks the caller to wait, else None."""
    err = response.get("error")
    data = err.get("data") if isinstance(err, dict) else None
    value = data.get("retry_after") if isinstance(data, dict) else None
    return value if isinstance(value, int) else None


def refuse(raw: bytes, exc: RpcError) -> dict[str, Any]:
    """The response to a request that did not parse."""
    return error(request_id(raw), exc)


async def respond(
    jobs: JobManager, owner: str, request: Call, *, wait: float = SEND_WAIT
) -> dict[str, Any]:
    """The response to a parsed request (errors included)."""
    try:
        return result(request.id, await call(jobs, owner, request, wait=wait))
    except RpcError as exc:
        return error(request.id, exc)


async def handle(
    jobs: JobManager, owner: str, raw: bytes, *, wait: float = SEND_WAIT
) -> dict[str, Any]:
    """One JSON-RPC request body in, one response object out (errors included)."""
    try:
        request = parse_call(raw)
    except RpcError as exc:
        return refuse(raw, exc)
    return await respond(jobs, owner, request, wait=wait)
