"""``%resolve runs`` lists a page of the server's runs, newest first, and names the line that
shows the older ones (issue 33: a server keeps thousands of runs; the listing is paged). Real
server (scripted model), runs started over HTTP, terminal IPython reading the table."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from jupyter_resolve.magics.runs_list import PAGE
from tests.jupyter_resolve.magics.server import RunningServer, running_server

pytestmark = pytest.mark.timeout(300)
RUNS = PAGE + 3
OLDER = re.compile(r"Older runs: %resolve runs --before (\S+)")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with running_server(tmp_path_factory.mktemp("runs-paging")) as running:
        headers = {"Authorization": f"token {running.token}"}
        for i in range(RUNS):
            body = {"messages": [{"role": "user", "content": f"question {i:02d}"}]}
            answer = httpx.post(
                f"{running.url}resolve/api/chat",
                headers=headers,
                json=body,
                timeout=60,
                trust_env=False,
            )
            assert answer.status_code == 200 and "run.completed" in answer.text
        yield running


def ipython(server: RunningServer, tmp_path: Path, *lines: str, ok: bool = True) -> str:
    script = tmp_path / "runs.ipy"
    script.write_text("%load_ext jupyter_resolve\n" + "".join(f"{line}\n" for line in lines))
    done = subprocess.run(
        [sys.executable, "-m", "IPython", "--no-banner", "--colors=nocolor", str(script)],
        env={**server.kernel_env(), "IPYTHONDIR": str(tmp_path / "ipython")},
        capture_output=True,
        text=True,
        timeout=90,
        cwd=tmp_path,
    )
    assert (done.returncode == 0) is ok, done.stderr + done.stdout
    return done.stdout + done.stderr


def asked(printed: str) -> list[str]:
    return re.findall(r"\| (question \d\d) \|", printed)


def test_runs_shows_the_newest_page_and_how_to_see_older_ones(
    server: RunningServer, tmp_path: Path
) -> None:
    first = ipython(server, tmp_path, "%resolve runs")
    newest = [f"question {i:02d}" for i in reversed(range(RUNS))]
    assert asked(first) == newest[:PAGE], first
    cursor = OLDER.search(first)
    assert cursor, first
    rest = ipython(server, tmp_path, f"%resolve runs --before {cursor.group(1)}")
    assert asked(rest) == newest[PAGE:], rest
    assert "Older runs" not in rest, rest  # the last page says no more


def test_a_before_without_a_cursor_says_how(server: RunningServer, tmp_path: Path) -> None:
    printed = ipython(server, tmp_path, "%resolve runs --before", ok=False)
    assert "--before takes one cursor" in printed, printed
