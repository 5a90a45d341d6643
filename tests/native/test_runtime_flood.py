"""Local processes without the token cannot make agent-httpd refuse its health check (issue 14
item 10): a request head has a total deadline, connections whose head is unfinished are capped
per client (the idlest go first), and /healthz is answered without a thread of its own."""

from __future__ import annotations

import contextlib
import resource
import select
import socket
from collections.abc import Iterator

import pytest

from tests.native.runtime import running

TOKEN = "flood-test-token-0123456789"
IDLE = 1100  # more than the old cap of max_runs + 64 connection threads


def want_descriptors(n: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= n:
        return
    if hard != resource.RLIM_INFINITY and hard < n:
        pytest.skip(f"needs {n} open files, the hard limit is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (n, hard))


@contextlib.contextmanager
def idle_connections(port: int, n: int) -> Iterator[list[socket.socket]]:
    """n connections that each sent one byte of a request and then nothing."""
    socks: list[socket.socket] = []
    try:
        for _ in range(n):
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            socks.append(sock)
            sock.sendall(b"G")
        yield socks
    finally:
        for sock in socks:
            sock.close()


def test_health_answers_while_idle_connections_are_held() -> None:
    want_descriptors(IDLE + 200)
    with running(TOKEN, "--max-runs", "1024") as runtime, idle_connections(runtime.port, IDLE):
        # the supervisor's check: GET /healthz with a 5 s timeout
        status, body = runtime.get("/healthz", timeout=5.0)
        assert status == 200 and body["ok"] is True
        assert runtime.get("/healthz", token="wrong", timeout=5.0)[0] == 401
        assert runtime.get("/healthz", timeout=5.0)[0] == 200


def test_a_head_that_trickles_in_is_cut_at_its_deadline() -> None:
    head = f"GET /healthz HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode()
    with running(TOKEN, "--head-timeout", "2") as runtime:
        sock = socket.create_connection(("127.0.0.1", runtime.port), timeout=10)
        answer, sent = b"", 0
        try:
            # one byte every 0.3 s: each read is quick, the whole head would take ~20 s
            for sent in range(1, len(head) + 1):
                sock.sendall(head[sent - 1 : sent])
                poller = select.poll()  # not select(): descriptors may be past FD_SETSIZE
                poller.register(sock, select.POLLIN)
                if poller.poll(300):
                    answer = sock.recv(4096)
                    break
        except ConnectionError:
            answer = b"(reset)"
        finally:
            sock.close()
        assert sent < len(head), "the server waited for the whole slow head"
        assert answer.startswith(b"HTTP/1.1 408") or answer in (b"", b"(reset)"), answer
        assert runtime.get("/healthz")[0] == 200
