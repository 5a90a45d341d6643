"""External agents switched off by the administrator's policy (issue 37.3 with issue 36), over a
real ``jupyter server`` with a policy file: the user's own ``acp_agents`` is locked to ``{}``,
``GET /resolve/api/agents`` lists none and says ``locked``, and a chat naming an agent answers
403 ``locked`` (set by the administrator), not "no such agent"."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.jupyter_resolve.acp.test_acp_runs import AGENTS
from tests.launcher import JupyterServer

USER_CONFIG = {
    "Resolve": {
        "acp_agents": {"bench": {"command": [sys.executable, str(AGENTS / "bench_agent.py")]}}
    }
}


def test_a_policy_that_switches_agents_off(tmp_path: Path) -> None:
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"features": {"acp_agents": False}}))
    env = {"JUPYTER_RESOLVE_POLICY": str(policy)}
    with JupyterServer(tmp_path / "srv", config=USER_CONFIG, env=env, ready="health") as server:
        assert server.http is not None
        health = server.health()
        assert health["locked"]["acp_agents"] == {} and health["agents"] == {}
        listed = server.http.get(f"{server.url}/resolve/api/agents")
        assert listed.status_code == 200
        assert listed.json() == {"agents": [], "locked": True, "refused": None}
        body = {"messages": [{"role": "user", "content": "stream"}], "agent": "bench"}
        answer = server.http.post(f"{server.url}/resolve/api/chat", json=body, timeout=60)
        assert answer.status_code == 403, answer.text
        error = answer.json()["error"]
        assert error["code"] == "locked"
        assert "external (ACP) agents" in error["message"]
        assert "set by the administrator" in error["message"]
        assert "no external agent named" not in error["message"]
