"""A scripted HTTP/1.1 server on raw asyncio streams, for the fake model providers.

A *scenario* is data: a list of :class:`Reply`, one per request in arrival order (the last one
repeats once the list is used up). A reply is a status, headers and body parts, each part
written on its own (one chunk-encoding frame each with ``transfer="chunked"``), after an
optional delay, so tests control byte boundaries and timing exactly. ``hang`` accepts the
request and never answers.

Usable in-process (``async with FakeServer(...) as fake``; ``fake.requests`` records every
request) and as a subprocess (:func:`main`: prints ``{"port": N}`` then serves until killed).
Scenarios can also come from a JSON file: a list of :meth:`Reply.to_json` objects.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar


@dataclass
class Part:
    """Bytes written in one go, after waiting ``delay`` seconds."""

    data: bytes
    delay: float = 0.0


@dataclass
class Reply:
    """One HTTP response. ``transfer``: "chunked", "length" (Content-Length) or "close"."""

    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=list)
    parts: list[Part] = field(default_factory=list)
    transfer: str = "chunked"
    hang: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "headers": [list(h) for h in self.headers],
            "parts": [
                {"data": p.data.decode("utf-8", errors="surrogateescape"), "delay": p.delay}
                for p in self.parts
            ],
            "transfer": self.transfer,
            "hang": self.hang,
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Reply:
        parts = []
        for p in obj.get("parts", []):
            if isinstance(p, str):
                p = {"data": p}
            data = p["data"].encode("utf-8", errors="surrogateescape")
            parts.append(Part(data, float(p.get("delay", 0.0))))
        return cls(
            status=int(obj.get("status", 200)),
            headers=[(str(k), str(v)) for k, v in obj.get("headers", [])],
            parts=parts,
            transfer=str(obj.get("transfer", "chunked")),
            hang=bool(obj.get("hang", False)),
        )


Scenario = list[Reply]
Registry = dict[str, Callable[..., Scenario]]


@dataclass
class Request:
    """A request as the fake received it. ``headers`` keys are lower case."""

    method: str
    path: str
    headers: dict[str, str]
    raw: bytes
    body: Any


SSE_HEADERS = [("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-cache")]


def json_reply(status: int, obj: Any, headers: list[tuple[str, str]] | None = None) -> Reply:
    """A plain JSON answer with a Content-Length."""
    return Reply(
        status,
        [("Content-Type", "application/json"), *(headers or [])],
        [Part(json.dumps(obj).encode())],
        transfer="length",
    )


def _reason(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return "Overloaded" if status == 529 else "Status"


async def _read_request(reader: asyncio.StreamReader) -> Request | None:
    line = await reader.readline()
    if not line.strip():
        return None
    method, target, _version = line.decode("latin-1").rstrip("\r\n").split(" ", 2)
    headers: dict[str, str] = {}
    while True:
        header = await reader.readline()
        if header in (b"\r\n", b"\n", b""):
            break
        name, _, value = header.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    raw = b""
    if "content-length" in headers:
        raw = await reader.readexactly(int(headers["content-length"]))
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        pieces = []
        while True:
            size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                await reader.readline()
                break
            pieces.append(await reader.readexactly(size))
            await reader.readline()
        raw = b"".join(pieces)
    try:
        body = json.loads(raw) if raw else None
    except ValueError:
        body = None
    return Request(method, target, headers, raw, body)


class FakeServer:
    """Serves a scenario on 127.0.0.1. ``base_url`` is what a provider is configured with."""

    registry: ClassVar[Registry] = {}
    prefix = ""

    def __init__(
        self,
        scenario: str | Scenario = "text",
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        reply_to: Callable[[Request], Reply] | None = None,
        **params: Any,
    ) -> None:
        # ``reply_to``, when given, answers each request from what it holds (not the scenario)
        self.reply_to = reply_to
        if isinstance(scenario, str):
            if scenario not in self.registry:
                raise ValueError(f"unknown scenario {scenario!r}: {', '.join(self.registry)}")
            self.scenario: Scenario = self.registry[scenario](**params)
        else:
            self.scenario = list(scenario)
        if not self.scenario:
            raise ValueError("a scenario needs at least one reply")
        self.host = host
        self.port = port
        self.requests: list[Request] = []
        self.accepted = 0  # requests answered from the scenario
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    def answer_directly(self, request: Request) -> Reply | None:
        """A reply that does not take the scenario's next one: a refusal the real API would
        give, or another endpoint (a model list). None: the scenario answers."""
        return None

    def respond(self, request: Request, reply: Reply) -> Reply:
        """The scenario's reply, adjusted to the request (e.g. usage counts)."""
        return reply

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}{self.prefix}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    async def __aenter__(self) -> FakeServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def serve_forever(self) -> None:
        assert self._server is not None
        await self._server.serve_forever()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                direct = self.answer_directly(request)
                self.requests.append(request)
                if direct is not None:
                    reply = direct
                elif self.reply_to is not None:
                    reply = self.reply_to(request)
                else:
                    reply = self.scenario[min(self.accepted, len(self.scenario) - 1)]
                    self.accepted += 1
                    reply = self.respond(request, reply)
                if reply.hang:
                    await asyncio.Event().wait()
                if not await self._write(reply, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        except asyncio.CancelledError:
            pass  # stop(): end quietly (asyncio logs a handler task that ends cancelled)
        finally:
            self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _write(self, reply: Reply, writer: asyncio.StreamWriter) -> bool:
        head = [f"HTTP/1.1 {reply.status} {_reason(reply.status)}"]
        head += [f"{name}: {value}" for name, value in reply.headers]
        if reply.transfer == "chunked":
            head.append("Transfer-Encoding: chunked")
        elif reply.transfer == "length":
            head.append(f"Content-Length: {sum(len(p.data) for p in reply.parts)}")
        else:
            head.append("Connection: close")
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        await writer.drain()
        for part in reply.parts:
            if part.delay:
                await asyncio.sleep(part.delay)
            if reply.transfer == "chunked":
                if not part.data:
                    continue
                writer.write(b"%x\r\n%s\r\n" % (len(part.data), part.data))
            else:
                writer.write(part.data)
            await writer.drain()
        if reply.transfer == "chunked":
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        return reply.transfer != "close"


def main(server_class: type[FakeServer], argv: list[str] | None = None) -> None:
    """``python -m tests.fakes.X --port 0 --scenario NAME``: print {"port": N}, serve."""
    parser = argparse.ArgumentParser(description=server_class.__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--scenario", default="text", choices=sorted(server_class.registry))
    parser.add_argument("--scenario-file", type=Path, help="JSON list of replies (overrides)")
    parser.add_argument("--chunks", type=int, default=None, help="chunk count for 'long'")
    parser.add_argument("--pace", type=float, default=None, help="seconds between 'long' chunks")
    args = parser.parse_args(argv)

    async def serve() -> None:
        params: dict[str, Any] = {}
        if args.chunks is not None and args.scenario == "long":
            params["chunks"] = args.chunks
        if args.pace is not None and args.scenario == "long":
            params["pace"] = args.pace
        scenario: str | Scenario = args.scenario
        if args.scenario_file is not None:
            scenario = [Reply.from_json(o) for o in json.loads(args.scenario_file.read_text())]
        fake = server_class(scenario, host=args.host, port=args.port, **params)
        await fake.start()
        print(json.dumps({"port": fake.port}), flush=True)
        await fake.serve_forever()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve())
    sys.exit(0)
