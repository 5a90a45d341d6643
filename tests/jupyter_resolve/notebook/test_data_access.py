"""A notebook chat's python reaches the person's data (issue 30.3, DESIGN 5): it reads the files
beside the notebook by the notebook's relative paths, read-only, writes only to its work/, sees
neither hidden folders nor the gateway's state, and has the mentioned variables by name. With
the sandbox (bubblewrap) and without it (the kernel's audit hook alone)."""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_resolve.providers import OpenAIProvider
from tests.conftest import Server, Stream
from tests.fakes.openai_server import FakeOpenAI, text_reply
from tests.jupyter_resolve.notebook.live import open_kernel, run_in_kernel
from tests.scripting import call, script

pytestmark = pytest.mark.timeout(240)

CSV = "when,value\n2026-01-01,3.5\n2026-01-02,4.25\n"


def sandboxes() -> list[Any]:
    from jupyter_resolve.scratch.sandbox import bwrap_available

    skip = pytest.mark.skipif(not bwrap_available(), reason="bubblewrap cannot run here")
    return ["", pytest.param("bwrap", marks=skip)]


def notebook_beside_data(root: Path) -> str:
    """``sub/analysis.ipynb`` beside ``sub/measurements.csv``; its path."""
    (root / "sub").mkdir(exist_ok=True)
    (root / "sub" / "measurements.csv").write_text(CSV)
    cell: dict[str, Any] = {"cell_type": "code", "id": "c1", "metadata": {}, "source": ""}
    cell.update(outputs=[], execution_count=None)
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (root / "sub" / "analysis.ipynb").write_text(json.dumps(notebook))
    return "sub/analysis.ipynb"


def outputs(stream: Stream) -> list[str]:
    return [str(r["output"]) for r in stream.of("tool.completed")]


def work_of(root: Path, session: str) -> Path:
    return root / ".resolve" / "sessions" / session / "work"


@pytest.mark.parametrize("sandbox", sandboxes())
async def test_python_reads_beside_the_notebook_and_writes_only_to_work(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path, sandbox: str
) -> None:
    gateway.kernels.sandbox = sandbox
    notebook = notebook_beside_data(jp_root_dir)
    session = f"s-data{sandbox}"
    work = work_of(jp_root_dir, session)
    code = (
        "print(open('measurements.csv').read())\n"
        "import pandas as pd\n"
        "print('rows', len(pd.read_csv('measurements.csv')))\n"
        f"open({str(work / 'made.txt')!r}, 'w').write('mine')\n"
        "print('wrote work')\n"
    )
    refused = "open('new.txt', 'w').write('x')"
    script(
        gateway,
        tmp_path,
        call("python", code=code),
        call("python", code=refused),
        {"content": "done"},
    )
    stream = await server.chat("read my data", session_id=session, notebook=notebook)
    read, write = outputs(stream)
    assert CSV in read and "rows 2" in read and "wrote work" in read
    assert (work / "made.txt").read_text() == "mine"
    assert "read-only" in write and str(work) in write  # says where to write instead
    assert not (jp_root_dir / "sub" / "new.txt").exists()
    assert [r["ok"] for r in stream.of("tool.completed")] == [True, False]


@pytest.mark.parametrize("sandbox", sandboxes())
async def test_hidden_folders_and_other_sessions_are_not_readable(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path, sandbox: str
) -> None:
    gateway.kernels.sandbox = sandbox
    notebook = notebook_beside_data(jp_root_dir)
    (jp_root_dir / ".secrets").mkdir()
    (jp_root_dir / ".secrets" / "key.txt").write_text("hidden secret")
    other = work_of(jp_root_dir, "s-someone-else")
    other.mkdir(parents=True)
    (other / "private.txt").write_text("another session")
    paths = ("../.secrets/key.txt", str(jp_root_dir / ".secrets" / "key.txt"), str(other))
    code = (
        "import os\n"
        f"for path in {paths!r}:\n"
        "    try:\n"
        "        print(path, open(path).read() if '.txt' in path else os.listdir(path))\n"
        "    except OSError as exc:\n"
        "        print(path, 'refused', type(exc).__name__)\n"
    )
    script(gateway, tmp_path, call("python", code=code), {"content": "done"})
    stream = await server.chat("peek", session_id=f"s-peek{sandbox}", notebook=notebook)
    (output,) = outputs(stream)
    assert "hidden secret" not in output and "private.txt" not in output
    assert output.count("refused") == 3


async def test_a_chat_without_a_notebook_still_runs_in_work(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path
) -> None:
    notebook_beside_data(jp_root_dir)
    session = "s-plain"
    code = "import os\nprint(os.getcwd())\n_ = open('here.txt', 'w').write('ok')"
    script(gateway, tmp_path, call("python", code=code), {"content": "done"})
    stream = await server.chat("plain", session_id=session)
    (output,) = outputs(stream)
    work = work_of(jp_root_dir, session)
    assert output.strip() == str(work.resolve())
    assert (work / "here.txt").read_text() == "ok"
    # the same session, now about the notebook, and back: the kernel follows each run
    script(gateway, tmp_path, call("python", code="print(os.getcwd())"), {"content": "ok"})
    bound = await server.chat("about it", session_id=session, notebook="sub/analysis.ipynb")
    assert outputs(bound)[0].strip() == str((jp_root_dir / "sub").resolve())
    script(gateway, tmp_path, call("python", code=code), {"content": "ok"})
    again = await server.chat("plain again", session_id=session)
    assert outputs(again)[0].strip() == str(work.resolve())


