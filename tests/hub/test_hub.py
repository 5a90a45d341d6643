"""jupyter-resolve behind a real JupyterHub (DESIGN 7): two users, each with a single-user server
spawned by the hub and carrying the extension, reached through the hub's proxy.

One hub serves the whole module (starting it and two servers takes most of the time).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.hub.hub import (
    USERS,
    Hub,
    HubUser,
    alive,
    cookie,
    dumps,
    find_proxy,
    health,
    login,
    running_hub,
    runtime_pid,
)

PROXY = find_proxy()

pytestmark = [
    pytest.mark.skipif(
        PROXY is None,
        reason="configurable-http-proxy is not installed (`make setup` installs it from npm "
        "into .venv/hub-node; or set RESOLVE_HUB_PROXY to its path)",
    ),
    # the first test also waits for the hub and both servers to start
    pytest.mark.timeout(240),
]

FENCE = "```"
CHAT = {"messages": [{"role": "user", "content": "hi"}]}
RUN_42 = {"messages": [{"role": "user", "content": f"Run:\n{FENCE}python\nprint(6*7)\n{FENCE}"}]}


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    assert PROXY is not None
    with running_hub(tmp_path_factory.mktemp("hub"), PROXY) as running:
        running.spawn(USERS)
        yield running


@pytest.fixture(scope="module")
def healths(hub: Hub) -> dict[str, dict[str, Any]]:
    found = {}
    for name, user in hub.users.items():
        answer = health(hub, user)
        assert answer.status_code == 200, answer.text
        found[name] = answer.json()
        runtime_pid(hub, user)  # so that teardown stops it even if its server is gone
    return found


def chat(hub: Hub, user: HubUser, body: dict[str, Any]) -> list[Any]:
    status, events, rest = hub.stream(f"{user.prefix}resolve/api/chat", body, headers=user.auth)
    assert status == 200, rest
    assert events and events[-1].event == "run.completed", dumps(events) + rest
    assert [e.event for e in events].count("run.completed") == 1
    return events


def test_each_user_server_runs_its_own_gateway_and_runtime(
    hub: Hub, healths: dict[str, dict[str, Any]]
) -> None:
    for name in USERS:
        body = healths[name]
        assert body["ok"] is True, body
        assert body["runtime"]["state"] == "running", body
        assert body["drift"] == []
        assert Path(f"/proc/{body['runtime']['pid']}").exists()
    alice, bob = (healths[name]["runtime"] for name in USERS)
    assert alice["pid"] != bob["pid"]
    assert alice["url"] != bob["url"]  # a free loopback port each, picked at start
    for runtime in (alice, bob):
        assert httpx.URL(runtime["url"]).host == "127.0.0.1"


@pytest.mark.parametrize("name", USERS)
def test_a_streamed_chat_on_the_scripted_model(hub: Hub, name: str) -> None:
    events = chat(hub, hub.users[name], CHAT)
    assert events[0].event == "run.started"
    assert [e.id for e in events] == list(range(1, len(events) + 1))
    text = "".join(e.data["text"] for e in events if e.event == "text.delta")
    assert "offline scripted model" in text
    assert events[-1].data["reason"] == "stop"


@pytest.mark.parametrize("name", USERS)
def test_a_tool_call_in_the_users_scratch_kernel(hub: Hub, name: str) -> None:
    events = chat(hub, hub.users[name], RUN_42)
    done = [e.data for e in events if e.event == "tool.completed"]
    assert done, dumps(events)
    assert done[0]["name"] == "python" and done[0]["ok"] is True, done
    assert done[0]["output"].strip() == "42"
    session = events[0].data["session_id"]
    work = hub.workdir / "home" / name / ".resolve" / "sessions" / session / "work"
    assert work.is_dir(), "the session lives under the user's own server root"


def test_one_users_token_does_not_reach_another_users_api(
    hub: Hub, healths: dict[str, dict[str, Any]]
) -> None:
    alice, bob = hub.users["alice"], hub.users["bob"]
    refused = health(hub, bob, token=alice.token)
    assert refused.status_code == 403, (refused.status_code, refused.text)
    assert str(healths["bob"]["runtime"]["pid"]) not in refused.text
    status, events, _ = hub.stream(f"{bob.prefix}resolve/api/chat", CHAT, headers=alice.auth)
    assert status == 403 and not events
    # and the other way round, on a different endpoint
    with hub.client() as client:
        runs = client.get(f"{alice.prefix}resolve/api/runs", headers=bob.auth)
    assert runs.status_code == 403, runs.text


def test_cookie_auth_needs_the_xsrf_header(hub: Hub) -> None:
    """The panel's case: logged in through the hub, the page's requests carry cookies."""
    browser = login(hub, "alice")
    try:
        assert cookie(browser, "jupyterhub-user-alice", "/user/alice/")
        xsrf = cookie(browser, "_xsrf", "/user/alice/")
        assert xsrf, [(c.name, c.path) for c in browser.cookies.jar]
        path = "/user/alice/resolve/api/chat"
        status, events, rest = hub.stream(path, CHAT, headers={}, client=browser)
        assert status == 403 and not events, rest
        status, events, rest = hub.stream(path, CHAT, headers={"X-XSRFToken": xsrf}, client=browser)
        assert status == 200, rest
        assert events[-1].event == "run.completed", dumps(events)
        # a GET by fetch() (not a navigation) needs the header too, and works with it
        fetch = {"Sec-Fetch-Mode": "cors", "Sec-Fetch-Site": "same-origin"}
        bare = browser.get("/user/alice/resolve/api/health", headers=fetch)
        assert bare.status_code == 403, bare.text
        got = browser.get("/user/alice/resolve/api/health", headers={**fetch, "X-XSRFToken": xsrf})
        assert got.status_code == 200 and got.json()["ok"] is True
        # and the cookies of alice do not open bob's API
        other = browser.get(
            "/user/bob/resolve/api/health",
            headers={**fetch, "X-XSRFToken": xsrf},
            follow_redirects=False,
        )
        assert other.status_code != 200, other.text
    finally:
        browser.close()


@pytest.mark.parametrize("name", USERS)
def test_promoting_a_file_the_chat_wrote(hub: Hub, name: str) -> None:
    user = hub.users[name]
    code = f"open('answer.txt', 'w').write('{name}: ' + str(6 * 7))\nprint('written')"
    body = {"messages": [{"role": "user", "content": f"Run:\n{FENCE}python\n{code}\n{FENCE}"}]}
    events = chat(hub, user, body)
    assert any(e.event == "tool.completed" and e.data["ok"] for e in events), dumps(events)
    session = events[0].data["session_id"]
    with hub.client() as client:
        promoted = client.post(
            f"{user.prefix}resolve/api/artifacts",
            json={"session_id": session, "path": "answer.txt", "title": "the answer"},
            headers=user.auth,
        )
        if promoted.status_code == 404 and "resolve" not in promoted.text:
            pytest.skip("POST /resolve/api/artifacts is not served yet")
        assert promoted.status_code in (200, 201), promoted.text
        manifest = promoted.json()
        content = client.get(
            f"{user.prefix}resolve/api/artifacts/{manifest['id']}/content", headers=user.auth
        )
        assert content.status_code == 200, content.text
        assert content.text == f"{name}: 42"
        other = next(u for u in hub.users.values() if u.name != name)
        listed = client.get(f"{other.prefix}resolve/api/artifacts", headers=other.auth)
        assert listed.status_code == 200
        assert manifest["id"] not in listed.text, "artifacts are per user server"
    store = hub.workdir / "home" / name / ".resolve" / "artifacts"
    assert store.is_dir(), "the artifact store lives under the user's server root"


class KernelSocket:
    """A kernel of the user's server, driven over the websocket through the hub's proxy."""

    def __init__(self, hub: Hub, user: HubUser, kernel_id: str) -> None:
        import websocket  # websocket-client, a jupyter_server dependency

        url = hub.url.replace("http://", "ws://") + f"{user.prefix}api/kernels/{kernel_id}/channels"
        self.ws = websocket.create_connection(url, header=[f"Authorization: token {user.token}"])
        self.ws.settimeout(90)
        self.session = uuid.uuid4().hex

    def execute(self, code: str, timeout: float = 120) -> tuple[str, str]:
        """Run ``code``; its reply status and everything it printed or displayed as text."""
        msg_id = uuid.uuid4().hex
        header = {
            "msg_id": msg_id,
            "msg_type": "execute_request",
            "session": self.session,
            "username": "hub-test",
            "version": "5.3",
            "date": "",
        }
        content = {"code": code, "silent": False, "store_history": True, "allow_stdin": False}
        message = {"header": header, "parent_header": {}, "metadata": {}, "content": content}
        self.ws.send(json.dumps({**message, "channel": "shell", "buffers": []}))
        status, out, idle = "", [], False
        deadline = time.monotonic() + timeout
        while not (status and idle):
            assert time.monotonic() < deadline, "".join(out)
            raw = self.ws.recv()
            if isinstance(raw, bytes):
                continue  # a binary frame (widget buffers): not ours to read
            reply = json.loads(raw)
            if reply.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, body = reply["header"]["msg_type"], reply["content"]
            if kind == "stream":
                out.append(body["text"])
            elif kind in ("execute_result", "display_data"):
                out.append(body.get("data", {}).get("text/plain", "") + "\n")
            elif kind == "error":
                out.append("\n".join(body.get("traceback", [])))
            elif kind == "status" and body["execution_state"] == "idle":
                idle = True
            elif kind == "execute_reply":
                status = body["status"]
        return status, "".join(out)

    def close(self) -> None:
        self.ws.close()


def test_resolve_magic_in_a_kernel_of_the_hub_spawned_server(hub: Hub) -> None:
    user = hub.users["alice"]
    with hub.client() as client:
        started = client.post(f"{user.prefix}api/kernels", json={}, headers=user.auth)
        assert started.status_code == 201, started.text
        kernel_id = started.json()["id"]
        kernel = KernelSocket(hub, user, kernel_id)
        try:
            status, out = kernel.execute(
                "import os\n"
                "print('URL', os.environ.get('JUPYTER_RESOLVE_URL'))\n"
                "print('TOKEN', bool(os.environ.get('JUPYTER_RESOLVE_TOKEN')))\n"
                "print('NOT THE HUB TOKEN', os.environ.get('JUPYTER_RESOLVE_TOKEN') "
                "!= os.environ.get('JUPYTERHUB_API_TOKEN'))\n"
            )
            assert status == "ok", out
            if "URL None" in out or "TOKEN False" in out:
                pytest.skip("the server does not export JUPYTER_RESOLVE_URL/_TOKEN yet")
            url = out.split("URL ", 1)[1].split()[0]
            assert url.startswith("http://127.0.0.1:") and url.endswith(user.prefix), url
            assert "NOT THE HUB TOKEN True" in out
            status, out = kernel.execute(
                "%load_ext jupyter_resolve\n"
                "%resolve status\n"
                f"get_ipython().run_cell_magic('resolve', '', 'Run:\\n{FENCE}python\\n"
                f"print(6*7)\\n{FENCE}')\n"
                "print('RESULT', _resolve.reason, _resolve.tool_calls[0]['output'].strip())\n"
            )
            assert status == "ok", out
            assert "RESULT stop 42" in out, out
        finally:
            kernel.close()
            client.delete(f"{user.prefix}api/kernels/{kernel_id}", headers=user.auth)


def test_stopping_a_users_server_stops_its_runtime(
    hub: Hub, healths: dict[str, dict[str, Any]]
) -> None:
    """Runs last: the hub stops bob's server as an admin would (DELETE .../server)."""
    pid = healths["bob"]["runtime"]["pid"]
    stopped = hub.api("DELETE", "users/bob/server")
    assert stopped.status_code in (202, 204), stopped.text
    deadline = time.monotonic() + 30
    while hub.api("GET", "users/bob").json().get("servers", {}).get(""):
        assert time.monotonic() < deadline, "the hub did not stop bob's server"
        time.sleep(0.3)
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not alive(pid), f"bob's agent-httpd (pid {pid}) outlived his server"
