"""The egress canary (issue 50.6): code the agent runs under the sandbox reaches no listener on the
host's loopback and has no route to any other address; the network is reached only through
``web_fetch``, which policy governs. A real server, a sandboxed scratch kernel, the offline
model scripted to run the probes as the agent's own ``python`` and ``shell`` calls.

The canary must be able to fail: the same run with the sandbox's network namespace left out
(``c.Resolve.sandbox_network = True`` builds bubblewrap's argv without ``--unshare-net``)
reaches the listener, and the canary's check then fails.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.launcher import JupyterServer

# Stand-ins for "any address" (RFC 5737, RFC 3849 documentation ranges): the probe only asks
# the kernel for a route there (connect() on a UDP socket sends nothing), so no packet leaves.
ANY_IPV4, ANY_IPV6 = "192.0.2.1", "2001:db8::1"
PROBE = """
import json, socket
def tcp(family, host, port, path):
    if not port:
        return None
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.settimeout(10)
    try:
        sock.connect((host, port))
        sock.sendall(f"GET {{path}} HTTP/1.0\\r\\nHost: canary\\r\\n\\r\\n".encode())
        return "reached: " + sock.recv(64).decode(errors="replace").splitlines()[0]
    except OSError as exc:
        return f"failed: {{exc!r}}"
    finally:
        sock.close()
def route(family, host):
    sock = socket.socket(family, socket.SOCK_DGRAM)
    try:
        sock.connect((host, 9))
        return "route"
    except OSError as exc:
        return f"no route: {{exc!r}}"
    finally:
        sock.close()
with open("/proc/net/dev") as dev:
    interfaces = sorted(line.split(":")[0].strip() for line in dev.readlines()[2:])
report = {{
    "loopback4": tcp(socket.AF_INET, "127.0.0.1", {port4}, "/python-ipv4"),
    "loopback6": tcp(socket.AF_INET6, "::1", {port6}, "/python-ipv6"),
    "any4": route(socket.AF_INET, {any4!r}),
    "any6": route(socket.AF_INET6, {any6!r}),
    "interfaces": interfaces,
}}
print("CANARY " + json.dumps(report))
"""
# The shell tool's command is a process of its own (bash's /dev/tcp: no Python involved)
SHELL = (
    "bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port4} && "
    'printf "GET /shell HTTP/1.0\\r\\n\\r\\n" >&3 && head -c 15 <&3\'; echo " exit=$?"'
)


class Listener(ThreadingHTTPServer):
    """An HTTP server on the host's loopback that notes every connection made to it."""

    daemon_threads = True

    def __init__(self, host: str, family: socket.AddressFamily) -> None:
        self.address_family = family
        self.connections: list[str] = []
        super().__init__((host, 0), Handler)

    def verify_request(self, request: Any, client_address: Any) -> bool:
        self.connections.append(str(client_address[0]))
        return True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a probe reads the status line and hangs up before the body: nothing to report


class Handler(BaseHTTPRequestHandler):
    server: Listener

    def do_GET(self) -> None:
        self.server.connections.append(self.path)
        body = b"canary listener"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def listen(host: str, family: socket.AddressFamily) -> Listener | None:
    try:
        server = Listener(host, family)
    except OSError:  # no IPv6 loopback here
        return None
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def listeners() -> Iterator[tuple[Listener, Listener | None]]:
    ipv4 = listen("127.0.0.1", socket.AF_INET)
    assert ipv4 is not None
    ipv6 = listen("::1", socket.AF_INET6)
    yield ipv4, ipv6
    for server in (ipv4, ipv6):
        if server is not None:
            server.shutdown()
            server.server_close()


@dataclass
class Probe:
    """What the agent's code reported and what the listeners saw."""

    report: dict[str, Any]
    shell: str
    fetched: dict[str, Any]
    seen: list[str] = field(default_factory=list)


