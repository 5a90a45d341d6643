"""The hub service as a large hub runs it (issues 48 and 44.4–44.5): a real JupyterHub, a real
PostgreSQL, and two replicas of the service on that one database behind a balancer (a
Kubernetes Deployment's Service), each started by the test as a Deployment starts it, with the
upstream key in its own environment (replica A) or a file (replica B, a mounted Secret).

The upstream is the fake OpenAI server; each answer streams slowly and reports 2,000 tokens, so
requests overlap. carol's daily budget is 6,000 tokens; the others have none.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import signal
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fakes._server import Part, Reply
from tests.fakes.openai_server import DONE, MODEL, chunk, sse, stream, usage
from tests.hub.hub import Hub, HubSetup, dumps, find_proxy, running_hub, runtime_pid
from tests.hub.postgres import pg_bin, running_postgres
from tests.hub.replicas import Balancer, Replica, replica_env
from tests.hub.test_hub_service import FakeUpstreams
from tests.launcher import free_port

PROXY = find_proxy()
pytestmark = [
    pytest.mark.skipif(PROXY is None, reason="configurable-http-proxy is not installed"),
    pytest.mark.skipif(pg_bin() is None, reason="PostgreSQL is not installed (make setup)"),
    pytest.mark.timeout(300),
]
KEYS = {"a": "sk-canary-a-" + secrets.token_hex(8), "b": "sk-canary-b-" + secrets.token_hex(8)}
LIMIT = 6000
USED = (100, 1900)  # each answer's reported prompt and completion tokens
MAX_TOKENS = 4000
CONFIG = """\
import os
if "OPENAI_API_KEY" not in os.environ:  # replica B: the key from a file, as from a Secret
    c.ResolveHub.openai_api_key_file = "openai.key"
