"""The organization's hub service (issue 37.1, 37.2) behind a real JupyterHub.

The hub runs ``python -m jupyter_resolve.hub`` as a managed service whose environment holds the
upstream key (a canary string, taken from the hub's own environment as an admin's config
would); the upstream is the fake OpenAI server, in this process. The two users' servers run
with ``c.Resolve.provider = "hub"``: they send their own hub tokens to the service. bob is in
the group ``students``, whose daily budget is 20 tokens (one answer of the fake); alice has no
limit; ``boss`` is a hub admin.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import secrets
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fakes import anthropic_server as anthropic
from tests.fakes._server import Part, Reply
from tests.fakes.anthropic_server import TEXT as ANTHROPIC_TEXT
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.openai_server import MODEL, TEXT, FakeOpenAI, error
from tests.hub.hub import (
    PASSWORD,
    USERS,
    Hub,
    HubSetup,
    HubUser,
    children_of,
    dumps,
    find_proxy,
    running_hub,
    runtime_pid,
)
from tests.hub.test_hub import CHAT, KernelSocket
from tests.launcher import free_port

PROXY = find_proxy()
SERVICE = "resolve"
CANARY = "sk-canary-" + secrets.token_hex(16)
ADMIN = "boss"

pytestmark = [
    pytest.mark.skipif(PROXY is None, reason="configurable-http-proxy is not installed"),
    pytest.mark.timeout(240),
]


class FakeUpstreams:
    """The fake OpenAI and Anthropic servers on a loop of their own thread (the hub's service
    calls them)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.openai = FakeOpenAI("text")
        self.anthropic = FakeAnthropic("text")

    def __enter__(self) -> FakeUpstreams:
        self.thread.start()
        for fake in (self.openai, self.anthropic):
            asyncio.run_coroutine_threadsafe(fake.start(), self.loop).result(10)
        return self

    def __exit__(self, *exc: object) -> None:
        for fake in (self.openai, self.anthropic):
            asyncio.run_coroutine_threadsafe(fake.stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def service_setup(workdir: Path, upstreams: FakeUpstreams, public: int) -> HubSetup:
    service_dir = workdir / "service"
    service_dir.mkdir()
    (service_dir / "jupyter_resolve_hub_config.py").write_text(
        f"c.ResolveHub.openai_base_url = {upstreams.openai.base_url!r}\n"
        f"c.ResolveHub.anthropic_base_url = {upstreams.anthropic.base_url!r}\n"
        f"c.ResolveHub.default_model = {MODEL!r}\n"
        "c.ResolveHub.group_limits = {'students': {'day_tokens': 20}}\n"
    )
    port = free_port()
    service = {
        "name": SERVICE,
        "url": f"http://127.0.0.1:{port}",
        "command": [sys.executable, "-m", "jupyter_resolve.hub"],
        "cwd": str(service_dir),
        "oauth_no_confirm": True,
    }
    return HubSetup(
        settings={
            "JupyterHub.public_url": f"http://127.0.0.1:{public}/",
            "JupyterHub.services": [service],
            "JupyterHub.load_roles": [
                {"name": "user", "scopes": ["self", f"access:services!service={SERVICE}"]},
                {
                    "name": "server",
                    "scopes": [
                        "users:activity!user",
                        "access:servers!server",
                        f"access:services!service={SERVICE}",
                    ],
                },
                {
                    "name": "resolve-groups",
                    "scopes": ["read:users:groups", "read:users:name"],
                    "services": [SERVICE],
                },
            ],
            "JupyterHub.load_groups": {"students": {"users": ["bob"]}},
            "Authenticator.admin_users": {ADMIN},
        },
        # the key comes from the hub's environment, as an admin's config would take it
        lines=[
            "c.JupyterHub.services[-1]['environment'] = "
            "{'OPENAI_API_KEY': os.environ['RESOLVE_UPSTREAM_KEY'], "
            "'ANTHROPIC_API_KEY': os.environ['RESOLVE_UPSTREAM_KEY']}"
        ],
        spawner_args=["--Resolve.provider=hub"],
        env={"RESOLVE_UPSTREAM_KEY": CANARY},
    )


@pytest.fixture(scope="module")
def upstreams() -> Iterator[FakeUpstreams]:
    with FakeUpstreams() as fakes:
        yield fakes


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory, upstreams: FakeUpstreams) -> Iterator[Hub]:
    assert PROXY is not None
    workdir = tmp_path_factory.mktemp("hub-service")
    ports = (free_port(), free_port(), free_port())
    setup = service_setup(workdir, upstreams, ports[0])
    with running_hub(workdir, PROXY, setup, ports) as running:
        running.spawn(USERS)
        for user in running.users.values():
            runtime_pid(running, user)  # stopped at the end even if its server is gone
        yield running


