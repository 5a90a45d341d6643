"""A real JupyterHub on loopback for the hub tests, and a client of it.

The hub runs as a subprocess in its own working directory (database, cookie secret, proxy pid
file, users' homes) with the dummy authenticator and ``SimpleLocalProcessSpawner``: every user's
single-user server runs as the current Unix user, in its own home, from this venv (so it loads
the extension through the venv's jupyter-config, as a pip-installed single-user image does).
Every process is stopped at the end: the hub, its proxy, the user servers and their children.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import REPO, SSE, parse_sse_block, runtime_binary
from tests.launcher import free_port, start_process

VENV_BIN = Path(sys.executable).parent
PASSWORD = "resolve-hub-test"
USERS = ("alice", "bob")


def find_proxy() -> str | None:
    """configurable-http-proxy as `make setup` installs it (npm, under the venv), else on PATH."""
    for candidate in (
        os.environ.get("RESOLVE_HUB_PROXY", ""),
        str(Path(sys.prefix) / "hub-node" / "node_modules" / ".bin" / "configurable-http-proxy"),
        str(REPO / ".venv" / "hub-node" / "node_modules" / ".bin" / "configurable-http-proxy"),
    ):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("configurable-http-proxy")


@dataclass
class HubSetup:
    """What a test module adds to the hub's config: settings (a list setting such as
    ``JupyterHub.services`` is appended to), raw config lines, the user servers' extra
    arguments, and the hub process's extra environment."""

    settings: dict[str, Any] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    spawner_args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)


def hub_config(
    workdir: Path,
    proxy: str,
    *,
    token: str,
    ports: tuple[int, int, int],
    setup: HubSetup | None = None,
) -> str:
    setup = setup or HubSetup()
    public, hub, proxy_api = ports
    spawner_args = ["--allow-root", *setup.spawner_args]
    packaged = REPO / "jupyter_resolve" / "bin" / "agent-httpd"
    if not packaged.exists():  # a source checkout without the packaged binary
        spawner_args.append(f"--Resolve.runtime_path={runtime_binary()}")
    settings: dict[str, Any] = {
        "JupyterHub.bind_url": f"http://127.0.0.1:{public}",
        "JupyterHub.hub_bind_url": f"http://127.0.0.1:{hub}",
        "ConfigurableHTTPProxy.api_url": f"http://127.0.0.1:{proxy_api}",
        "ConfigurableHTTPProxy.command": [proxy],
        "JupyterHub.authenticator_class": "dummy",
        "DummyAuthenticator.password": PASSWORD,
        "Authenticator.allow_all": True,
        "JupyterHub.spawner_class": "simple",
        "SimpleLocalProcessSpawner.home_dir_template": str(workdir / "home" / "{username}"),
        "Spawner.cmd": [str(VENV_BIN / "jupyterhub-singleuser")],
        "Spawner.args": spawner_args,
        "Spawner.start_timeout": 90,
        "Spawner.http_timeout": 90,
        "JupyterHub.services": [{"name": "resolve-test", "api_token": token}],
        "JupyterHub.load_roles": [
            {
                "name": "resolve-test",
                "scopes": ["admin:users", "admin:servers", "tokens", "access:servers"],
                "services": ["resolve-test"],
            }
        ],
        "JupyterHub.cleanup_servers": True,
        "JupyterHub.cleanup_proxy": True,
        # POST /users/{name}/server answers at once; the test polls for readiness
        "JupyterHub.tornado_settings": {"slow_spawn_timeout": 0},
    }
    for name, value in setup.settings.items():
        base = settings.get(name)
        settings[name] = [*base, *value] if isinstance(base, list) else value
    lines = ["import os", *(f"c.{name} = {value!r}" for name, value in settings.items())]
    return "\n".join([*lines, *setup.lines]) + "\n"


@dataclass
class HubUser:
    name: str
    token: str
    prefix: str  # /user/<name>/

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"token {self.token}"}


