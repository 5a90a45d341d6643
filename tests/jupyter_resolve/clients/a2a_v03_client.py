"""An A2A client built on the official a2a-sdk 0.3 (run by .venv/a2a-03's interpreter).

MODE ``full``: read the card, then send (blocking), get, send without waiting and cancel, send
streaming, and resubscribe to a running task that is then cancelled; ``get:<id>``: only read
that task (a second client with the same credentials)."""

from __future__ import annotations

import asyncio
from typing import Any

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import (
    Message,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskIdParams,
    TaskQueryParams,
    TaskStatusUpdateEvent,
    TextPart,
)
from clientauth import arguments, http_client, report


def message(text: str) -> Message:
    return Message(
        message_id=f"m-{abs(hash(text))}", role=Role.user, parts=[Part(root=TextPart(text=text))]
    )


def answer(task: Task) -> str:
    return "".join(getattr(p.root, "text", "") for a in task.artifacts or [] for p in a.parts)


def kind(update: Any) -> str:
    if isinstance(update, TaskArtifactUpdateEvent):
        return "artifact-update"
    if isinstance(update, TaskStatusUpdateEvent):
        return "status-update"
    return "task"


async def task_of(events: Any) -> Task:
    last = [e async for e in events][-1]
    assert isinstance(last, tuple), last
    return last[0]


async def main() -> None:
    url, auth, mode = arguments()
    out: dict[str, Any] = {}
    async with http_client(auth) as http:
        card = await A2ACardResolver(http, url).get_agent_card()
        out["card"] = {
            "url": card.url,
            "streaming": card.capabilities.streaming,
            "schemes": sorted(card.security_schemes or {}),
            "security": card.security,
            "types": sorted(s.root.type for s in (card.security_schemes or {}).values()),
        }

        def client(**config: Any) -> Any:
            return ClientFactory(ClientConfig(httpx_client=http, **config)).create(card)

        plain, polling, streaming = (
            client(streaming=False),
            client(streaming=False, polling=True),
            client(streaming=True),
        )
        if mode.startswith("get:"):
            got = await plain.get_task(TaskQueryParams(id=mode[4:]))
            out["get"] = {"state": got.status.state.value, "answer": answer(got)}
            return report(out)

        sent = await task_of(plain.send_message(message("Say hello")))
        out["send"] = {"id": sent.id, "state": sent.status.state.value, "answer": answer(sent)}
        got = await plain.get_task(TaskQueryParams(id=sent.id))
        out["get"] = {"state": got.status.state.value, "answer": answer(got)}

        held = await task_of(polling.send_message(message("hold: cancel me")))
        cancelled = await plain.cancel_task(TaskIdParams(id=held.id))
        out["cancel"] = {"before": held.status.state.value, "after": cancelled.status.state.value}

        events = [e async for e in streaming.send_message(message("Stream an answer"))]
        updates = [u for _, u in events]
        pieces = [u for u in updates if isinstance(u, TaskArtifactUpdateEvent)]
        final = events[-1][0]
        out["stream"] = {
            "kinds": [kind(u) for u in updates],
            "answer": answer(final),  # the SDK's task manager put the pieces together
            "last_chunk": [u.last_chunk for u in pieces],
            "append": [u.append for u in pieces],
            "final": final.status.state.value,
        }

        watched = await task_of(polling.send_message(message("hold: watch me")))
        seen: list[str] = []
        async for watched_task, update in streaming.resubscribe(TaskIdParams(id=watched.id)):
            seen.append(kind(update))
            if update is None:
                await plain.cancel_task(TaskIdParams(id=watched.id))
            last = watched_task
        out["subscribe"] = {"kinds": seen, "final": last.status.state.value}
    report(out)


asyncio.run(main())
