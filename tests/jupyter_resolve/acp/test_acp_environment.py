"""An external agent starts with a trimmed environment (DESIGN 10.4, trust rules): the server's
Jupyter token, a provider key and a hub token in the server's environment never reach it; its
configured ``env`` does."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.conftest import Server
from tests.launcher import JupyterServer

AGENTS = Path(__file__).parent / "agents"
PROVIDER_KEY = "sk-canary-provider-5b2e91"
HUB_TOKEN = "hub-canary-token-0c7d44"


async def test_the_servers_secrets_stay_out_of_the_agents_environment(tmp_path: Path) -> None:
    agents = {
        "bench": {
            "command": [sys.executable, str(AGENTS / "bench_agent.py")],
            "env": {"BENCH_STATE": str(tmp_path / "agent-state"), "AGENT_OWN": "kept"},
        }
    }
    config = {"Resolve": {"acp_agents": agents, "acp_start_timeout": 8.0}}
    secrets = {"OPENAI_API_KEY": PROVIDER_KEY, "JUPYTERHUB_API_TOKEN": HUB_TOKEN}
    with JupyterServer(
        tmp_path, config=config, env=secrets, token_in_env=True, ready="health"
    ) as jupyter:
        server = Server(jupyter.url, jupyter.token)
        stream = await server.chat("env", agent="bench")
        assert stream.status == 200, stream.body
        told = "".join(e.data["text"] for e in stream.events if e.event == "text.delta")
    assert "AGENT_OWN=kept" in told and "PATH=" in told, told
    for secret in (PROVIDER_KEY, HUB_TOKEN, jupyter.token):
        assert secret not in told
    assert "JUPYTER_TOKEN" not in told
