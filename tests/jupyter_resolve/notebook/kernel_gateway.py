"""A real ``jupyter_kernel_gateway`` (token-protected, kernel listing on) with a Jupyter server
in front of it (``--GatewayClient.url``), and a frontend's view of a notebook kernel there:
code run over the server's kernel websocket, a chat's events read as they stream."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import secrets
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import websocket

from jupyter_resolve.magics.client import parse_sse
from tests.launcher import QUIET_EXTENSIONS, JupyterServer, free_port, start_process, stop_process


@dataclass
class KernelGateway:
    url: str
    token: str
    log: Path


@contextlib.contextmanager
def kernel_gateway(folder: Path, env: dict[str, str] | None = None) -> Iterator[KernelGateway]:
    """``jupyter kernelgateway`` on a free loopback port, with an auth token; ``env`` adds to
    its environment (and so to its kernels')."""
    folder.mkdir(parents=True, exist_ok=True)
    port, token = free_port(), secrets.token_hex(16)
    log = folder / "kernel-gateway.log"
    argv = [
        sys.executable,
        "-m",
        "kernel_gateway",
        "--KernelGatewayApp.ip=127.0.0.1",
        f"--KernelGatewayApp.port={port}",
        "--KernelGatewayApp.port_retries=0",
        f"--KernelGatewayApp.auth_token={token}",
        "--JupyterWebsocketPersonality.list_kernels=True",
    ]
    if env:  # its kernels inherit only what it is told to pass on
        argv.append(f"--KernelGatewayApp.env_process_whitelist={sorted(env)!r}")
    base = {"JUPYTER_RUNTIME_DIR": str(folder / "runtime"), "PATH": _path(), "HOME": str(folder)}
    with open(log, "ab") as out:
        proc = start_process(argv, cwd=folder, env={**base, **(env or {})}, stdout=out, stderr=out)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, log.read_text()
            with contextlib.suppress(httpx.TransportError):
                answer = httpx.get(
                    f"{url}/api/kernelspecs",
                    headers={"Authorization": f"token {token}"},
                    trust_env=False,
                )
                if answer.status_code == 200:
                    break
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        yield KernelGateway(url, token, log)
    finally:
        stop_process(proc)


def _path() -> str:
    return os.environ.get("PATH", "")


def server_in_front(folder: Path, gateway: KernelGateway, config: dict[str, Any]) -> JupyterServer:
    """A Jupyter server whose kernels run on ``gateway`` (not started: enter it)."""
    return JupyterServer(
        folder,
        extensions=QUIET_EXTENSIONS,
        config={"Resolve": config},
        argv=[
            f"--GatewayClient.url={gateway.url}",
            f"--GatewayClient.auth_token={gateway.token}",
            "--GatewayClient.request_timeout=60",
        ],
        env={"HOME": str(folder / "home")},
        drop_env=("JUPYTER_RESOLVE_", "KERNEL_"),
        ready="health",
    )


@dataclass
class Cell:
    """What running code in the kernel showed: its reply and outputs."""

    reply: dict[str, Any]
    text: str = ""  # stdout and stderr
    results: list[str] = field(default_factory=list)  # text/plain of results and displays


def run_code(server: JupyterServer, kernel_id: str, code: str, timeout: float = 120) -> Cell:
    """Run ``code`` in the kernel as a frontend does, over the server's kernel websocket."""
    url = server.url.replace("http://", "ws://") + f"/api/kernels/{kernel_id}/channels"
    socket = websocket.create_connection(url, header=server.headers, timeout=timeout)
    try:
        msg_id = uuid.uuid4().hex
        header = {"msg_id": msg_id, "msg_type": "execute_request", "session": uuid.uuid4().hex}
        content = {"code": code, "silent": False, "store_history": True, "allow_stdin": False}
        request: dict[str, Any] = {
            "header": {**header, "username": "test", "version": "5.3", "date": ""},
            "parent_header": {},
            "metadata": {},
            "content": content,
            "channel": "shell",
        }
        socket.send(json.dumps(request))
        cell, idle = Cell({}), False
        while not (cell.reply and idle):
            msg = json.loads(socket.recv())
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, body = msg["msg_type"], msg["content"]
            if kind == "execute_reply":
                cell.reply = body
            elif kind == "status":
                idle = body.get("execution_state") == "idle"
            elif kind == "stream":
                cell.text += body["text"]
            elif kind in ("execute_result", "display_data"):
                cell.results.append(body["data"].get("text/plain", ""))
            elif kind == "error":
                cell.text += "\n".join(body["traceback"])
        return cell
    finally:
        socket.close()


class ChatStream:
    """A chat streaming in a thread; its events arrive on :attr:`events`."""

    def __init__(self, server: JupyterServer, body: dict[str, Any]) -> None:
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        self.status = 0
        self._thread = threading.Thread(target=self._read, args=(server, body), daemon=True)
        self._thread.start()

    def _read(self, server: JupyterServer, body: dict[str, Any]) -> None:
        try:
            with httpx.stream(
                "POST",
                f"{server.url}/resolve/api/chat",
                content=json.dumps(body),
                headers=server.headers,
                timeout=180,
                trust_env=False,
            ) as response:
                self.status = response.status_code
                if response.status_code != 200:
                    response.read()
                    self.events.put({"type": "http.error", "data": {"text": response.text}})
                    return
                for event in parse_sse(response.iter_bytes()):
                    self.events.put(event)
        finally:
            self.events.put({"type": "stream.end", "data": {}})

    def next(self, kind: str, timeout: float = 180) -> dict[str, Any]:
        """The data of the next event of type ``kind`` (the ones before are kept in seen)."""
        deadline = time.monotonic() + timeout
        while True:
            event = self.events.get(timeout=max(deadline - time.monotonic(), 0.1))
            self.seen.append(event)
            if event["type"] == kind:
                data: dict[str, Any] = event["data"]
                return data
            if event["type"] in ("stream.end", "http.error"):
                raise AssertionError(f"no {kind} in {[e['type'] for e in self.seen]}: {event}")

    def rest(self) -> list[dict[str, Any]]:
        """Every event to the end of the stream."""
        while self.seen[-1:] == [] or self.seen[-1]["type"] != "stream.end":
            self.seen.append(self.events.get(timeout=180))
        self._thread.join(10)
        return self.seen

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e["data"] for e in self.rest() if e["type"] == kind]


def chat(server: JupyterServer, content: str, **extra: Any) -> ChatStream:
    body = {"messages": [{"role": "user", "content": content}], **extra}
    return ChatStream(server, body)
