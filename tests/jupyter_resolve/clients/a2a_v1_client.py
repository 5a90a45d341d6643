"""An A2A client built on the official a2a-sdk 1.x (run by .venv/a2a-1's interpreter).

MODE ``full``: read the card, then send (blocking), get, send without waiting and cancel, send
streaming, list, and subscribe to a running task that is then cancelled; ``get:<id>``: only
read that task (a second client with the same credentials)."""

from __future__ import annotations

import asyncio
from typing import Any

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.compat.v0_3 import types as v03
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)
from clientauth import arguments, http_client, report
from google.protobuf.json_format import MessageToDict


def request(text: str) -> SendMessageRequest:
    message = Message(
        message_id=f"m-{abs(hash(text))}", role=Role.ROLE_USER, parts=[Part(text=text)]
    )
    return SendMessageRequest(message=message)


def state(task: Task) -> str:
    return str(TaskState.Name(task.status.state))


def answer(task: Task) -> str:
    return "".join(p.text for a in task.artifacts for p in a.parts)


def kind(event: StreamResponse) -> str:
    return str(event.WhichOneof("payload"))


async def main() -> None:
    url, auth, mode = arguments()
    out: dict[str, Any] = {}
    async with http_client(auth) as http:
        raw = (await http.get(url + "/.well-known/agent-card.json")).json()
        v03.AgentCard.model_validate(raw)  # the SDK's own v0.3 model reads it too
        card = await A2ACardResolver(http, url).get_agent_card()
        out["card"] = {
            "streaming": card.capabilities.streaming,
            "schemes": sorted(card.security_schemes),
            "interfaces": [i.protocol_version for i in card.supported_interfaces],
        }

        def client(**config: Any) -> Any:
            return ClientFactory(ClientConfig(httpx_client=http, **config)).create(card)

        plain, polling, streaming = (
            client(streaming=False),
            client(streaming=False, polling=True),
            client(streaming=True),
        )
        if mode.startswith("get:"):
            got = await plain.get_task(GetTaskRequest(id=mode[4:]))
            out["get"] = {"state": state(got), "answer": answer(got)}
            return report(out)

        sent = [e async for e in plain.send_message(request("Say hello"))][-1].task
        out["send"] = {"id": sent.id, "state": state(sent), "answer": answer(sent)}
        got = await plain.get_task(GetTaskRequest(id=sent.id))
        out["get"] = {"state": state(got), "answer": answer(got)}

        held = [e async for e in polling.send_message(request("hold: cancel me"))][-1].task
        cancelled = await plain.cancel_task(CancelTaskRequest(id=held.id))
        out["cancel"] = {"before": state(held), "after": state(cancelled)}

        events = [e async for e in streaming.send_message(request("Stream an answer"))]
        pieces = [e.artifact_update for e in events if kind(e) == "artifact_update"]
        out["stream"] = {
            "kinds": [kind(e) for e in events],
            "answer": "".join(p.text for u in pieces for p in u.artifact.parts),
            "last_chunk": [u.last_chunk for u in pieces],
            "append": [u.append for u in pieces],
            "final": state(events[-1].status_update),
        }

        listed = await plain.list_tasks(ListTasksRequest())
        out["list"] = [t.id for t in listed.tasks]

        watched = [e async for e in polling.send_message(request("hold: watch me"))][-1].task
        seen: list[str] = []
        async for event in streaming.subscribe(SubscribeToTaskRequest(id=watched.id)):
            seen.append(kind(event))
            if kind(event) == "task":
                await plain.cancel_task(CancelTaskRequest(id=watched.id))
            last = event
        out["subscribe"] = {"kinds": seen, "final": state(last.status_update)}
        out["events"] = [MessageToDict(e) for e in events[:1]]
    report(out)


asyncio.run(main())
