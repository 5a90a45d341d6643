"""Issue 31.5: the peer endpoints refuse a body over 1 MiB as it arrives (413), so an unsigned
sender cannot make the server hold a big one. A real `jupyter server` process (its memory is
read from /proc), sent 64 MiB over a raw socket, with a Content-Length and chunked."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.launcher import JupyterServer

BIG = 64 * 1024 * 1024
PIECE = b"x" * (1024 * 1024)
GROWTH = 8 * 1024 * 1024


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    tmp = tmp_path_factory.mktemp("peer-body")
    with JupyterServer(
        tmp, config={"Resolve": {"peer_secrets": {"alpha": "body-limit-secret-0123456789"}}}
    ) as running:
        yield running


def memory(pid: int, field: str) -> int:
    """``VmRSS`` (resident now) or ``VmHWM`` (the peak since :func:`reset_peak`), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field}")


def reset_peak(pid: int) -> None:
    """Make the peak (VmHWM) start again from what is resident now: a big body held only for a
    moment and freed again shows in the peak, not in VmRSS afterwards."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def send_body(sock: socket.socket, chunked: bool) -> None:
    """Send BIG bytes of body until the server stops reading (it may close the connection)."""
    try:
        for _ in range(BIG // len(PIECE)):
            if chunked:
                sock.sendall(b"%x\r\n" % len(PIECE) + PIECE + b"\r\n")
            else:
                sock.sendall(PIECE)
        if chunked:
            sock.sendall(b"0\r\n\r\n")
    except OSError:
        return  # refused: the server closed the connection


def post_big(server: JupyterServer, path: str, chunked: bool) -> bytes:
    """POST a BIG unsigned body to ``path``; the response's status line and headers."""
    port = int(server.url.rsplit(":", 1)[1].split("/")[0])
    length = b"Transfer-Encoding: chunked" if chunked else b"Content-Length: %d" % BIG
    head = b"POST %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%s\r\n" % (path.encode(), port, length)
    head += b"Content-Type: application/json\r\n\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=120) as sock:
        sock.sendall(head)
        sender = threading.Thread(target=send_body, args=(sock, chunked), daemon=True)
        sender.start()
        answer = b""
        while b"\r\n\r\n" not in answer:
            piece = sock.recv(65536)
            if not piece:
                break
            answer += piece
        with contextlib.suppress(OSError):  # the server may have closed it already
            sock.shutdown(socket.SHUT_RDWR)
        sender.join(120)
    return answer


def post_small(server: JupyterServer, path: str) -> None:
    """An unsigned, small POST: refused (401) after it was read."""
    response = httpx.post(server.url + path, content=b"{}", timeout=60, trust_env=False)
    assert response.status_code == 401, response.text


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
@pytest.mark.parametrize("path", ["/resolve/peer/invoke", "/resolve/peer/a2a"])
def test_a_big_unsigned_body_is_refused_without_being_held(
    server: JupyterServer, path: str, chunked: bool
) -> None:
    assert server.proc is not None
    pid = server.proc.pid
    post_small(server, path)  # so that what a first request loads is loaded
    reset_peak(pid)
    before = memory(pid, "VmRSS")
    answer = post_big(server, path, chunked)
    grown = memory(pid, "VmHWM") - before
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert grown < GROWTH, f"the server grew by {grown // 1024} KiB"


def test_the_lazy_stand_ins_stream_the_bodies_their_handlers_stream() -> None:
    from jupyter_resolve.handlers.lazy import lazy_routes
    from jupyter_resolve.peer import routes

    for _pattern, stand_in in lazy_routes([routes]):
        real = stand_in.target()
        assert stand_in._stream_request_body == real._stream_request_body, real
