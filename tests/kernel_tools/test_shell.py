from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from kernel_tools.paths import Workspace
from kernel_tools.result import OUTPUT_LIMIT
from kernel_tools.shell import effective_timeout, shell


def alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie waiting for a reaper."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_shell_runs_in_work_with_combined_output(ws: Workspace, work: Path) -> None:
    result = shell(ws, "pwd; echo out; echo err >&2; echo out2")
    assert result.ok
    lines = result.output.splitlines()
    assert lines[0] == os.path.realpath(work)
    assert lines[1:4] == ["out", "err", "out2"]
    assert re.fullmatch(r"\[exit code 0\] \(\d+\.\d\d s\)", lines[4])


def test_shell_reports_failure(ws: Workspace) -> None:
    result = shell(ws, "echo nope; exit 3")
    assert not result.ok
    assert result.output.startswith("nope\n[exit code 3]")
    assert shell(ws, "true").output.startswith("[exit code 0]")


def test_shell_timeout_kills_the_process_tree(ws: Workspace) -> None:
    command = "echo pgid=$$; sh -c 'sleep 300 & echo child=$!; sleep 300'"
    started = time.monotonic()
    result = shell(ws, command, timeout=1)
    assert time.monotonic() - started < 10
    assert not result.ok
    assert "timed out after 1 s" in result.output and "killed" in result.output
    pgid = int(re.search(r"pgid=(\d+)", result.output).group(1))  # type: ignore[union-attr]
    child = int(re.search(r"child=(\d+)", result.output).group(1))  # type: ignore[union-attr]
    deadline = time.monotonic() + 5
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child)
    assert not alive(pgid)
    survivors = os.popen(f"ps -o pid=,stat= -g {pgid} 2>/dev/null").read().split("\n")
    assert [line for line in survivors if line.strip() and "Z" not in line.split()[-1]] == []


def test_shell_background_holding_the_pipe_is_cleaned_up(ws: Workspace) -> None:
    result = shell(ws, "sleep 300 & echo started")
    assert result.ok
    assert "background processes still holding the output were killed" in result.output


def test_shell_background_with_redirected_output_keeps_running(ws: Workspace) -> None:
    result = shell(ws, "sleep 30 > /dev/null 2>&1 & echo $!")
    pid = int(result.output.split()[0])
    try:
        assert result.ok and "killed" not in result.output
        assert alive(pid)
    finally:
        os.kill(pid, 9)


def test_shell_truncates_output(ws: Workspace) -> None:
    result = shell(ws, "head -c 30000 /dev/zero | tr '\\0' x")
    assert "[output truncated: 20000 of 30000 characters shown]" in result.output


@pytest.mark.parametrize(
    ("requested", "call", "expected"),
    [(None, None, 60), (900, None, 600), (120, 30, 30), (5, 30, 5), (None, 0, 60)],
)
def test_effective_timeout(requested: float | None, call: float | None, expected: float) -> None:
    assert effective_timeout(requested, call) == expected


def test_shell_passes_its_output_on_as_it_comes(ws: Workspace) -> None:
    seen: list[str] = []
    result = shell(ws, "echo one; echo two >&2; printf 'caf\\303\\251'", live=seen.append)
    assert "".join(seen) == "one\ntwo\ncafé"
    assert result.output.startswith("one\ntwo\ncafé\n[exit code 0]")
    # Passed on up to the result's own bound, no further.
    seen.clear()
    shell(ws, "head -c 50000 /dev/zero | tr '\\0' x", live=seen.append)
    assert "".join(seen) == "x" * OUTPUT_LIMIT