@dataclass
class Hub:
    url: str  # the proxy's public URL, http://127.0.0.1:PORT
    token: str  # the test service's admin token
    workdir: Path
    proc: subprocess.Popen[bytes]
    users: dict[str, HubUser] = field(default_factory=dict)
    server_pids: list[int] = field(default_factory=list)  # and runtimes: stopped at the end

    def client(self, **kw: Any) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=60, trust_env=False, **kw)

    def api(self, method: str, path: str, body: Any = None) -> httpx.Response:
        with self.client() as client:
            return client.request(
                method,
                f"/hub/api/{path.lstrip('/')}",
                json=body,
                headers={"Authorization": f"token {self.token}"},
            )

    def log(self) -> str:
        path = self.workdir / "hub.log"
        return path.read_text(errors="replace")[-6000:] if path.exists() else ""

    def spawn(self, names: tuple[str, ...], timeout: float = 120) -> None:
        """Create the users, start their servers together and wait until both are ready."""
        created = self.api("POST", "users", {"usernames": list(names)})
        assert created.status_code in (201, 409), created.text
        for name in names:
            started = self.api("POST", f"users/{name}/server")
            assert started.status_code in (201, 202), started.text
        deadline = time.monotonic() + timeout
        for name in names:
            while True:
                model = self.api("GET", f"users/{name}").json()
                server = model.get("servers", {}).get("")
                if server and server.get("ready"):
                    pid = (server.get("state") or {}).get("pid")
                    if pid:
                        self.server_pids.append(int(pid))
                    break
                assert self.proc.poll() is None, f"the hub exited:\n{self.log()}"
                assert time.monotonic() < deadline, (
                    f"{name}'s server never got ready:\n{self.log()}"
                )
                time.sleep(0.3)
            made = self.api("POST", f"users/{name}/tokens", {"note": "jupyter-resolve hub test"})
            assert made.status_code == 201, made.text
            self.users[name] = HubUser(name, made.json()["token"], f"/user/{name}/")

    def stream(
        self,
        path: str,
        body: Any,
        *,
        headers: dict[str, str],
        client: httpx.Client | None = None,
        until: Callable[[SSE], bool] | None = None,
    ) -> tuple[int, list[SSE], str]:
        """POST and read an SSE answer to its end: status, events, and any non-SSE body."""
        own = client is None
        client = client or self.client()
        try:
            events: list[SSE] = []
            with client.stream("POST", path, json=body, headers=headers) as response:
                if response.status_code != 200:
                    return response.status_code, events, response.read().decode(errors="replace")
                buffer = ""
                for text in response.iter_text():
                    buffer += text
                    while "\n\n" in buffer:
                        block, buffer = buffer.split("\n\n", 1)
                        event = parse_sse_block(block)
                        if event is None:
                            continue
                        events.append(event)
                        if until is not None and until(event):
                            return 200, events, ""
                return 200, events, buffer
        finally:
            if own:
                client.close()


def children_of(roots: list[int]) -> list[int]:
    """Every live process under ``roots`` (read from /proc), the roots included."""
    parent: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            parent[int(stat.parent.name)] = int(fields[1])
    found = [pid for pid in roots if pid in parent]
    queue = list(found)
    while queue:
        pid = queue.pop()
        for child, ppid in parent.items():
            if ppid == pid and child not in found:
                found.append(child)
                queue.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "zombie" not in status


def runtime_pid(hub: Hub, user: HubUser) -> int:
    """The pid of the user's agent-httpd, from /resolve/api/health (remembered for teardown)."""
    answer = health(hub, user)
    assert answer.status_code == 200, answer.text
    pid = int(answer.json()["runtime"]["pid"])
    if pid not in hub.server_pids:
        hub.server_pids.append(pid)
    return pid


