from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kernel_tools import bridge
from kernel_tools.result import RESULT_MIME


@pytest.fixture
def published(session: Path, server_root: Path) -> Iterator[list[dict[str, Any]]]:
    """Install the bridge for the test session; collect what ``call`` publishes."""
    seen: list[dict[str, Any]] = []
    cwd = os.getcwd()
    bridge.install(session_dir=str(session), server_root=str(server_root))
    original = bridge.publish
    bridge.publish = seen.append
    try:
        yield seen
    finally:
        bridge.publish = original
        bridge._workspace = None
        os.chdir(cwd)


def call(seen: list[dict[str, Any]], request: Any) -> dict[str, Any]:
    before = len(seen)
    text = request if isinstance(request, str) else json.dumps(request)
    bridge.call(text)
    assert len(seen) == before + 1
    result = seen[-1]
    assert set(result) == {"ok", "output", "mime"}
    return result


def test_install_changes_to_work(published: list[dict[str, Any]], work: Path) -> None:
    assert os.path.realpath(os.getcwd()) == os.path.realpath(work)


def test_install_refuses_a_missing_workspace(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="is not a directory"):
        bridge.install(session_dir=str(tmp_path / "none"), server_root=str(tmp_path))


def test_call_runs_tools(published: list[dict[str, Any]], work: Path) -> None:
    args = {"path": "n.txt", "content": "hello\n"}
    written = call(published, {"name": "write_file", "arguments": args, "timeout": 60})
    assert written == {"ok": True, "output": "wrote 6 bytes to n.txt", "mime": None}
    read = call(published, {"name": "read_file", "arguments": {"path": "n.txt"}})
    assert read["ok"] and read["output"] == "hello\n"
    listed = call(published, {"name": "list_dir", "arguments": {}})
    assert "n.txt  6 bytes" in listed["output"]
    ran = call(published, {"name": "shell", "arguments": {"command": "cat n.txt"}, "timeout": 5})
    assert ran["ok"] and ran["output"].startswith("hello\n[exit code 0]")


def test_call_timeout_bounds_shell(published: list[dict[str, Any]]) -> None:
    request = {"name": "shell", "arguments": {"command": "sleep 30", "timeout": 600}, "timeout": 1}
    result = call(published, request)
    assert not result["ok"] and "timed out after 1 s" in result["output"]


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        ("{nope", "bridge: the request is not valid JSON"),
        ("[1]", "bridge: the request must be an object"),
        ('{"arguments": {}}', "bridge: the request must be an object"),
        ({"name": "rm_rf", "arguments": {}}, "unknown tool 'rm_rf'; the kernel tools are: shell"),
        ({"name": "python", "arguments": {"code": "1"}}, "python: runs as a kernel cell"),
        ({"name": "web_fetch", "arguments": {"url": "x"}}, "web_fetch: is not a kernel tool"),
        (
            {"name": "read_file", "arguments": {}},
            "read_file: invalid arguments: 'path' is required",
        ),
        (
            {"name": "read_file", "arguments": {"path": "x", "mode": "rb"}},
            "read_file: invalid arguments: unknown property 'mode'",
        ),
        (
            {"name": "shell", "arguments": {"command": "x", "timeout": 601}},
            "shell: invalid arguments: 'timeout' must be at most 600",
        ),
        ({"name": "list_dir", "arguments": []}, "arguments must be of type object, not array"),
        ({"name": "list_dir", "arguments": {}, "timeout": "soon"}, "'timeout' must be a number"),
        (
            {"name": "read_file", "arguments": {"path": "missing.txt"}},
            "read_file: 'missing.txt' does not exist in the workspace (work/)",
        ),
    ],
)
def test_call_errors_are_results(
    published: list[dict[str, Any]], request_: Any, message: str
) -> None:
    result = call(published, request_)
    assert result["ok"] is False
    assert message in result["output"]


def test_call_before_install(server_root: Path) -> None:
    seen: list[dict[str, Any]] = []
    original, bridge.publish = bridge.publish, seen.append
    try:
        bridge.call(json.dumps({"name": "list_dir", "arguments": {}}))
    finally:
        bridge.publish = original
    assert seen == [{"ok": False, "output": seen[0]["output"], "mime": None}]
    assert "not installed" in seen[0]["output"]


def test_call_survives_a_crashing_tool(
    published: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from kernel_tools import registry

    def boom(*_: Any) -> Any:
        raise RuntimeError("kaput")

    monkeypatch.setitem(registry.REGISTRY, "list_dir", boom)
    result = call(published, {"name": "list_dir", "arguments": {}})
    assert result == {
        "ok": False,
        "output": "list_dir: failed unexpectedly: RuntimeError: kaput",
        "mime": None,
    }


def test_result_mime() -> None:
    assert RESULT_MIME == "application/vnd.resolve.result+json"


def test_call_prints_when_publishing_fails(
    published: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(_: dict[str, Any]) -> None:
        raise RuntimeError("no display")

    bridge.publish = broken
    bridge.call('{"name": "nope"}')
    printed = json.loads(capsys.readouterr().out)
    assert printed[RESULT_MIME]["ok"] is False
