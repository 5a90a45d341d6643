"""Start agent-httpd directly, as the gateway's supervisor does: token over an inherited pipe."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tests.conftest import runtime_binary

# Nothing listens there: these tests never reach inference or tools.
NOWHERE = ["--inference-url", "http://127.0.0.1:9/v1/chat/completions"]
NOWHERE += ["--tools-url", "http://127.0.0.1:9/tools"]


@dataclass
class Runtime:
    proc: subprocess.Popen[bytes]
    port: int
    token: str

    def get(self, path: str, token: str | None = None, timeout: float = 10.0) -> tuple[int, Any]:
        """A request with the launch token (or ``token``); (status, JSON body)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request("GET", path, headers={"Authorization": f"Bearer {token or self.token}"})
            response = conn.getresponse()
            return response.status, json.loads(response.read())
        finally:
            conn.close()


@contextlib.contextmanager
def running(token: str, *extra: str, user: int | None = None) -> Iterator[Runtime]:
    """agent-httpd on a free loopback port, run as ``user`` when given; stopped afterwards."""
    read_fd, write_fd = os.pipe()
    os.write(write_fd, token.encode() + b"\n")
    os.close(write_fd)
    ids: dict[str, Any] = {} if user is None else {"user": user, "group": user, "extra_groups": []}
    try:
        proc = subprocess.Popen(
            [runtime_binary(), "--port", "0", *NOWHERE, "--token-fd", str(read_fd), *extra],
            pass_fds=(read_fd,),
            env={"PATH": os.environ.get("PATH", "/usr/bin")},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            **ids,
        )
    finally:
        os.close(read_fd)
    try:
        assert proc.stdout is not None
        port = int(json.loads(proc.stdout.readline())["port"])
        yield Runtime(proc, port, token)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