def host_has_route(family: socket.AddressFamily, host: str) -> bool:
    with socket.socket(family, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect((host, 9))
        except OSError:
            return False
    return True


def completed_calls(body: str) -> list[dict[str, Any]]:
    """The ``tool.completed`` events of an SSE body."""
    calls, event = [], ""
    for line in body.splitlines():
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: ") and event == "tool.completed":
            calls.append(json.loads(line[6:]))
    return calls


def run_probe(tmp_path: Path, listeners: tuple[Listener, Listener | None], network: bool) -> Probe:
    """One chat on a real server whose scratch kernels run under bubblewrap: the probe as
    ``python``, a connection from ``shell``, then a ``web_fetch`` of the same listener."""
    from jupyter_resolve.scratch.sandbox import bwrap_available

    if not bwrap_available():
        pytest.skip("bubblewrap cannot create namespaces on this machine")
    ipv4, ipv6 = listeners
    port4, port6 = ipv4.server_address[1], ipv6.server_address[1] if ipv6 else 0
    code = PROBE.format(port4=port4, port6=port6, any4=ANY_IPV4, any6=ANY_IPV6)
    turns = [
        {"content": "", "tool_calls": [{"name": "python", "arguments": {"code": code}}]},
        {"content": "", "tool_calls": [{"name": "shell", "arguments": {
            "command": SHELL.format(port4=port4)}}]},
        {"content": "", "tool_calls": [{"name": "web_fetch", "arguments": {
            "url": f"http://127.0.0.1:{port4}/web-fetch"}}]},
        {"content": "probed"},
    ]  # fmt: skip
    script = tmp_path / "script.jsonl"
    script.write_text("".join(json.dumps(turn) + "\n" for turn in turns))
    settings = {
        "script": str(script),
        "sandbox": "bwrap",
        "sandbox_network": network,  # True: bwrap's argv without --unshare-net
        # the one way out, open for this test: web_fetch to loopback, without asking
        "allow_private_fetch": True,
        "approval_policy": {"web_fetch": "auto"},
    }
    server = JupyterServer(tmp_path / "server", config={"Resolve": settings}, ready="runtime")
    with server, httpx.Client(base_url=server.url, headers=server.headers, timeout=120) as http:
        assert http.get("/resolve/api/health").json()["sandbox"]["kind"] == "bwrap"
        chat = {"messages": [{"role": "user", "content": "probe"}], "session_id": "s-egress"}
        with http.stream("POST", "/resolve/api/chat", json=chat) as response:
            body = "".join(response.iter_text())
    assert "event: run.completed" in body, body
    python, shell, fetched = completed_calls(body)
    assert python["ok"] is True, python
    line = next(x for x in python["output"].splitlines() if x.startswith("CANARY "))
    seen = [entry for server in listeners if server for entry in server.connections]
    return Probe(json.loads(line[7:]), shell["output"], fetched, seen)


def assert_no_egress(probe: Probe) -> None:
    """The canary: nothing the agent's code did reached a listener or found a route."""
    report = probe.report
    assert report["loopback4"].startswith("failed"), report
    assert report["loopback6"] is None or report["loopback6"].startswith("failed"), report
    assert report["any4"].startswith("no route") and report["any6"].startswith("no route"), report
    assert report["interfaces"] == ["lo"], report  # its own, empty network namespace
    assert "200 OK" not in probe.shell and "exit=0" not in probe.shell, probe.shell
    assert not [p for p in probe.seen if p in ("/python-ipv4", "/python-ipv6", "/shell")]


@pytest.mark.timeout(300)
def test_sandboxed_agent_code_reaches_nothing_but_web_fetch_does(
    tmp_path: Path, listeners: tuple[Listener, Listener | None]
) -> None:
    probe = run_probe(tmp_path, listeners, network=False)
    assert_no_egress(probe)
    assert "Connection refused" in probe.report["loopback4"]
    assert "Network is unreachable" in probe.report["any4"]
    # web_fetch runs in the gateway, under its policy (here: loopback allowed, no approval)
    assert probe.fetched["ok"] is True and "canary listener" in probe.fetched["output"]
    assert [p for p in probe.seen if p.startswith("/")] == ["/web-fetch"]


@pytest.mark.timeout(300)
def test_the_canary_fails_without_the_sandboxs_network_namespace(
    tmp_path: Path, listeners: tuple[Listener, Listener | None]
) -> None:
    probe = run_probe(tmp_path, listeners, network=True)
    with pytest.raises(AssertionError):
        assert_no_egress(probe)
    # what it caught: the agent's code reached the host's listeners itself
    assert probe.report["loopback4"] == "reached: HTTP/1.0 200 OK", probe.report
    assert "/python-ipv4" in probe.seen and "/shell" in probe.seen
    assert "HTTP/1.0 200 OK exit=0" in probe.shell
    if host_has_route(socket.AF_INET, ANY_IPV4):
        assert probe.report["any4"] == "route"
    assert probe.report["interfaces"] != ["lo"]