@pytest.fixture(scope="module")
def admin_token(hub: Hub) -> str:
    made = hub.api("POST", f"users/{ADMIN}/tokens", {"note": "resolve hub admin test"})
    assert made.status_code == 201, made.text
    return str(made.json()["token"])


def chat(hub: Hub, user: HubUser) -> list[Any]:
    status, events, rest = hub.stream(f"{user.prefix}resolve/api/chat", CHAT, headers=user.auth)
    assert status == 200, rest
    assert events and events[-1].event == "run.completed", dumps(events) + rest
    return events


@contextlib.contextmanager
def kernel_of(hub: Hub, user: HubUser) -> Iterator[KernelSocket]:
    """A new kernel of the user's server, shut down at the end."""
    with hub.client() as client:
        started = client.post(f"{user.prefix}api/kernels", json={}, headers=user.auth)
        assert started.status_code == 201, started.text
        kernel_id = started.json()["id"]
        kernel = KernelSocket(hub, user, kernel_id)
        try:
            yield kernel
        finally:
            kernel.close()
            client.delete(f"{user.prefix}api/kernels/{kernel_id}", headers=user.auth)


def service_get(hub: Hub, path: str, token: str) -> httpx.Response:
    with hub.client() as client:
        return client.get(
            f"/services/{SERVICE}/{path}", headers={"Authorization": f"token {token}"}
        )