c.ResolveHub.db_url = {db!r}
c.ResolveHub.openai_base_url = {base!r}
c.ResolveHub.default_model = {model!r}
c.ResolveHub.user_limits = {{"carol": {{"day_tokens": {limit}}}}}
c.ResolveHub.max_concurrent = {cap}
c.ResolveHub.reservation_ttl = 6.0
c.ResolveHub.keepalive_interval = 1.0
"""


def slow_answer(pieces: int = 30, pace: float = 0.05) -> Reply:
    frames: list[bytes | Part] = [sse(chunk({"role": "assistant", "content": ""}))]
    frames += [Part(sse(chunk({"content": f"w{i} "})), delay=pace) for i in range(pieces)]
    frames += [sse(chunk({}, "stop")), sse(usage(*USED)), DONE]
    return stream(frames)


@dataclass
class Scale:
    hub: Hub
    replicas: dict[str, Replica]
    balancer: Balancer
    tokens: dict[str, str]
    config: Path
    upstreams: FakeUpstreams
    db_url: str

    def write_config(self, cap: int) -> None:
        base = self.upstreams.openai.base_url
        text = CONFIG.format(db=self.db_url, base=base, model=MODEL, limit=LIMIT, cap=cap)
        self.config.write_text(text)


@pytest.fixture(scope="module")
def upstreams() -> Iterator[FakeUpstreams]:
    with FakeUpstreams() as fakes:
        yield fakes


@pytest.fixture(scope="module")
def scale(tmp_path_factory: pytest.TempPathFactory, upstreams: FakeUpstreams) -> Iterator[Scale]:
    assert PROXY is not None
    workdir = tmp_path_factory.mktemp("hub-scale")
    service_dir = workdir / "service"
    service_dir.mkdir()
    (service_dir / "openai.key").write_text(KEYS["b"] + "\n")
    ports = {"a": free_port(), "b": free_port()}
    token = secrets.token_hex(32)
    hub_ports = (free_port(), free_port(), free_port())
    with contextlib.ExitStack() as stack:
        db_url = stack.enter_context(running_postgres())
        balancer = stack.enter_context(Balancer(list(ports.values())))
        setup = HubSetup(
            settings={
                "JupyterHub.public_url": f"http://127.0.0.1:{hub_ports[0]}/",
                "JupyterHub.services": [
                    {
                        "name": "resolve",
                        "url": f"http://127.0.0.1:{balancer.port}",
                        "api_token": token,
                    }
                ],
                "JupyterHub.load_roles": [
                    {"name": "user", "scopes": ["self", "access:services!service=resolve"]},
                    {
                        "name": "server",
                        "scopes": [
                            "users:activity!user",
                            "access:servers!server",
                            "access:services!service=resolve",
                        ],
                    },
                ],
            },
            # a quiet stream gets a comment every second: 4 s of silence in a begun answer is a
            # dead connection (the proxy keeps a killed replica's open), long before the 60 s
            # that a run would otherwise wait
            spawner_args=[
                "--Resolve.provider=hub",
                "--Resolve.provider_max_retries=2",
                "--Resolve.provider_timeout=60",
                "--Resolve.hub_stream_timeout=4",
            ],
        )
        hub = stack.enter_context(running_hub(workdir, PROXY, setup, hub_ports))
        api = f"http://127.0.0.1:{hub_ports[1]}/hub/api"
        replicas = {}
        for name, port in ports.items():
            extra = {"OPENAI_API_KEY": KEYS["a"]} if name == "a" else {}
            env = replica_env(name, api, token, port, extra)
            replicas[name] = Replica(f"replica-{name}", port, service_dir, env)
            stack.callback(replicas[name].stop)
        config = service_dir / "jupyter_resolve_hub_config.py"
        scale = Scale(hub, replicas, balancer, {}, config, upstreams, db_url)
        scale.write_config(cap=32)
        for replica in replicas.values():  # both at once: they migrate the empty database once
            replica.spawn()
        for replica in replicas.values():
            replica.wait()
        hub.spawn(("alice",))
        runtime_pid(hub, hub.users["alice"])
        names = ("carol", "dave", "erin", "frank")
        assert hub.api("POST", "users", {"usernames": list(names)}).status_code == 201
        for name in names:
            made = hub.api("POST", f"users/{name}/tokens", {"note": "scale test"})
            scale.tokens[name] = made.json()["token"]
        yield scale


def ask(replica: Replica, token: str, **extra: Any) -> tuple[int, bytes]:
    """One streamed chat completion straight to a replica: its status and whole body."""
    body = {
        "model": MODEL,
        "stream": True,
        "max_tokens": MAX_TOKENS,
        "messages": [{"role": "user", "content": "hi"}],
        **extra,
    }
    headers = {"Authorization": f"token {token}"}
    with httpx.Client(timeout=60, trust_env=False) as client:
        answer = client.post(f"{replica.url}v1/chat/completions", json=body, headers=headers)
    return answer.status_code, answer.content


def at_once(calls: list[tuple[Replica, str]]) -> list[tuple[int, bytes]]:
    """Every call at the same moment (a thread each)."""
    results: list[tuple[int, bytes]] = [(0, b"")] * len(calls)
    barrier = threading.Barrier(len(calls))

    def one(n: int) -> None:
        barrier.wait()
        results[n] = ask(*calls[n])

    threads = [threading.Thread(target=one, args=(n,)) for n in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(90)
    return results


def day_tokens(scale: Scale, name: str, replica: str = "b") -> int:
    headers = {"Authorization": f"token {scale.tokens[name]}"}
    got = httpx.get(f"{scale.replicas[replica].url}usage", headers=headers, trust_env=False)
    assert got.status_code == 200, got.text
    return int(got.json()["day"]["tokens"])


def test_two_replicas_migrated_the_empty_database_once(scale: Scale) -> None:
    logs = [r.log() for r in scale.replicas.values()]
    assert sum("migrated from empty" in log for log in logs) == 1, logs
    for replica in scale.replicas.values():
        health = httpx.get(f"{replica.url}health", trust_env=False)
        assert health.status_code == 200, health.text
        assert health.json()["database"] == {"ok": True}
        assert health.json()["upstreams"]["openai"]["reachable"] is True
    for log in logs:
        assert "jupyter-resolve hub service" in log and "postgresql+psycopg://resolve@" in log
        assert not any(key in log for key in KEYS.values())  # where the key is from, not it
    assert "key from file openai.key, set" in scale.replicas["b"].log()
    assert "key from $OPENAI_API_KEY, set" in scale.replicas["a"].log()


def test_sixteen_concurrent_streams_of_one_user_hold_the_budget(scale: Scale) -> None:
    openai = scale.upstreams.openai
    openai.reply_to = lambda _: slow_answer()
    before = len(openai.requests)
    try:
        calls = [(scale.replicas["ab"[n % 2]], scale.tokens["carol"]) for n in range(16)]
        results = at_once(calls)
    finally:
        openai.reply_to = None
    served = [body for status, body in results if status == 200]
    refused = [json.loads(body)["error"] for status, body in results if status == 429]
    assert len(served) + len(refused) == 16, [r[0] for r in results]
    assert served and refused and all(e["code"] == "budget_exceeded" for e in refused)
    assert all(body.rstrip().endswith(b"data: [DONE]") for body in served)
    spent = day_tokens(scale, "carol")
    assert spent == len(served) * sum(USED)  # every reported token, none lost or doubled
    assert len(openai.requests) - before == len(served)
    assert spent <= LIMIT + MAX_TOKENS + 100  # one reservation past the limit at most


def test_a_client_that_hangs_up_is_charged(scale: Scale) -> None:
    openai = scale.upstreams.openai
    openai.reply_to = lambda _: slow_answer(pieces=40)
    body = {"model": MODEL, "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    headers = {"Authorization": f"token {scale.tokens['erin']}"}
    try:
        with httpx.Client(timeout=30, trust_env=False) as client:
            url = f"{scale.replicas['a'].url}v1/chat/completions"
            with client.stream("POST", url, json=body, headers=headers) as answer:
                assert answer.status_code == 200
                next(answer.iter_bytes())  # the first piece, then the client leaves
        deadline = time.monotonic() + 30
        while day_tokens(scale, "erin") == 0 and time.monotonic() < deadline:
            time.sleep(0.3)
    finally:
        openai.reply_to = None
    assert day_tokens(scale, "erin") == sum(USED)  # what the upstream reported, read on
    assert (
        "user=erin" in scale.replicas["a"].log() and "client-hung-up" in scale.replicas["a"].log()
    )


def test_sighup_reloads_the_limits_and_the_fifth_stream_is_refused(scale: Scale) -> None:
    scale.write_config(cap=4)
    for replica in scale.replicas.values():
        replica.signal(signal.SIGHUP)
    deadline = time.monotonic() + 20
    while not all("max_concurrent 4" in r.log() for r in scale.replicas.values()):
        assert time.monotonic() < deadline, [r.log()[-2000:] for r in scale.replicas.values()]
        time.sleep(0.2)
    openai = scale.upstreams.openai
    openai.reply_to = lambda _: slow_answer()
    try:
        results = at_once([(scale.replicas["ab"[n % 2]], scale.tokens["dave"]) for n in range(5)])
    finally:
        openai.reply_to = None
    statuses = sorted(status for status, _ in results)
    assert statuses == [200, 200, 200, 200, 429], statuses
    refused = next(json.loads(body)["error"] for status, body in results if status == 429)
    assert refused["code"] == "too_many_requests" and "4 requests in flight" in refused["message"]


def test_an_unauthenticated_90_mb_body_is_refused_unread(scale: Scale) -> None:
    replica = scale.replicas["a"]
    before = replica.rss_kib()
    chunk_ = b"x" * (1 << 20)
    for _ in range(5):
        with socket.create_connection(("127.0.0.1", replica.port), timeout=10) as sock:
            head = (
                f"POST {replica.url[len('http://127.0.0.1:') + len(str(replica.port)) :]}"
                "v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                "Content-Type: application/json\r\nContent-Length: 94371840\r\n\r\n"
            )
            sock.sendall(head.encode())
            sent = 0
            with contextlib.suppress(OSError):
                while sent < 90:  # the service answers and closes before taking it all
                    sock.sendall(chunk_)
                    sent += 1
            answer = sock.recv(65536).decode(errors="replace")
            assert answer.startswith("HTTP/1.1 401"), answer[:200]
            assert sent < 90, "the service read the whole body"
    assert replica.rss_kib() - before < 20 * 1024  # flat: no body was kept
    with httpx.Client(timeout=30, trust_env=False) as client:
        too_big = client.post(
            f"{replica.url}v1/chat/completions",
            content=b"{" + b" " * (9 << 20) + b"}",
            headers={"Authorization": f"token {scale.tokens['frank']}"},
        )
    assert too_big.status_code == 413 and too_big.json()["error"]["code"] == "too_large"


@pytest.mark.parametrize(
    "raw", [b'{"messages": [], "temperature": NaN}', b'{"a": ' + b"[" * 200 + b"]" * 200 + b"}"]
)
def test_nan_and_deep_nesting_are_a_400(scale: Scale, raw: bytes) -> None:
    headers = {"Authorization": f"token {scale.tokens['frank']}"}
    answer = httpx.post(
        f"{scale.replicas['b'].url}v1/chat/completions",
        content=raw,
        headers=headers,
        trust_env=False,
    )
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["code"] == "bad_request"


def test_a_replica_killed_mid_stream_ends_the_run_with_one_error_and_the_next_run_works(
    scale: Scale,
) -> None:
    hub, alice = scale.hub, scale.hub.users["alice"]
    openai = scale.upstreams.openai
    openai.reply_to = lambda _: slow_answer(pieces=80, pace=0.1)
    chat = {"messages": [{"role": "user", "content": "hi"}]}
    events: list[Any] = []
    done = threading.Event()

    def run() -> None:
        def seen(event: Any) -> bool:
            events.append(event)
            return False

        try:
            hub.stream(f"{alice.prefix}resolve/api/chat", chat, headers=alice.auth, until=seen)
        except httpx.HTTPError as exc:
            events.append(exc)
        finally:
            done.set()

    before = len(openai.requests)
    thread = threading.Thread(target=run)
    thread.start()
    deadline = time.monotonic() + 30
    while len(openai.requests) == before:
        assert time.monotonic() < deadline, "the request never reached the upstream"
        time.sleep(0.05)
    time.sleep(1.0)  # some of the answer is out
    key = openai.requests[before].headers.get("authorization")
    serving = next(r for n, r in scale.replicas.items() if f"Bearer {KEYS[n]}" == key)
    assert serving.proc is not None
    serving.proc.kill()
    serving.proc.wait(10)
    thread.join(30)  # hub_stream_timeout (4 s), well before provider_timeout (60 s)
    openai.reply_to = None
    assert done.is_set(), f"the run did not end: {dumps(events)}"
    try:
        errors = [e for e in events if getattr(e, "event", None) == "run.error"]
        assert len(errors) == 1, dumps(events)
        message = errors[0].data["message"]
        assert "hub" in message and "<" not in message, message
        # behind the proxy the dead replica's connection stays open: the silence ends the run
        assert errors[0].data.get("code") in ("hub_stream_silent", "hub_stream_cut"), dumps(errors)
        assert events[-1].event == "run.completed" and events[-1].data["reason"] == "error"
        _, again, rest = hub.stream(f"{alice.prefix}resolve/api/chat", chat, headers=alice.auth)
        assert again and again[-1].event == "run.completed", dumps(again) + rest
        assert again[-1].data["reason"] == "stop", dumps(again)
    finally:
        serving.start()  # as the Deployment would


def test_with_every_replica_down_a_run_ends_in_one_plain_sentence(scale: Scale) -> None:
    hub, alice = scale.hub, scale.hub.users["alice"]
    chat = {"messages": [{"role": "user", "content": "hi"}]}
    for replica in scale.replicas.values():
        replica.stop()
    try:
        _, events, rest = hub.stream(f"{alice.prefix}resolve/api/chat", chat, headers=alice.auth)
        errors = [e.data["message"] for e in events if e.event == "run.error"]
        assert len(errors) == 1, dumps(events) + rest
        assert errors[0].startswith("the hub's model service is not answering"), errors[0]
        assert "<" not in errors[0]  # not the proxy's page
    finally:
        for replica in scale.replicas.values():
            replica.spawn()
        for replica in scale.replicas.values():
            replica.wait()
    _, again, rest = hub.stream(f"{alice.prefix}resolve/api/chat", chat, headers=alice.auth)
    assert again[-1].data["reason"] == "stop", dumps(again) + rest
