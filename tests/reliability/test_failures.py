"""Failures made boring: a full disk under the run log, a client that goes away, an explicit
cancel that must stop the tools it started (issue 10, part)."""

from __future__ import annotations

import asyncio
import errno
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SSE, Server
from tests.scripting import call, script


async def test_full_disk_under_the_run_log_is_a_clear_error_and_no_torn_line(
    server: Server,
    gateway: Any,
    tmp_path: Path,
    jp_root_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import jupyter_resolve.runs.log as run_log

    real_write = os.write
    writes = {"n": 0}

    def filling_disk(fd: int, data: bytes) -> int:
        # os is one module: only the run log's writes fill the disk (the supervisor writes
        # the runtime's token to a pipe with the same os.write)
        if not os.readlink(f"/proc/self/fd/{fd}").endswith(".jsonl"):
            return real_write(fd, data)
        writes["n"] += 1
        if writes["n"] <= 1:  # run.started; the next write (a batch of events) fills it
            return real_write(fd, data)
        real_write(fd, data[: len(data) // 2])  # half a line reaches the disk, then it is full
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(run_log.os, "write", filling_disk)
    stream = await server.chat("a long enough answer", session_id="s-disk")
    monkeypatch.setattr(run_log.os, "write", real_write)
    errors = stream.of("run.error")
    assert errors and errors[0]["code"] == "run_log_unwritable"
    assert "No space left on device" in errors[0]["message"]
    assert stream.types()[-1] == "run.completed"  # the run still ended for its client
    run_id = stream.events[0].data["run_id"]
    lines = (jp_root_dir / ".resolve" / "runs" / f"{run_id}.jsonl").read_bytes().splitlines()
    assert [json.loads(line)["seq"] for line in lines] == [1]  # whole lines only


async def test_client_that_goes_away_leaves_a_whole_run(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    script(
        gateway,
        tmp_path,
        call("python", code="import time; time.sleep(1); 6 * 7"),
        {"content": "forty-two"},
    )

    def first(e: SSE) -> bool:
        return e.event == "tool.requested"

    gone = await server.chat("x", session_id="s-gone", until=first)
    run = gateway.runs.get(gone.events[0].data["run_id"])
    await asyncio.wait_for(run.task, 60)
    assert run.reason == "stop" and run.text() == "forty-two"
    lines = (jp_root_dir / ".resolve" / "runs" / f"{run.run_id}.jsonl").read_text().splitlines()
    assert [json.loads(x)["seq"] for x in lines] == list(range(1, len(run.events) + 1))


def running(argv: bytes) -> list[int]:
    """Live processes (seen from here) whose command line is ``argv``: the scratch kernel may
    run in its own PID namespace, where the pids it reports mean nothing out here."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "cmdline").read_bytes() == argv:
                if "zombie" not in (entry / "status").read_text():
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


async def test_cancel_stops_the_tools_and_the_shell_process_tree(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    gateway.config.approval_policy = {"shell": "auto"}
    pids = jp_root_dir / ".resolve" / "sessions" / "s-cancel" / "work" / "pids.txt"
    seconds = f"300.{os.getpid()}{id(pids) % 1000:03d}"  # no other test's sleep has it
    argv = f"sleep\0{seconds}\0".encode()
    command = f"sleep {seconds} & echo $! > pids.txt; echo $$ >> pids.txt; sleep {seconds}"
    script(gateway, tmp_path, call("shell", command=command), {"content": "never"})

    async def cancel_when_running() -> None:
        while not pids.exists() or len(pids.read_text().split()) < 2:
            await asyncio.sleep(0.05)
        assert len(running(argv)) == 2  # both sleeps, as seen from here
        run_id = next(r.run_id for r in gateway.runs.runs.values() if r.session_id == "s-cancel")
        assert (await server.post(f"/resolve/api/runs/{run_id}/cancel", {})).status_code == 200

    canceller = asyncio.create_task(cancel_when_running())
    stream = await server.chat("run forever", session_id="s-cancel")
    await canceller
    assert stream.of("run.completed")[0]["reason"] == "cancelled"
    for _ in range(100):
        if not running(argv):
            break
        await asyncio.sleep(0.1)
    assert not running(argv), "the shell's processes outlived the cancel"
