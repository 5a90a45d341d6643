"""A person in a collaboration room, seen from Python: a real ``jupyter server`` with
jupyter-collaboration (``make setup`` makes ``.venv/collab`` for it) and a client of its room
websocket that keeps a Yjs copy of the notebook in sync, as a JupyterLab page does."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
from tornado.httpclient import HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

from tests.launcher import QUIET_EXTENSIONS, JupyterServer

# Saved by the room this long after the last change: typing goes on longer than a poll of the
# file, so a write of the file under the room (the bug) is seen before the room saves.
SAVE_DELAY = 3.0


def notebook_with_output(root: Path, name: str = "shared.ipynb") -> str:
    """A saved notebook: cell ``cell-a`` with a displayed result, cell ``cell-b`` to type in."""
    output = {"output_type": "display_data", "data": {"text/plain": "42"}, "metadata": {}}
    cells = [
        {
            "cell_type": "code",
            "id": "cell-a",
            "metadata": {},
            "source": "answer = 42\nanswer",
            "outputs": [output],
            "execution_count": 1,
        },
        {
            "cell_type": "code",
            "id": "cell-b",
            "metadata": {},
            "source": "x = 1",
            "outputs": [],
            "execution_count": None,
        },
    ]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (root / name).write_text(json.dumps(notebook))
    return name


@contextlib.contextmanager
def collab_server(
    workdir: Path, *, save_delay: float = SAVE_DELAY, script: Path | None = None
) -> Iterator[JupyterServer]:
    """The server; ``script``: the scripted model's turns (JSONL)."""
    config: dict[str, Any] = {
        "YDocExtension": {"document_save_delay": save_delay, "file_poll_interval": 0.5},
        # their databases in the test's folder, not in the working directory or the home
        "SQLiteYStore": {"db_path": str(workdir / "ystore.db")},
        "BaseFileIdManager": {"db_path": str(workdir / "file_id.db")},
    }
    if script is not None:
        config["Resolve"] = {"script": str(script)}
    extensions = {**QUIET_EXTENSIONS, "jupyter_server_ydoc": True}
    with JupyterServer(workdir, config=config, extensions=extensions, ready="health") as server:
        yield server


class SocketChannel:
    """pycrdt's ``Channel`` over a tornado websocket client."""

    def __init__(self, conn: WebSocketClientConnection, path: str) -> None:
        self.conn = conn
        self._path = path

    @property
    def path(self) -> str:
        return self._path

    def __aiter__(self) -> SocketChannel:
        return self

    async def __anext__(self) -> bytes:
        message = await self.conn.read_message()
        if message is None:
            raise StopAsyncIteration
        return message if isinstance(message, bytes) else message.encode()

    async def send(self, message: bytes) -> None:
        await self.conn.write_message(message, binary=True)

    async def recv(self) -> bytes:
        return await self.__anext__()


@contextlib.asynccontextmanager
async def joined(server: JupyterServer, path: str) -> AsyncIterator[Any]:
    """A synced ``YNotebook`` of ``path``'s room, opened as JupyterLab opens it."""
    from jupyter_ydoc import YNotebook
    from pycrdt import Doc, Provider

    async with httpx.AsyncClient(headers=server.headers, trust_env=False) as http:
        answer = await http.put(
            f"{server.url}/api/collaboration/session/{path}",
            json={"format": "json", "type": "notebook"},
        )
        answer.raise_for_status()
        session = answer.json()
    room = f"json:notebook:{session['fileId']}"
    url = f"ws://127.0.0.1:{server.port}/api/collaboration/room/{room}"
    request = httpx.URL(url, params={"sessionId": session["sessionId"]})
    conn = await websocket_connect(HTTPRequest(str(request), headers=server.headers))
    doc = Doc()
    notebook = YNotebook(doc)
    try:
        async with Provider(doc, SocketChannel(conn, room)):
            await until(lambda: notebook.cell_number == 2, "the room's notebook synced")
            yield notebook
    finally:
        conn.close()


async def until(condition: Any, what: str, limit: float = 60.0) -> None:
    """Wait for ``condition()`` (a bound on waiting, not a timed assertion)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + limit
    while not condition():
        if loop.time() > end:
            raise AssertionError(f"never happened: {what}")
        await asyncio.sleep(0.05)


def saved_cells(root: Path, path: str) -> dict[str, Any]:
    try:
        cells = json.loads((root / path).read_text())["cells"]
    except (OSError, ValueError):  # mid-write
        return {}
    return {c["id"]: c for c in cells}


def source_of(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


async def chat_events(server: JupyterServer, body: dict[str, Any], events: list[Any]) -> None:
    """Run a chat to its end, appending each SSE event's data (with its ``type``) to ``events``."""
    kind = ""
    async with httpx.AsyncClient(headers=server.headers, trust_env=False, timeout=None) as http:
        async with http.stream("POST", f"{server.url}/resolve/api/chat", json=body) as answer:
            async for line in answer.aiter_lines():
                if line.startswith("event:"):
                    kind = line.partition(":")[2].strip()
                elif line.startswith("data:"):
                    data = json.loads(line.partition(":")[2])
                    if isinstance(data, dict):
                        events.append({"type": kind, **data})