def wait_until_ready(hub: Hub, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(httpx.HTTPError):
            if hub.api("GET", "/").status_code == 200:
                return
        assert hub.proc.poll() is None, f"the hub exited:\n{hub.log()}"
        assert time.monotonic() < deadline, f"the hub never answered:\n{hub.log()}"
        time.sleep(0.3)


@contextlib.contextmanager
def running_hub(
    workdir: Path,
    proxy: str,
    setup: HubSetup | None = None,
    ports: tuple[int, int, int] | None = None,
) -> Iterator[Hub]:
    """Start a hub in ``workdir``; on exit stop it and everything it started."""
    token = secrets.token_hex(32)
    ports = ports or (free_port(), free_port(), free_port())
    (workdir / "home").mkdir(parents=True)
    config = workdir / "jupyterhub_config.py"
    config.write_text(hub_config(workdir, proxy, token=token, ports=ports, setup=setup))
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("JUPYTER_RESOLVE_", "JUPYTERHUB_", "JPY_"))
    }
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    env["CONFIGPROXY_AUTH_TOKEN"] = secrets.token_hex(32)
    env.update(setup.env if setup else {})
    log = open(workdir / "hub.log", "wb")  # closed in the finally below
    proc = start_process(  # its own session, as the launcher's servers
        [str(VENV_BIN / "jupyterhub"), "-f", str(config)],
        cwd=workdir,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    hub = Hub(f"http://127.0.0.1:{ports[0]}", token, workdir, proc)
    try:
        wait_until_ready(hub)
        yield hub
    finally:
        stop(hub)
        log.close()


def stop(hub: Hub) -> None:
    """SIGTERM the hub (it stops the user servers and the proxy), then kill any straggler."""
    pids = children_of([hub.proc.pid, *hub.server_pids])
    with contextlib.suppress(ProcessLookupError):
        hub.proc.send_signal(signal.SIGTERM)
    try:
        hub.proc.wait(45)
    except subprocess.TimeoutExpired:
        hub.proc.kill()
        hub.proc.wait(10)
    deadline = time.monotonic() + 5
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    for pid in pids:
        if alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    proxy_pid = hub.workdir / "jupyterhub-proxy.pid"
    with contextlib.suppress(OSError, ValueError, ProcessLookupError):
        pid = int(proxy_pid.read_text().strip())
        if alive(pid) and "configurable-http-proxy" in Path(f"/proc/{pid}/cmdline").read_text():
            os.kill(pid, signal.SIGKILL)


def login(hub: Hub, name: str) -> httpx.Client:
    """A cookie-holding client, logged in through the hub's form and the OAuth redirects."""
    client = hub.client(follow_redirects=True)
    page = client.get("/hub/login")
    assert page.status_code == 200, page.text
    found = re.search(r'name="_xsrf"\s+value="([^"]+)"', page.text)
    form = {"username": name, "password": PASSWORD}
    if found:
        form["_xsrf"] = found.group(1)
    # Then through the OAuth redirects to a page of the user's server, which sets its cookies
    # (the login cookie and `_xsrf`, both on /user/<name>/), as a browser's navigation would.
    landed = client.post(
        "/hub/login",
        params={"next": f"/user/{name}/lab"},
        data=form,
        headers={"Sec-Fetch-Mode": "navigate"},
    )
    assert landed.status_code == 200, (landed.status_code, landed.url, landed.text[:500])
    assert landed.url.path.startswith(f"/user/{name}/"), landed.url
    return client


def cookie(client: httpx.Client, name: str, path: str) -> str | None:
    for item in client.cookies.jar:
        if item.name == name and item.path.rstrip("/") == path.rstrip("/"):
            return item.value
    return None


def health(hub: Hub, user: HubUser, *, token: str | None = None) -> httpx.Response:
    with hub.client() as client:
        headers = {"Authorization": f"token {token or user.token}"}
        return client.get(f"{user.prefix}resolve/api/health", headers=headers)


def dumps(events: list[SSE]) -> str:
    return "\n".join(f"{e.event} {json.dumps(e.data)[:300]}" for e in events)
