"""Jobs in A2A's shapes (pure): a Task, its status, and the streamed status and artifact updates,
in the version the method name belongs to (v1.0: ``{"task": ...}``, ``TASK_STATE_*``,
``ROLE_*``, updates wrapped as ``statusUpdate`` / ``artifactUpdate``; v0.3: ``kind`` fields,
lower-case states, ``final`` on the last status update)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Literal

from .jobs import Job, JobState

Version = Literal["1.0", "0.3"]

STATES: dict[Version, dict[JobState, str]] = {
    "1.0": {
        "running": "TASK_STATE_WORKING",
        "succeeded": "TASK_STATE_COMPLETED",
        "failed": "TASK_STATE_FAILED",
        "cancelled": "TASK_STATE_CANCELED",
    },
    "0.3": {
        "running": "working",
        "succeeded": "completed",
        "failed": "failed",
        "cancelled": "canceled",
    },
}


def state_of(name: str) -> JobState | None:
    """The job state an A2A state name (either version) stands for, else None."""
    for states in STATES.values():
        for state, shown in states.items():
            if shown == name:
                return state
    return None


def part(text: str, version: Version) -> dict[str, Any]:
    return {"kind": "text", "text": text} if version == "0.3" else {"text": text}


def message(
    job: Job, role: Literal["user", "agent"], text: str, message_id: str, version: Version
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "messageId": message_id,
        "role": role if version == "0.3" else f"ROLE_{role.upper()}",
        "parts": [part(text, version)],
        "taskId": job.job_id,
        "contextId": job.context_id,
    }
    if version == "0.3":
        body["kind"] = "message"
    return body


def status(job: Job, version: Version) -> dict[str, Any]:
    """The task's status now: its state, and why it did not succeed once it ended."""
    body: dict[str, Any] = {
        "state": STATES[version][job.state],
        "timestamp": datetime.now(timezone.utc).isoformat().replace("+00:00", "Z"),
    }
    error = job.error() if job.done else None
    if error:
        body["message"] = message(job, "agent", error, f"{job.job_id}-status", version)
    return body


def answer_artifact(job: Job, text: str, version: Version) -> dict[str, Any]:
    return {"artifactId": f"{job.job_id}-answer", "name": "answer", "parts": [part(text, version)]}


def render_task(
    job: Job,
    version: Version,
    history_length: int | None = None,
    *,
    artifacts: bool = True,
) -> dict[str, Any]:
    """The job as an A2A Task (its answer as one text artifact once it ended)."""
    history = (
        [message(job, "user", job.prompt, f"{job.job_id}-prompt", version)] if job.prompt else []
    )
    history += [message(job, "user", text, i, version) for i, text in job.steered()]
    if history_length is not None:
        history = history[-history_length:] if history_length > 0 else []
    task: dict[str, Any] = {
        "id": job.job_id,
        "contextId": job.context_id,
        "status": status(job, version),
        "history": history,
        "metadata": {"runId": job.run.run_id, "soul": job.soul},
    }
    answer = job.answer() if job.done and artifacts else ""
    if answer:
        task["artifacts"] = [answer_artifact(job, answer, version)]
    if version == "0.3":
        task["kind"] = "task"
    return task


def task_event(job: Job, version: Version) -> dict[str, Any]:
    """A stream's first event: the task as it is."""
    task = render_task(job, version)
    return {"task": task} if version == "1.0" else task


def artifact_update(job: Job, text: str, version: Version, *, append: bool, last: bool) -> Any:
    """A piece of the answer: the first replaces, the others append, the last says so."""
    update: dict[str, Any] = {
        "taskId": job.job_id,
        "contextId": job.context_id,
        "artifact": answer_artifact(job, text, version),
        "append": append,
        "lastChunk": last,
    }
    if version == "1.0":
        return {"artifactUpdate": update}
    return {**update, "kind": "artifact-update"}


def status_update(job: Job, version: Version) -> dict[str, Any]:
    """The task's status; the stream's last event once the task ended."""
    update: dict[str, Any] = {
        "taskId": job.job_id,
        "contextId": job.context_id,
        "status": status(job, version),
    }
    if version == "1.0":
        return {"statusUpdate": update}
    return {**update, "kind": "status-update", "final": job.done}
