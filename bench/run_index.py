"""A year of runs (issue 33): listing runs beside 20,000 run logs, what a finished run leaves in
memory, and a session's turn beside 20,000 logs against the same turn beside none.

Two servers of their own, provider ``scripted`` (a one-line answer), side by side in one run:
one whose root holds 20,000 finished runs' logs (written straight to ``.resolve/runs/`` by
``tests/run_logs.py``; its index built by a first start, then the server restarted), one with no
logs. Figures:

- ``runs_list_first_ms_20k``: the first ``GET /resolve/api/runs`` after the restart (a page of
  50, newest first), after the server's very first request (``GET /resolve/api/souls``,
  ``server_first_request_ms``: any first request costs about 0.1 s more, with or without logs);
  ``runs_list_later_ms_20k``: the median of 20 more (the second page);
  ``runs_list_rss_kib_20k``: the gateway's VmRSS after the listings minus before them;
- ``runs_index_rebuild_s_20k``: on the first start, from ready to the index holding every log
  (it is rebuilt in the background; the listing says ``indexing`` until then);
- ``rss_per_finished_run_kib``: on the server with no logs, VmRSS after N chats (each a new
  session, run to its end) minus VmRSS before them (after 20 warm-ups), ÷ N;
- ``session_turn_ms_20k_logs`` / ``_0_logs``: a chat continuing a session of 3 earlier turns,
  to its ``run.completed``, median of 10, on each server; ``session_turn_extra_ms_20k`` is the
  difference.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, cast

import httpx

from tests.launcher import JupyterServer as Launched
from tests.run_logs import write_run_logs

from .core import BenchError, Context, Figure, Goal, median
from .proc import status_kib

if TYPE_CHECKING:
    from .servers import JupyterServer

LOGS = 20_000


class IndexServer(Launched):
    error = BenchError


def server(ctx: Context, name: str) -> JupyterServer:
    """A scripted server in ``ctx.tmp() / name`` (its ``root/`` kept between starts)."""
    # typed as the bench's server, which the context's spawn takes: both are the launcher's
    return cast("JupyterServer", _server(ctx, name))


def _server(ctx: Context, name: str) -> IndexServer:
    workdir = ctx.tmp() / name
    script = workdir / "script.jsonl"
    if not script.exists():
        workdir.mkdir(parents=True, exist_ok=True)
        script.write_text(json.dumps({"content": "ok"}) + "\n")
    config = {"Resolve": {"provider": "scripted", "script": str(script)}}
    return IndexServer(workdir, config=config, ready="runtime", start_timeout=120.0)


def spawn_servers(ctx: Context) -> None:
    """Write the 20,000 logs, then start both servers (the one beside the logs indexes them)."""
    write_run_logs(ctx.tmp() / "many" / "root" / ".resolve", LOGS, sessions=1000)
    ctx.spawn("index-many", lambda: server(ctx, "many"))
    ctx.spawn("index-none", lambda: server(ctx, "none"))


def _runs(srv: Launched, **params: str | int) -> dict[str, object]:
    assert srv.http is not None
    response = srv.http.get(f"{srv.url}/resolve/api/runs", params=params)
    if response.status_code != 200:
        raise BenchError(f"GET /resolve/api/runs: {response.status_code} {response.text[:200]}")
    body: dict[str, object] = response.json()
    return body


def _wait_indexed(srv: Launched, timeout: float = 300.0) -> float:
    started = time.perf_counter()
    while _runs(srv, limit=1)["indexing"]:
        if time.perf_counter() - started > timeout:
            raise BenchError(f"the run index was not rebuilt within {timeout:g} s")
        time.sleep(0.05)
    return time.perf_counter() - started


def _chat(srv: Launched, session_id: str | None) -> float:
    body: dict[str, object] = {"messages": [{"role": "user", "content": "and then?"}]}
    if session_id:
        body["session_id"] = session_id
    started = time.perf_counter()
    with httpx.stream(
        "POST", f"{srv.url}/resolve/api/chat", json=body, headers=srv.headers, timeout=60
    ) as reply:
        text = "".join(reply.iter_text())
    if "run.completed" not in text:
        raise BenchError(f"a chat did not complete: {text[-300:]}")
    return (time.perf_counter() - started) * 1e3


def _session_turns(srv: Launched, session_id: str) -> float:
    for _ in range(3):
        _chat(srv, session_id)
    return median([_chat(srv, session_id) for _ in range(10)])


def _listing(ctx: Context, srv: Launched) -> list[Figure]:
    assert srv.http is not None
    pid = srv.pid
    started = time.perf_counter()
    srv.http.get(f"{srv.url}/resolve/api/souls")  # a server's first request costs ~0.1 s more
    first_request_ms = (time.perf_counter() - started) * 1e3
    before = status_kib(pid)
    started = time.perf_counter()
    first = _runs(srv)
    first_ms = (time.perf_counter() - started) * 1e3
    later = []
    for _ in range(20):
        started = time.perf_counter()
        _runs(srv, before=str(first["next"]))
        later.append((time.perf_counter() - started) * 1e3)
    grown = status_kib(pid) - before
    ctx.log(f"run index: first listing {first_ms:.1f} ms, later {median(later):.1f} ms")
    return [
        Figure("runs_list_first_ms_20k", first_ms, "ms", Goal(150.0)),
        Figure("runs_list_later_ms_20k", median(later), "ms", Goal(50.0)),
        Figure("runs_list_rss_kib_20k", grown, "KiB", Goal(20 * 1024.0)),
        Figure("server_first_request_ms", first_request_ms, "ms"),
    ]


def _finished_runs(ctx: Context, srv: Launched) -> list[Figure]:
    count = ctx.repeats(300, 1000)
    for _ in range(20):
        _chat(srv, None)
    before = status_kib(srv.pid)
    for _ in range(count):
        _chat(srv, None)
    after = status_kib(srv.pid)
    per_run = (after - before) / count
    ctx.log(f"run index: {count} finished runs grew the gateway by {after - before:.0f} KiB")
    note = f"{count} chats, each a new session; (VmRSS after - before) / {count}"
    return [
        Figure("rss_per_finished_run_kib", per_run, "KiB", Goal(2.0), note=note),
        Figure("gateway_rss_before_finished_runs_kib", before, "KiB"),
    ]


def run_index(ctx: Context) -> list[Figure]:
    figures: list[Figure] = []
    many_dir = ctx.tmp() / "many"
    if not (many_dir / "root" / ".resolve" / "runs").is_dir():
        write_run_logs(many_dir / "root" / ".resolve", LOGS, sessions=1000)
    with ctx.spawned("index-many", lambda: server(ctx, "many")) as first_start:
        rebuild_s = _wait_indexed(first_start)
    figures.append(Figure("runs_index_rebuild_s_20k", rebuild_s, "s"))
    with server(ctx, "many") as many:  # restarted: the index is there
        figures += _listing(ctx, many)
        turn_many = _session_turns(many, "bench-session-many")
    with ctx.spawned("index-none", lambda: server(ctx, "none")) as none:
        turn_none = _session_turns(none, "bench-session-none")
        figures += _finished_runs(ctx, none)
    figures += [
        Figure("session_turn_ms_20k_logs", turn_many, "ms"),
        Figure("session_turn_ms_0_logs", turn_none, "ms"),
        Figure("session_turn_extra_ms_20k", turn_many - turn_none, "ms", Goal(10.0)),
    ]
    return figures
