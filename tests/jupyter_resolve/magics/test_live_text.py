"""Issue 30 point 1: ``%resolve`` shows its answer while it streams. A notebook cell runs headless
with nbclient against a real server whose provider (the fake OpenAI server) writes a piece of
reasoning, then of text, every 15 ms; the widget states the kernel sends, in the order it sends
them, must hold partial reasoning and partial answers before the whole ones (an order of states,
never a stopwatch), and a growing part is resent at most ~10 times a second, not per piece."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from tests.fakes._server import Part, Request
from tests.fakes.openai_server import DONE, chunk, sse, stream, text_reply, usage
from tests.jupyter_resolve.magics.server import RunningServer, running_server
from tests.jupyter_resolve.magics.test_magics_session import FakeInThread

pytestmark = pytest.mark.timeout(300)
KEY_ENV = "RESOLVE_TEST_STEADY_KEY"
PACE = 0.015  # seconds between the provider's pieces
PIECES = 120
ANSWER = "".join(f"tok{i} " for i in range(PIECES))
REASONING = "".join(f"why{i} " for i in range(PIECES))


def steady_reply() -> Any:
    """Reasoning, then the answer, a piece every PACE seconds."""
    pieces = [chunk({"reasoning": f"why{i} "}) for i in range(PIECES)]
    pieces += [chunk({"content": f"tok{i} "}) for i in range(PIECES)]
    frames: list[bytes | Part] = [sse(chunk({"role": "assistant", "content": ""}))]
    frames += [Part(sse(piece), delay=PACE) for piece in pieces]
    return stream([*frames, sse(chunk({}, "stop")), sse(usage()), DONE])


BURST = "".join(f"b{i} " for i in range(20))


def burst_then_quiet_reply() -> Any:
    """A burst of text (a piece every PACE seconds), then nothing for 1.5 s (as while a model
    writes a long tool call), then the rest."""
    frames: list[bytes | Part] = [sse(chunk({"role": "assistant", "content": ""}))]
    frames += [Part(sse(chunk({"content": f"b{i} "})), delay=PACE) for i in range(20)]
    frames += [Part(sse(chunk({"content": "after the quiet"})), delay=1.5)]
    return stream([*frames, sse(chunk({}, "stop")), sse(usage()), DONE])


SEPARATED = "one\u2028two\u2029three\x85four"


def reply_to(request: Request) -> Any:
    asked = str(request.body["messages"][-1]["content"])
    if "separators" in asked:
        return text_reply(SEPARATED)
    return burst_then_quiet_reply() if "burst" in asked else steady_reply()


class RecordingClient(NotebookClient):  # type: ignore[misc]
    """nbclient, keeping every widget state update in the order the kernel sent it."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.updates: list[dict[str, Any]] = []

    def handle_comm_msg(self, outs: list[Any], msg: dict[str, Any], cell_index: int) -> None:
        state = msg["content"].get("data", {}).get("state")
        if isinstance(state, dict):
            self.updates.append(state)
        super().handle_comm_msg(outs, msg, cell_index)


@pytest.fixture(scope="module")
def steady(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with FakeInThread([steady_reply()], reply_to=reply_to) as fake:
        os.environ[KEY_ENV] = "sk-test"
        args = (
            "--Resolve.provider=openai",
            f"--Resolve.base_url={fake.base_url}",
            "--Resolve.model=fake-model",
            f"--Resolve.api_key_env={KEY_ENV}",
        )
        try:
            with running_server(tmp_path_factory.mktemp("steady"), *args) as server:
                yield server
        finally:
            os.environ.pop(KEY_ENV, None)


def run(server: RunningServer, *sources: str) -> tuple[Any, RecordingClient]:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    client = RecordingClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(server.root)}},
    )
    client.execute(env=server.kernel_env())
    return notebook, client


