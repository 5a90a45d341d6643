"""The administrator's policy over a real ``jupyter server`` (issue 37.3): the policy file's lock
wins over the user's own config (a config file in the server's JUPYTER_CONFIG_DIR), shows in
``/resolve/api/health`` ``locked`` without a secret, a switched-off feature's routes answer that
the administrator set it, and a policy file that cannot be used disables the extension with
the reason while the server goes on serving."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import parse_sse_block
from tests.launcher import JupyterServer

SECRET = "peer-shared-secret-0123456789"
USER_CONFIG = {
    "Resolve": {
        "max_rounds": 20,
        "allow_remote_images": True,
        "peer_secrets": {"alpha": SECRET},
        "allowed_models": [],
        "sandbox": "none",
    }
}
POLICY = {
    "settings": {"max_rounds": 3, "allowed_models": ["scripted"], "no_such_setting": 1},
    "features": {"peer": False, "remote_images": False, "require_sandbox": True},
}


def chat_events(server: JupyterServer, prompt: str) -> list[tuple[str, dict[str, Any]]]:
    assert server.http is not None
    body = {"messages": [{"role": "user", "content": prompt}]}
    response = server.http.post(f"{server.url}/resolve/api/chat", json=body, timeout=60)
    assert response.status_code == 200, response.text
    blocks = [parse_sse_block(b) for b in response.text.split("\n\n")]
    return [(e.event, e.data) for e in blocks if e is not None]


def test_the_policy_lock_wins_over_the_users_config(tmp_path: Path) -> None:
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps(POLICY))
    env = {"JUPYTER_RESOLVE_POLICY": str(policy)}
    with JupyterServer(tmp_path / "srv", config=USER_CONFIG, env=env, ready="health") as server:
        config_file = server.workdir / "config" / "jupyter_server_config.json"  # type: ignore[operator]
        assert json.loads(config_file.read_text())["Resolve"]["max_rounds"] == 20
        health = server.health()
        assert health["locked"] == {
            "max_rounds": 3,
            "allowed_models": ["scripted"],
            "peer_secrets": {},
            "allow_remote_images": False,
            "sandbox": "bwrap",
            "scratch_kernels": "local",
        }
        assert health["allow_remote_images"] is False
        assert any("settings.no_such_setting" in p for p in health["config_problems"])
        assert SECRET not in json.dumps(health)
        started = chat_events(server, "hello")[0]
        assert started[0] == "run.started" and started[1]["budget"]["rounds"] == 3

        assert server.http is not None
        for method, path in (
            ("GET", "/resolve/.well-known/agent-card.json"),
            ("POST", "/resolve/peer/invoke"),
            ("POST", "/resolve/peer/a2a"),
        ):
            answer = server.http.request(method, f"{server.url}{path}", content=b"{}")
            assert answer.status_code == 403, (path, answer.text)
            error = answer.json()["error"]
            assert error["code"] == "locked"
            assert "set by the administrator" in error["message"]
        assert "settings.no_such_setting is not a c.Resolve setting" in server.log_text()


def test_without_the_policy_the_users_config_applies(tmp_path: Path) -> None:
    """The same user config without a policy: the lock above is the policy's doing."""
    with JupyterServer(tmp_path / "srv", config=USER_CONFIG, ready="health") as server:
        health = server.health()
        assert health["locked"] == {} and health["allow_remote_images"] is True
        assert server.http is not None
        card = server.http.get(f"{server.url}/resolve/.well-known/agent-card.json")
        assert card.status_code == 200


def test_a_policy_file_that_cannot_be_used_disables_the_extension(tmp_path: Path) -> None:
    env = {"JUPYTER_RESOLVE_POLICY": str(tmp_path / "missing.json")}
    with JupyterServer(tmp_path / "srv", env=env, ready="listening") as server:
        assert server.http is not None
        health = server.http.get(f"{server.url}/resolve/api/health").json()
        assert health["ok"] is False
        assert "missing.json cannot be read" in health["disabled"]
        tools = server.http.get(f"{server.url}/resolve/api/tools")
        assert tools.status_code == 503
        assert server.http.get(f"{server.url}/api/status").status_code == 200


def test_a_user_python_config_that_renames_the_policy_is_not_followed(tmp_path: Path) -> None:
    """Issue 44.6: the user's Python config runs before the extension is imported; a line of it
    that points ``JUPYTER_RESOLVE_POLICY`` at a policy of the user's own (here: one locking
    nothing) leaves the administrator's locks in force, and the log says it was not followed."""
    policy, own = tmp_path / "policy.json", tmp_path / "mine.json"
    policy.write_text(json.dumps(POLICY))
    own.write_text(json.dumps({"settings": {}}))
    env = {"JUPYTER_RESOLVE_POLICY": str(policy)}
    server = JupyterServer(tmp_path / "srv", config=USER_CONFIG, env=env, ready="health")
    config_dir = tmp_path / "srv" / "config"
    config_dir.mkdir(parents=True)
    line = f"import os; os.environ['JUPYTER_RESOLVE_POLICY'] = {str(own)!r}\n"
    (config_dir / "jupyter_server_config.py").write_text(line)
    with server:
        health = server.health()
        assert health["locked"]["max_rounds"] == 3
        assert health["allow_remote_images"] is False
        assert "mine.json was set after the server started" in server.log_text()