def environ(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return b""  # gone since it was listed


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def test_chats_go_through_the_service_with_the_organizations_key(
    hub: Hub, upstreams: FakeUpstreams
) -> None:
    events = chat(hub, hub.users["alice"])
    text = "".join(e.data["text"] for e in events if e.event == "text.delta")
    assert text == TEXT, dumps(events)
    assert events[0].data["model"] == "default"
    sent = upstreams.openai.requests[-1]
    assert sent.headers.get("authorization") == f"Bearer {CANARY}"
    assert sent.body["model"] == MODEL  # the service's default model for the user
    assert sent.body["stream_options"] == {"include_usage": True}


def test_no_users_server_or_kernel_holds_the_key(hub: Hub) -> None:
    user = hub.users["alice"]
    chat(hub, user)  # a scratch kernel runs too
    with kernel_of(hub, user) as kernel:
        status, out = kernel.execute(
            "import os\nprint('LEAK' if any('sk-canary-' in v for v in os.environ.values()) "
            "else 'CLEAN')"
        )
        assert status == "ok" and "CLEAN" in out, out
        processes = children_of(hub.server_pids)
        assert len(processes) >= 4, processes  # servers, runtimes, kernels
        for pid in processes:
            assert CANARY.encode() not in environ(pid), (pid, cmdline(pid))
    # the canary is where it belongs: the service's environment (so this test can see it)
    service = [p for p in children_of([hub.proc.pid]) if "jupyter_resolve.hub" in cmdline(p)]
    assert service and CANARY.encode() in environ(service[0])


def test_a_user_stops_at_their_budget_and_the_other_goes_on(hub: Hub) -> None:
    bob, alice = hub.users["bob"], hub.users["alice"]
    first = chat(hub, bob)
    assert first[-1].data["reason"] == "stop", dumps(first)
    refused = chat(hub, bob)
    errors = [e.data for e in refused if e.event == "run.error"]
    assert errors, dumps(refused)
    message = errors[0]["message"]
    assert errors[0]["code"] == "budget_exceeded", errors[0]
    assert "larger budget" in message  # what to do about it
    assert "day_tokens" in message and "20 tokens" in message, message
    assert "resets at 20" in message and "T00:00:00Z" in message, message
    assert refused[-1].data["reason"] == "error"
    again = chat(hub, alice)
    assert again[-1].data["reason"] == "stop", dumps(again)
    with hub.client() as client:
        usage = client.get(f"{bob.prefix}resolve/api/usage", headers=bob.auth)
    assert usage.status_code == 200, usage.text
    body = usage.json()
    assert body["provider"] == "hub" and body["user"] == "bob"
    assert body["day"]["tokens"] == 20 and body["day"]["limit_tokens"] == 20
    assert body["month"]["tokens"] == 20 and body["month"]["limit_tokens"] is None
    assert set(body["day"]) == {"tokens", "cost", "limit_tokens", "limit_cost", "resets_at"}


def test_a_user_reads_only_their_own_usage(hub: Hub) -> None:
    alice = hub.users["alice"]
    own = service_get(hub, "usage", alice.token)
    assert own.status_code == 200 and own.json()["user"] == "alice", own.text
    other = service_get(hub, "usage?user=bob", alice.token)
    assert other.status_code == 403, other.text
    assert "bob" not in other.text
    everyone = service_get(hub, "admin/usage", alice.token)
    assert everyone.status_code == 403, everyone.text
    nobody = service_get(hub, "usage", "not-a-token")
    assert nobody.status_code in (401, 403), nobody.text


def test_the_admin_sees_everyones_usage(hub: Hub, admin_token: str) -> None:
    chat(hub, hub.users["alice"])  # whatever ran before, both have used some now
    answer = service_get(hub, "admin/usage", admin_token)
    assert answer.status_code == 200, answer.text
    rows = {row["user"]: row for row in answer.json()["users"]}
    assert {"alice", "bob"} <= set(rows), rows
    assert rows["alice"]["day"]["tokens"] >= 20 and rows["alice"]["day"]["limit_tokens"] is None
    assert rows["bob"]["day"]["limit_tokens"] == 20
    first = service_get(hub, "admin/usage?limit=1", admin_token).json()
    assert len(first["users"]) == 1 and first["next"] == 1  # a page at a time
    assert answer.json()["next"] is None
    page = service_get(hub, "admin", admin_token)
    assert page.status_code == 200 and "<td>alice</td>" in page.text
    bob = service_get(hub, "usage?user=bob", admin_token)
    assert bob.status_code == 200 and bob.json()["user"] == "bob"


def anthropic_text(raw: bytes) -> str:
    """The text of an Anthropic stream's text deltas."""
    pieces = []
    for line in raw.decode().splitlines():
        if line.startswith("data: "):
            obj = json.loads(line[6:])
            if obj.get("type") == "content_block_delta" and obj["delta"]["type"] == "text_delta":
                pieces.append(obj["delta"]["text"])
    return "".join(pieces)


def anthropic_body(max_tokens: int) -> dict[str, Any]:
    """A streamed Anthropic message request saying "hi"."""
    return {
        "model": "claude-fake",
        "max_tokens": max_tokens,
        "stream": True,
        "messages": [{"role": "user", "content": "hi"}],
    }


def test_anthropic_messages_stream_through_the_service(hub: Hub, upstreams: FakeUpstreams) -> None:
    alice, bob = hub.users["alice"], hub.users["bob"]
    before = service_get(hub, "usage", alice.token).json()["day"]["tokens"]
    body = anthropic_body(max_tokens=64)
    path = f"/services/{SERVICE}/v1/messages"
    headers = {"anthropic-version": "2023-06-01"}
    with hub.client() as client:
        with client.stream("POST", path, json=body, headers={**headers, **alice.auth}) as answer:
            assert answer.status_code == 200, answer.read()
            assert answer.headers["content-type"].startswith("text/event-stream")
            raw = b"".join(answer.iter_bytes())
        refused = client.post(path, json=body, headers={**headers, **bob.auth})
    assert anthropic_text(raw) == ANTHROPIC_TEXT
    assert b"event: message_stop" in raw
    assert upstreams.anthropic.requests[-1].headers.get("x-api-key") == CANARY
    after = service_get(hub, "usage", alice.token).json()["day"]["tokens"]
    assert after - before == 25 + 12  # the fake's input and output tokens
    assert refused.status_code == 429, refused.text
    error = refused.json()["error"]
    assert error["code"] == "budget_exceeded" and error["limit"] == "day_tokens"
    assert error["resets_at"].endswith("T00:00:00Z")
    assert int(refused.headers["retry-after"]) > 0


def slow_anthropic_answer(deltas: int, output_tokens: int) -> Reply:
    """A streamed Anthropic message whose text comes slowly, then its usage at the end."""
    frames = [Part(anthropic.message_start())]
    frames.append(Part(anthropic.block_start(0, {"type": "text", "text": ""})))
    delta = {"type": "text_delta", "text": "w "}
    frames += [Part(anthropic.block_delta(0, delta), delay=0.05) for _ in range(deltas)]
    frames.append(Part(anthropic.block_stop(0)))
    frames += [Part(f) for f in anthropic.finish("end_turn", output_tokens)]
    return Reply(200, list(anthropic.SSE_HEADERS), frames)


def test_an_anthropic_client_that_hangs_up_is_charged(hub: Hub, upstreams: FakeUpstreams) -> None:
    """The service reads on after the client leaves, for the usage the message reports at its
    end (message_start's input tokens, message_delta's output tokens)."""
    alice = hub.users["alice"]
    before = service_get(hub, "usage", alice.token).json()["day"]["tokens"]
    body = anthropic_body(max_tokens=512)
    headers = {"anthropic-version": "2023-06-01", **alice.auth}
    upstreams.anthropic.reply_to = lambda _: slow_anthropic_answer(deltas=30, output_tokens=300)
    try:
        with hub.client() as client:
            path = f"/services/{SERVICE}/v1/messages"
            with client.stream("POST", path, json=body, headers=headers) as answer:
                assert answer.status_code == 200, answer.read()
                next(answer.iter_bytes())  # the first piece, then the client leaves
        deadline = time.monotonic() + 30
        spent = before
        while spent == before and time.monotonic() < deadline:
            time.sleep(0.3)
            spent = service_get(hub, "usage", alice.token).json()["day"]["tokens"]
    finally:
        upstreams.anthropic.reply_to = None
    assert spent - before == 25 + 300  # what the upstream reported, read on after the hang-up


def test_resolve_usage_in_a_users_kernel(hub: Hub) -> None:
    with kernel_of(hub, hub.users["alice"]) as kernel:
        status, out = kernel.execute(
            "%load_ext jupyter_resolve\n%resolve usage\n"
            "print('USER', _resolve_usage['user'], _resolve_usage['day']['tokens'] > 0)"
        )
    assert status == "ok", out
    assert "Usage of alice" in out and "USER alice True" in out, out


def test_an_upstream_refusing_the_key_is_the_admins_problem_said_so(
    hub: Hub, upstreams: FakeUpstreams
) -> None:
    refusal = error(401, "Incorrect API key provided: sk-canary-…", "invalid_request_error")
    upstreams.openai.reply_to = lambda _: refusal
    try:
        events = chat(hub, hub.users["alice"])
    finally:
        upstreams.openai.reply_to = None
    errors = [e.data["message"] for e in events if e.event == "run.error"]
    assert errors and "refused the hub service's key" in errors[0], dumps(events)
    assert "administrator" in errors[0]
    assert CANARY not in errors[0]


def test_inline_completion_goes_through_the_service_and_is_counted(
    hub: Hub, upstreams: FakeUpstreams
) -> None:
    alice = hub.users["alice"]
    before = service_get(hub, "usage", alice.token).json()["day"]["tokens"]
    body = {"prefix": "import numpy as np\nimport ", "model": "fake-coder", "cell_id": "c1"}
    with hub.client() as client:
        answer = client.post(f"{alice.prefix}resolve/api/completion", json=body, headers=alice.auth)
    assert answer.status_code == 200, answer.text
    assert answer.json()["items"], answer.text
    sent = upstreams.openai.requests[-1]
    assert sent.path == "/v1/completions" and sent.headers["authorization"] == f"Bearer {CANARY}"
    after = service_get(hub, "usage", alice.token).json()["day"]["tokens"]
    assert after - before == 12 + 3  # the fake's usage of a completion


def test_the_admin_page_opens_in_a_browser_through_the_hubs_login(hub: Hub) -> None:
    with hub.client(follow_redirects=True) as browser:
        page = browser.get("/hub/login")
        found = re.search(r'name="_xsrf"\s+value="([^"]+)"', page.text)
        form = {"username": ADMIN, "password": PASSWORD, **({"_xsrf": found[1]} if found else {})}
        browser.post("/hub/login", data=form, params={"next": f"/services/{SERVICE}/admin"})
        landed = browser.get(f"/services/{SERVICE}/admin")
        assert landed.status_code == 200, (landed.url, landed.text[:300])
        assert "Tokens per day" in landed.text and "Top users this month" in landed.text
        assert "<td>alice</td>" in landed.text and "<svg" in landed.text
        assert "script-src" not in landed.headers["content-security-policy"]
    with hub.client(follow_redirects=True) as browser:  # bob is no admin
        page = browser.get("/hub/login")
        found = re.search(r'name="_xsrf"\s+value="([^"]+)"', page.text)
        form = {"username": "bob", "password": PASSWORD, **({"_xsrf": found[1]} if found else {})}
        browser.post("/hub/login", data=form)
        refused = browser.get(f"/services/{SERVICE}/admin")
        assert refused.status_code == 403, refused.text[:300]