def shown(updates: list[dict[str, Any]], prefix: str) -> list[str]:
    """What the widgets showed that starts with ``prefix``, in the order it was sent: the
    answer's Output widget (its text/plain) and the reasoning's HTML (its text, unwrapped)."""
    texts = []
    for state in updates:
        for output in state.get("outputs") or []:
            texts.append(str(output.get("data", {}).get("text/plain", "")))
        value = state.get("value")
        if isinstance(value, str) and value.startswith("<pre"):
            texts.append(value[value.index(">") + 1 : value.rindex("</pre>")])
    return [text for text in texts if text.startswith(prefix)]


def grew_in_view(texts: list[str], whole: str) -> list[str]:
    """The partial states before the whole one; they must grow, the whole must come last."""
    assert texts and texts[-1] == whole, texts[-3:]
    partial = [t for t in texts[:-1] if len(t) < len(whole) and whole.startswith(t)]
    assert all(len(a) < len(b) for a, b in pairwise(partial)), partial
    return partial


def test_resolve_shows_reasoning_and_text_while_they_stream(steady: RunningServer) -> None:
    count = 'print("EVENTS", sum(e["type"] == "reasoning.delta" for e in _resolve.events))'
    notebook, client = run(steady, "%load_ext jupyter_resolve", "%resolve count for me", count)
    reasoning = grew_in_view(shown(client.updates, "why0"), REASONING)
    answer = grew_in_view(shown(client.updates, "tok0"), ANSWER)
    # several partial states of each: they grew in view while the run went on
    assert len(reasoning) >= 3 and len(answer) >= 3, (reasoning, answer)
    # throttled, not sent per piece: each state resends the whole text so far
    events = int(notebook.cells[2].outputs[0]["text"].split()[1])
    assert len(reasoning) < events / 2, (len(reasoning), events)


def test_what_the_throttle_held_back_shows_in_a_quiet_spell(steady: RunningServer) -> None:
    """The end of a burst shows while the run is quiet, not only when the next piece comes."""
    _, client = run(steady, "%load_ext jupyter_resolve", "%resolve a burst, please")
    texts = shown(client.updates, "b0")
    assert texts[-1] == BURST + "after the quiet", texts
    assert BURST in texts, texts  # the whole burst, alone: shown before the quiet ended


def test_terminal_ipython_prints_the_answer_while_it_streams(
    steady: RunningServer, tmp_path: Path
) -> None:
    """Where widgets cannot render, the answer is printed piece by piece: the first piece is
    on the terminal while the run has not ended on the server (its log has no run.completed)."""
    runs = steady.root / ".resolve" / "runs"
    before = set(runs.glob("*.jsonl")) if runs.exists() else set()
    script = tmp_path / "ask.ipy"
    script.write_text("%load_ext jupyter_resolve\n%resolve count for me\n")
    env = {**steady.kernel_env(), "IPYTHONDIR": str(tmp_path / "ipython")}
    command = [sys.executable, "-m", "IPython", "--no-banner", "--colors=nocolor", str(script)]
    proc = subprocess.Popen(command, env=env, cwd=tmp_path, stdout=subprocess.PIPE)
    assert proc.stdout is not None
    printed, ended_when_first_seen = b"", None
    try:
        while piece := os.read(proc.stdout.fileno(), 65536):
            printed += piece
            if ended_when_first_seen is None and b"tok0 " in printed:
                logs = set(runs.glob("*.jsonl")) - before
                assert len(logs) == 1, logs
                ended_when_first_seen = "run.completed" in logs.pop().read_text()
    finally:
        proc.stdout.close()
        assert proc.wait(60) == 0, printed.decode()
    assert ANSWER.strip() in printed.decode()
    assert ended_when_first_seen is False, printed.decode()


def test_text_with_unicode_line_separators_arrives_whole(steady: RunningServer) -> None:
    """U+2028, U+2029 and NEL stay raw in the gateway's JSON; a reader that ended lines at
    them (as text line readers do) cut the event in two and the magic failed on its JSON."""
    show = "print('TEXT', ascii(_resolve.text))"
    notebook, _ = run(steady, "%load_ext jupyter_resolve", "%resolve line separators?", show)
    printed = "".join(str(o.get("text", "")) for o in notebook.cells[2].outputs)
    assert f"TEXT {SEPARATED!a}" in printed, notebook.cells[1].outputs
