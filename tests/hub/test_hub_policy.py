"""Admin locks and audit events behind a real JupyterHub (issue 37.3, 37.4): the spawner's
environment names the policy file (``JUPYTER_RESOLVE_POLICY``); alice's own ``~/.jupyter``
config sets other values; the policy's win, show in health's ``locked``, and the peer endpoint
it switched off answers 403 through the hub's proxy. Audit events reach the handler her
server's config sets, without the prompt's text. Uses tests/hub/hub.py's helpers as they are."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hub.hub import Hub, HubSetup, dumps, find_proxy, health, running_hub

PROXY = find_proxy()
pytestmark = [
    pytest.mark.skipif(PROXY is None, reason="configurable-http-proxy is not installed"),
    pytest.mark.timeout(240),
]
PROMPT = "HUB-AUDIT-CANARY-91c2: say hello"
POLICY = {
    "settings": {"max_rounds": 3, "allowed_models": ["scripted"]},
    "features": {"peer": False, "remote_images": False},
}
USER_CONFIG = {
    "Resolve": {
        "max_rounds": 20,
        "allow_remote_images": True,
        "peer_secrets": {"alpha": "alice-own-peer-secret-0123456789"},
    }
}


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    assert PROXY is not None
    workdir = tmp_path_factory.mktemp("hub-policy")
    policy = workdir / "policy.json"  # outside the user's home, as an image or mount has it
    policy.write_text(json.dumps(POLICY))
    setup = HubSetup(settings={"Spawner.environment": {"JUPYTER_RESOLVE_POLICY": str(policy)}})
    with running_hub(workdir, PROXY, setup) as running:
        own = workdir / "home" / "alice" / ".jupyter"  # alice's own config, before her spawn
        own.mkdir(parents=True)
        (own / "jupyter_server_config.json").write_text(json.dumps(USER_CONFIG))
        (own / "jupyter_server_config.py").write_text(
            "import logging\n"
            f"c.EventLogger.handlers = [logging.FileHandler({str(audit_file(running))!r})]\n"
        )
        running.spawn(("alice",))
        yield running


def audit_file(hub: Hub) -> Path:
    return hub.workdir / "alice-audit.log"


def test_the_policy_wins_over_the_users_own_config(hub: Hub) -> None:
    alice = hub.users["alice"]
    answer = health(hub, alice)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["locked"] == {
        "max_rounds": 3,
        "allowed_models": ["scripted"],
        "peer_secrets": {},
        "allow_remote_images": False,
    }
    assert body["allow_remote_images"] is False
    assert "alice-own-peer-secret" not in answer.text
    with hub.client() as client:
        card = client.get(f"{alice.prefix}resolve/.well-known/agent-card.json", headers=alice.auth)
    assert card.status_code == 403, card.text
    assert "set by the administrator" in card.json()["error"]["message"]


def test_audit_events_reach_the_handler_without_prompt_text(hub: Hub) -> None:
    alice = hub.users["alice"]
    body = {"messages": [{"role": "user", "content": PROMPT}]}
    status, events, rest = hub.stream(f"{alice.prefix}resolve/api/chat", body, headers=alice.auth)
    assert status == 200, rest
    assert events[-1].event == "run.completed", dumps(events) + rest
    assert events[0].data["budget"]["rounds"] == 3
    lines = [json.loads(line) for line in audit_file(hub).read_text().splitlines()]
    runs = [e for e in lines if e["__schema__"] == "https://jupyter-resolve.org/events/run"]
    assert [e["action"] for e in runs] == ["started", "ended"]
    assert all(e["user"] == "alice" for e in runs)
    assert "HUB-AUDIT-CANARY" not in audit_file(hub).read_text()
