"""What every metric shares: figures, goals, the run context and errors.

A metric is a function ``(Context) -> list[Figure]``; the registry lives in ``bench.metrics``.
The context starts the expensive things (the fake provider, the Jupyter server) lazily, once,
and closes them all when the run ends, whatever happens. Before the first metric that needs a
server, the run spawns every server the selected metrics will need, side by side
(:meth:`Context.spawn`); each metric then waits for its own (:meth:`Context.spawned`).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeVar

if TYPE_CHECKING:
    from .servers import FakeProvider, JupyterServer

T = TypeVar("T")
REPO = Path(__file__).resolve().parent.parent
# A comparison (bench/compare.py) runs each side's bench in a folder of its own whose
# jupyter_resolve, kernel_tools and native are that side's tree: the servers start there
# (cwd and PYTHONPATH), with that side's agent-httpd.
ROOT_ENV = "RESOLVE_BENCH_ROOT"
RUNTIME_ENV = "RESOLVE_BENCH_RUNTIME"


def product_root() -> Path:
    """Where the measured jupyter_resolve is imported from: this checkout, or a compared side."""
    return Path(os.environ.get(ROOT_ENV) or REPO)


class BenchError(Exception):
    """A metric could not be measured; the message says why (and what to look at)."""


class NotMeasured(BenchError):
    """A metric deliberately not measured in this run (a mode, a missing optional piece).

    Reported with its reason, like an error, but it does not make the run fail.
    """


@dataclass(frozen=True)
class Goal:
    """A target the figure should meet: ``value <= limit`` (``le``) or ``value >= limit``."""

    limit: float
    op: Literal["<=", ">="] = "<="

    def met(self, value: float) -> bool:
        return value <= self.limit if self.op == "<=" else value >= self.limit

    def __str__(self) -> str:
        return f"{self.op} {self.limit:g}"


@dataclass(frozen=True)
class Figure:
    """One named measured value. Figures without a goal are context for the ones with."""

    name: str
    value: float
    unit: str
    goal: Goal | None = None
    note: str = ""
    floor: str = ""  # the figure measured beside it that it is read against (its floor)

    @property
    def met(self) -> bool | None:
        return None if self.goal is None else self.goal.met(self.value)


@dataclass
class Context:
    """Shared state of one bench run: options, the servers (started on first use), cleanup."""

    quick: bool
    stack: ExitStack
    named: frozenset[str] = frozenset()  # the metrics --only named (a heavy one runs then)
    log: Callable[[str], None] = field(default=lambda msg: print(msg, file=sys.stderr))
    repo: Path = field(default_factory=product_root)
    _fake: FakeProvider | None = None
    _server: JupyterServer | None = None
    _scripted: JupyterServer | None = None
    _tmp: Path | None = None
    _failed: dict[str, BenchError] = field(default_factory=dict)
    _early: dict[str, JupyterServer] = field(default_factory=dict)

    def repeats(self, quick: int, full: int) -> int:
        """How many times to repeat a measurement in this mode."""
        return quick if self.quick else full

    def fake(self) -> FakeProvider:
        """The fake OpenAI-compatible provider (scenario ``long``, 2,000 chunks)."""
        if self._fake is None:
            from .servers import FakeProvider

            self._fake = self._once(
                "the fake provider", lambda: FakeProvider(self.repo, chunks=2000)
            )
        return self._fake

    def share_fake(self, other: Context) -> None:
        """Stream from ``other``'s fake provider: two compared sides measured against one."""
        self._fake = other.fake()

    def server(self) -> JupyterServer:
        """A ``jupyter server`` with jupyter_resolve pointed at :meth:`fake`, runtime running."""
        if self._server is None:
            from .servers import JupyterServer

            url = self.fake().base_url
            self._server = self._once(
                "jupyter server (jupyter_resolve → the fake provider)",
                lambda: self.spawned("main", lambda: JupyterServer(self.repo, url)),
            )
        return self._server

    def spawn_main(self) -> None:
        """:meth:`spawn` the server of :meth:`server` (the fake provider starts now)."""
        if self._server is None:
            from .servers import JupyterServer

            url = self.fake().base_url
            self.spawn("main", lambda: JupyterServer(self.repo, url))

    def spawn(self, key: str, make: Callable[[], JupyterServer]) -> None:
        """Start ``make()``'s server now, without waiting for it (see :meth:`spawned`).

        A failure here is left for the metric to meet: it then starts its server itself.
        """
        if key in self._early:
            return
        server = make()
        self.stack.callback(server.close)  # if no metric takes it
        try:
            self._early[key] = server.spawn()
        except BenchError as exc:
            server.close()
            self.log(f"could not start the {key} server early: {exc}")

    def spawned(self, key: str, make: Callable[[], JupyterServer]) -> JupyterServer:
        """The server :meth:`spawn` started under ``key``, else a new one from ``make()``;
        entering it (``with``) waits until it is ready."""
        early = self._early.pop(key, None)
        return early if early is not None else make()

    def tmp(self) -> Path:
        """A temporary folder for this run's files (removed at the end)."""
        if self._tmp is None:
            self._tmp = Path(tempfile.mkdtemp(prefix="resolve-bench-"))
            self.stack.callback(shutil.rmtree, self._tmp, ignore_errors=True)
        return self._tmp

    def scripted(self, turns: list[dict[str, object]]) -> JupyterServer:
        """A second ``jupyter server``, provider ``scripted``, that now replays ``turns``.

        Every run takes the script's turns from the first; the provider re-reads the script
        when the file changes, so metrics share this server and each sets its own script.
        """
        self._write_script(turns)
        if self._scripted is None:
            self._scripted = self._once(
                "jupyter server (jupyter_resolve, scripted provider)",
                lambda: self.spawned("scripted", self._scripted_server),
            )
        return self._scripted

    def spawn_scripted(self) -> None:
        """:meth:`spawn` the server of :meth:`scripted`, with a placeholder script."""
        if self._scripted is None and not self._script.exists():
            self._write_script([{"content": "ready"}])
        self.spawn("scripted", self._scripted_server)

    @property
    def _script(self) -> Path:
        return self.tmp() / "script.jsonl"

    def _write_script(self, turns: list[dict[str, object]]) -> None:
        text = "".join(json.dumps(turn) + "\n" for turn in turns)
        staged = self._script.with_suffix(".new")
        staged.write_text(text)
        os.replace(staged, self._script)  # a new inode and mtime: the provider reloads it

    def _scripted_server(self) -> JupyterServer:
        from .servers import JupyterServer

        args = ("--Resolve.provider=scripted", f"--Resolve.script={self._script}")
        return JupyterServer(self.repo, "http://127.0.0.1:9/v1", extra_args=args)

    def _once(self, what: str, make: Callable[[], AbstractContextManager[T]]) -> T:
        """Enter ``make()`` on the stack; a failure is remembered and raised again, not retried."""
        if what in self._failed:
            raise self._failed[what]
        self.log(f"starting {what}")
        try:
            return self.stack.enter_context(make())
        except BenchError as exc:
            self._failed[what] = exc
            raise


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def median(values: Sequence[float]) -> float:
    if not values:
        raise BenchError("no samples")
    return float(statistics.median(values))


RUNTIMES: dict[Path, Path] = {}  # a compared side's root → its agent-httpd (bench/interleave.py)


def runtime_binary(repo: Path = REPO) -> Path:
    """The agent-httpd binary the gateway will run: a compared side's, else the packaged one,
    else the native build."""
    chosen = RUNTIMES.get(repo) or os.environ.get(RUNTIME_ENV)
    if chosen:
        return Path(chosen)
    for candidate in (
        repo / "jupyter_resolve" / "bin" / "agent-httpd",
        repo / "native" / "build" / "agent-httpd",
    ):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise BenchError(
        "agent-httpd is not built (neither jupyter_resolve/bin/agent-httpd nor "
        "native/build/agent-httpd exists): run `make -C native`"
    )
