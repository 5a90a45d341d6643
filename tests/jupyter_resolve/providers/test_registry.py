"""Providers by registry (issue 45.2): the ``jupyter_resolve.providers`` entry-point group names
each provider's spec; the settings are checked against it; a provider another package installs
works with nothing else changed (a toy package, installed with pip into a folder of its own,
chatted with through a real server)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from traitlets import TraitError

from jupyter_resolve.config import Resolve
from jupyter_resolve.providers import AnthropicProvider, OpenAIProvider, ScriptedProvider
from jupyter_resolve.providers.registry import GROUP, installed, make_provider, spec_of
from tests.conftest import parse_sse_block
from tests.launcher import REPO, JupyterServer

TOY = REPO / "tests" / "fixtures" / "toy_provider"
PIP_INSTALL = [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps"]
PIP_INSTALL += ["--no-build-isolation"]  # offline: hatchling is the test extra's
BUILT_IN = ["scripted", "openai", "anthropic", "local", "hub"]


def test_the_built_in_providers_are_entries_of_the_group() -> None:
    assert set(BUILT_IN) <= set(installed())
    assert spec_of("openai").default_key_env == "OPENAI_API_KEY"
    assert spec_of("anthropic").default_base_url == "https://api.anthropic.com"
    # each one's settings are c.Resolve settings, declared by the provider
    assert {"local_context", "thinking", "script", "hub_service_url"} <= set(
        Resolve.class_traits(config=True)
    )


def test_a_provider_name_is_checked_against_the_registry() -> None:
    known = r"\('anthropic', 'hub', 'local', 'openai', 'scripted'"
    with pytest.raises(TraitError, match=r"must be an installed provider " + known):
        Resolve(provider="nope")
    assert Resolve(provider="local").context_tokens == 8192  # its spec's window
    assert Resolve(provider="openai").context_tokens == 0


def test_each_provider_is_built_from_the_settings(tmp_path: Path) -> None:
    script = str(tmp_path / "s.jsonl")
    scripted = make_provider(Resolve(provider="scripted", script=script))
    assert isinstance(scripted, ScriptedProvider) and scripted.script == Path(script)
    openai = make_provider(
        Resolve(provider="openai", base_url="http://127.0.0.1:9/v1", stream_usage=False)
    )
    assert isinstance(openai, OpenAIProvider) and openai.stream_usage is False
    assert openai.describe()["base_url"] == "http://127.0.0.1:9/v1"
    anthropic = make_provider(Resolve(provider="anthropic", provider_max_retries=1, thinking=2048))
    assert isinstance(anthropic, AnthropicProvider) and anthropic.max_retries == 1
    assert anthropic.describe()["base_url"] == "https://api.anthropic.com"
    assert anthropic.thinking == 2048
    local = make_provider(Resolve(provider="local", local_context=2048))
    assert local.describe()["local"]["context"] == 2048


@pytest.fixture(scope="module")
def toy_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The toy package, installed with pip (offline: no index, no build isolation)."""
    site = tmp_path_factory.mktemp("toy-site")
    done = subprocess.run(
        [*PIP_INSTALL, "--target", str(site), str(TOY)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PIP_NO_CACHE_DIR": "1"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    entry = next(site.glob("toy_provider-*.dist-info")) / "entry_points.txt"
    assert f"[{GROUP}]" in entry.read_text()
    return site


def test_a_provider_from_another_package_is_chatted_with(toy_site: Path, tmp_path: Path) -> None:
    paths = [str(toy_site), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {"PYTHONPATH": os.pathsep.join(paths)}
    argv = ["--Resolve.provider=toy", "--Resolve.toy_greeting=ahoy"]
    with JupyterServer(tmp_path, argv=argv, env=env, ready="runtime") as server:
        assert server.health()["provider"]["name"] == "toy"
        body = {"messages": [{"role": "user", "content": "hi there"}]}
        with httpx.Client(timeout=60, trust_env=False) as client:
            url = f"{server.url}/resolve/api/chat"
            answer = client.post(url, json=body, headers=server.headers)
    events = [e for e in map(parse_sse_block, answer.text.split("\n\n")) if e is not None]
    text = "".join(e.data["text"] for e in events if e.event == "text.delta")
    assert text == "ahoy: hi there"
    assert events[-1].event == "run.completed"
    started = next(e.data for e in events if e.event == "run.started")
    assert started["model"] == "toy-1"  # its default model


def test_without_the_package_the_name_is_refused_in_one_line(tmp_path: Path) -> None:
    argv = ["--Resolve.provider=toy"]
    with JupyterServer(tmp_path, argv=argv) as server:
        assert server.http is not None
        health = server.http.get(f"{server.url}/resolve/api/health").json()
    assert health["ok"] is False
    assert "must be an installed provider" in json.dumps(health["disabled"])