async def test_mentioned_variables_are_in_the_namespace_by_name(
    server: Server, gateway: Any, tmp_path: Path, jp_root_dir: Path, jp_serverapp: Any
) -> None:
    notebook = notebook_beside_data(jp_root_dir)
    kernel_id = await open_kernel(server, notebook)
    await run_in_kernel(
        jp_serverapp,
        kernel_id,
        "import pandas as pd\ndf = pd.read_csv('measurements.csv')\nlimit = 7",
    )
    code = "print(type(df).__name__, df['value'].sum(), limit)"
    script(gateway, tmp_path, call("python", code=code), {"content": "done"})
    stream = await server.chat(
        "@df and @limit",
        session_id="s-mention",
        notebook=notebook,
        mentions=[{"name": "df"}, {"name": "limit"}],
    )
    (output,) = outputs(stream)
    assert output.strip() == "DataFrame 7.75 7"


@pytest.fixture
def recording(gateway: Any, jp_asyncio_loop: Any) -> Iterator[list[FakeOpenAI]]:
    holder: list[FakeOpenAI] = []
    yield holder
    for fake in holder:
        jp_asyncio_loop.run_until_complete(fake.stop())


async def test_the_discipline_tells_where_to_read_and_write(
    server: Server, gateway: Any, jp_root_dir: Path, recording: list[FakeOpenAI]
) -> None:
    fake = FakeOpenAI([text_reply("ok"), text_reply("ok")])
    await fake.start()
    recording.append(fake)
    gateway.provider = OpenAIProvider(fake.base_url, "sk-test", "fake-model", max_retries=0)
    notebook = notebook_beside_data(jp_root_dir)
    await server.chat("hi", session_id="s-told", notebook=notebook)
    system = fake.requests[0].body["messages"][0]["content"]
    discipline = system[system.index("Tool discipline") :]
    assert "sub/analysis.ipynb" in discipline and "relative paths" in discipline
    assert f"{work_of(jp_root_dir, 's-told')}/" in discipline and "read-only" in discipline
    await server.chat("hi", session_id="s-untold")
    plain = fake.requests[1].body["messages"][0]["content"]
    assert "read-only to you" not in plain


def test_the_sandbox_hides_the_roots_dot_entries_but_not_pythons(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hidden folders at the top of the server root get an empty mount, hidden files /dev/null;
    a hidden folder Python imports from (a ``.venv`` in the root) stays."""
    from jupyter_resolve.scratch.sandbox import bwrap_prefix

    root = tmp_path / "root"
    session = root / ".resolve" / "sessions" / "s1"
    for folder in (root / ".git", root / ".venv" / "lib", session / "work", session / "context"):
        folder.mkdir(parents=True)
    (root / ".env").write_text("TOKEN=x")
    (root / "data.csv").write_text("a\n")
    monkeypatch.setattr("sys.path", [*sys.path, str(root / ".venv" / "lib")])
    argv = bwrap_prefix(session, root, False, state_dir=root / ".resolve", reads_root=True)
    pairs = list(itertools.pairwise(argv))
    assert ("--tmpfs", str(root / ".git")) in pairs
    assert ("/dev/null", str(root / ".env")) in pairs
    assert ("--tmpfs", str(root / ".venv")) not in pairs
    assert not any(str(root / "data.csv") in arg for arg in argv)


def test_the_notebook_discipline_names_the_folder_and_the_work_path() -> None:
    from jupyter_resolve.contracts.discipline import notebook_discipline

    text = notebook_discipline("sub/a.ipynb", "/s/work", ["df"], file_tools=True)
    assert "(sub)" in text and "/s/work/" in text and "read-only" in text
    assert "(df) are already defined" in text and "file tools" in text
    assert notebook_discipline("a.ipynb", "/s/work").count("\n- ") == 1


@pytest.mark.parametrize("contents_read", [True, False])
def test_python_reads_beside_the_notebook_only_with_contents_read(
    tmp_path: Path, contents_read: bool
) -> None:
    """The folder is bound only for a run whose caller may read the server's files (an edge
    that asked the Authorizer and was told no keeps its python in work/)."""
    from jupyter_resolve.notebook.binding import notebook_folder
    from jupyter_resolve.runs.run import Run

    notebook = notebook_beside_data(tmp_path)
    run = Run(run_id="run-1", session_id="s-1", soul=None, model="m", budget=1, log=None)
    permissions = {"contents_read": contents_read, "contents_write": False}
    run.emit("run.started", {"permissions": {**permissions, "kernels_execute": False}})
    run.notebook = notebook
    expected = str((tmp_path / "sub").resolve()) if contents_read else None
    assert notebook_folder(tmp_path, run) == expected
    run.notebook = None
    assert notebook_folder(tmp_path, run) is None
