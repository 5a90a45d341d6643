"""``%resolve --steer TEXT`` (issue 50.2): a cell of a notebook run headless with nbclient sends a
message to the session's live run, which reaches the model at its next step; the run's view
shows it where it took effect, and a session with no run working is told so. A real server
process whose provider is the fake OpenAI server recording what it receives."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import nbformat
import pytest

from jupyter_resolve.magics.line import parse_options
from jupyter_resolve.magics.run_markdown import to_markdown
from jupyter_resolve.magics.view_model import fold
from tests.fakes.openai_server import text_reply
from tests.jupyter_resolve.magics.server import RunningServer, running_server
from tests.jupyter_resolve.magics.test_magics_live import (
    collect,
    kernel,
    reply_to,
    scripted,
    texts,
    write_script,
)
from tests.jupyter_resolve.magics.test_magics_session import FakeInThread
from tests.jupyter_resolve.test_steering import SLOW_CODE, python_call

STEER = "not that column, use body_mass_g"
__all__ = ["scripted"]  # the fixture, used by name


def test_steer_is_a_flag_whose_text_is_the_rest_of_the_line() -> None:
    options, rest = parse_options(f"--session s-1 --steer {STEER}")
    assert options.steer and options.session == "s-1" and rest == STEER
    with pytest.raises(Exception, match="--steer TEXT goes to the run working now"):
        parse_options("--steer --new stop")


def test_the_view_shows_the_message_where_it_took_effect_and_what_was_not_delivered() -> None:
    def event(kind: str, **data: Any) -> dict[str, Any]:
        return {"type": kind, "data": {"run_id": "r", **data}}

    view = fold(
        [
            event("run.started", session_id="s", model="m", budget={"rounds": 8}),
            event("text.delta", text="Plotting."),
            event("run.message", id="msg-1", text=f"{STEER}\nplease"),
            event("text.delta", text="Using body_mass_g."),
            event("run.completed", reason="budget", rounds=2, undelivered_messages=["msg-2"]),
        ]
    )
    assert view.answer() == "Plotting.\n\nUsing body_mass_g."  # the message is not the answer
    shown = to_markdown(view)
    assert f"> **↪ you, at this step:**\n> {STEER}\n> please" in shown
    assert shown.index("Plotting.") < shown.index(STEER) < shown.index("Using body_mass_g.")
    assert view.errors == [
        "1 message(s) you sent did not reach the agent: the run ended (budget) before its next step"
    ]


@pytest.fixture
def steered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[RunningServer, Any]]:
    monkeypatch.setenv("RESOLVE_TEST_PROVIDER_KEY", "sk-test")
    with FakeInThread([python_call(SLOW_CODE), text_reply("Used body_mass_g.")]) as fake:
        args = (
            "--Resolve.provider=openai",
            f"--Resolve.base_url={fake.base_url}",
            "--Resolve.model=fake-model",
            "--Resolve.api_key_env=RESOLVE_TEST_PROVIDER_KEY",
            "--Resolve.provider_max_retries=0",
        )
        with running_server(tmp_path, *args) as server:
            yield server, fake


def start_slow_run(server: RunningServer, session: str) -> tuple[str, threading.Thread]:
    """A chat in ``session``, read on a thread until its call starts (then to its end)."""
    started = threading.Event()
    run_id: list[str] = []

    def read() -> None:
        body = {"messages": [{"role": "user", "content": "plot it"}], "session_id": session}
        headers = {"Authorization": f"token {server.token}"}
        with httpx.stream(
            "POST",
            server.url + "resolve/api/chat",
            json=body,
            headers=headers,
            timeout=120,
            trust_env=False,
        ) as response:
            for line in response.iter_lines():
                if line.startswith("data: ") and not run_id:
                    run_id.append(json.loads(line[6:])["run_id"])
                if line == "event: tool.started":
                    started.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert started.wait(60), "the call did not start"
    return run_id[0], reader


@pytest.mark.timeout(300)
def test_a_cell_steers_the_sessions_live_run(steered: tuple[RunningServer, Any]) -> None:
    server, fake = steered
    run_id, reader = start_slow_run(server, "s-magic-steer")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell("%load_ext jupyter_resolve"),
        nbformat.v4.new_code_cell(f"%resolve --session s-magic-steer --steer {STEER}"),
    ]
    server.execute(notebook)
    said = "".join(str(o.get("data", {}).get("text/plain", "")) for o in notebook.cells[1].outputs)
    assert f"Queued for {run_id}" in said, notebook.cells[1].outputs
    reader.join(60)
    assert fake.requests[1].body["messages"][-1] == {"role": "user", "content": STEER}
    assert [e["data"]["text"] for e in server.run_log(run_id) if e["type"] == "run.message"] == [
        STEER
    ]
    # the run has ended: nothing to steer now
    late = nbformat.v4.new_notebook()
    late.cells = [
        nbformat.v4.new_code_cell("%load_ext jupyter_resolve"),
        nbformat.v4.new_code_cell("%resolve --session s-magic-steer --steer and the median?"),
    ]
    with pytest.raises(Exception, match="has no run working now"):
        server.execute(late)


def comm_of(kc: Any, model: str, predicate: Any) -> str:
    """The comm id of the first widget of ``model`` whose state ``predicate`` accepts."""
    deadline = time.monotonic() + 60
    while True:
        assert time.monotonic() < deadline, f"no {model} appeared"
        msg = kc.get_iopub_msg(timeout=60)
        content = msg["content"]
        state = content.get("data", {}).get("state", {})
        if (
            msg["msg_type"] == "comm_open"
            and state.get("_model_name") == model
            and predicate(state)
        ):
            return str(content["comm_id"])


def test_the_live_views_box_steers_the_run_while_the_cell_runs(
    scripted: tuple[RunningServer, Path], tmp_path: Path
) -> None:
    """Typed into the steering box under a running ``%%resolve`` and sent with its button, a
    message reaches the run while the cell is still busy (the helper subshell)."""
    server, script = scripted
    sleep = {"name": "python", "arguments": {"code": "import time; time.sleep(4)"}}
    write_script(script, {"content": "", "tool_calls": [sleep]}, {"content": "done"})
    with kernel(server, tmp_path) as (_, kc):
        msg_id = kc.execute("%%resolve\nplot the penguins")
        steering = comm_of(kc, "TextModel", lambda s: str(s.get("placeholder")).startswith("Steer"))
        button = comm_of(kc, "ButtonModel", lambda s: s.get("description") == "Steer")
        time.sleep(1.0)  # a person types after the box shows (its routing is set just after)
        update = {"method": "update", "state": {"value": STEER}, "buffer_paths": []}
        kc.shell_channel.send(kc.session.msg("comm_msg", {"comm_id": steering, "data": update}))
        click = {"method": "custom", "content": {"event": "click"}}
        kc.shell_channel.send(kc.session.msg("comm_msg", {"comm_id": button, "data": click}))
        assert reply_to(kc, msg_id)["content"]["status"] == "ok"
        said = "[e['data']['text'] for e in _resolve.events if e['type'] == 'run.message']"
        status, messages = collect(kc, f"print('STEERED', {said})")
        assert status == "ok" and f"STEERED [{STEER!r}]" in texts(messages), texts(messages)
