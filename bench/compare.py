"""``python -m bench --compare [BASE]``: this tree's figures beside another commit's, measured
alternately on this machine, with the ratio of each; past a threshold, exit status 1.

The base is checked out in a temporary ``git worktree`` and its agent-httpd built there with its
own Makefile. Both sides run the same bench (this tree's ``bench/`` and ``tests/`` fakes and
launcher) against their own product: each side's bench runs in a folder of its own
(:func:`side_root`) holding links to that side's ``jupyter_resolve``, ``kernel_tools`` and
``native``, which is the bench's working directory and the servers' too, so it comes first on
``sys.path`` — before ``PYTHONPATH`` and the editable install's ``.pth`` entry (a path, this
checkout, appended to ``sys.path`` at start-up). Each side's bench reports where the servers and
the bench itself imported ``jupyter_resolve`` from, and a side whose code came from anywhere else
fails the comparison.

The sides run alternately, base first then head first (ABBA…), each a fresh ``python -m bench``
writing its JSON; each side's figure is the median over the rounds and the ratio the median of
the rounds' ratios (a round's two runs are back to back: a slow spell of a shared machine weighs
on both). A gated figure (``bench.metrics.GATES``) fails when that ratio is past the threshold
and the rounds' median difference is past the figure's noise (its ``slack``). With no BASE:
the commit ``bench/baseline`` names.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .core import REPO, ROOT_ENV, RUNTIME_ENV, BenchError
from .metrics import GATES, METRICS, Gate

BASELINE_FILE = REPO / "bench" / "baseline"
THRESHOLD = 1.5
ROUNDS = 3
# a side's own code: the rest (bench/, tests/) is this tree's, the same for both sides
PRODUCT = ("jupyter_resolve", "kernel_tools", "native")
HARNESS = ("bench", "tests")


@dataclass
class Side:
    """One side of a comparison: a tree, the folder its bench runs in, what it measured."""

    name: str  # "base" or "head"
    tree: Path
    label: str  # the commit, or "working tree"
    root: Path = Path()
    runs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def runtime(self) -> Path:
        return self.tree / "native" / "build" / "agent-httpd"

    def values(self, figure: str) -> list[float]:
        return [run["metrics"][figure] for run in self.runs if figure in run.get("metrics", {})]

    def median(self, figure: str) -> float | None:
        values = self.values(figure)
        return float(statistics.median(values)) if values else None


def recorded_baseline(path: Path = BASELINE_FILE) -> str:
    """The commit ``bench/baseline`` names: its first line that is not a comment."""
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            return line
    raise BenchError(f"{path} names no commit")


def _git(*args: str, cwd: Path = REPO) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise BenchError(f"git {' '.join(args)}: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout.strip()


def build_runtime(tree: Path) -> None:
    """``make -C native`` in ``tree``: its agent-httpd, with its own Makefile."""
    done = subprocess.run(
        ["make", "-s", "-C", str(tree / "native")], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise BenchError(f"building agent-httpd in {tree} failed:\n{done.stderr[-2000:]}")


@contextlib.contextmanager
def checked_out(commit: str, into: Path) -> Iterator[Path]:
    """``commit`` in a temporary worktree under ``into``, its agent-httpd built; removed after."""
    sha = _git("rev-parse", "--verify", f"{commit}^{{commit}}")
    tree = into / f"base-{sha[:10]}"
    _git("worktree", "add", "--detach", str(tree), sha)
    try:
        build_runtime(tree)
        yield tree
    finally:
        with contextlib.suppress(BenchError):
            _git("worktree", "remove", "--force", str(tree))
        shutil.rmtree(tree, ignore_errors=True)
        with contextlib.suppress(BenchError):
            _git("worktree", "prune")


def side_root(tree: Path, folder: Path) -> Path:
    """A folder whose product packages are ``tree``'s and whose harness is this checkout's."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in PRODUCT:
        (folder / name).symlink_to(tree / name, target_is_directory=True)
    for name in HARNESS:
        (folder / name).symlink_to(REPO / name, target_is_directory=True)
    return folder


def compile_tree(tree: Path) -> None:
    """Byte-compile a side's code once, so no round pays for it."""
    paths = [str(tree / name) for name in ("jupyter_resolve", "kernel_tools")]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *paths], check=False)


def run_side(side: Side, metrics: Sequence[str], quick: bool, out: Path) -> dict[str, Any]:
    """One ``python -m bench`` of ``side`` (its JSON report; errors from a crash in it)."""
    argv = [sys.executable, "-m", "bench", "--json", str(out)]
    argv += ["--quick"] if quick else []
    for name in metrics:
        argv += ["--only", name]
    env = dict(os.environ)
    env[ROOT_ENV] = str(side.root)
    env[RUNTIME_ENV] = str(side.runtime)
    env["PYTHONPATH"] = str(side.root)
    env.pop("RESOLVE_BENCH_PROFILE_DIR", None)
    with contextlib.suppress(FileNotFoundError):
        out.unlink()
    done = subprocess.run(argv, cwd=side.root, env=env, capture_output=True, text=True)
    if not out.is_file():
        tail = (done.stderr or done.stdout)[-3000:]
        return {"metrics": {}, "errors": {"bench": f"exit status {done.returncode}:\n{tail}"}}
    report: dict[str, Any] = json.loads(out.read_text())
    return report


def check_code(side: Side, report: dict[str, Any]) -> list[str]:
    """Where the side's bench and servers imported jupyter_resolve from, when not its tree."""
    expected = (side.tree / "jupyter_resolve").resolve()
    loaded = report.get("loaded_from") or {}
    paths = [*loaded.get("servers", []), *([loaded["bench"]] if loaded.get("bench") else [])]
    return [p for p in paths if Path(p).resolve() != expected]


@dataclass(frozen=True)
class Row:
    """One figure of both sides: their medians, and the pairs of each round (base, head)."""

    figure: str
    base: float | None
    head: float | None
    gate: Gate | None
    threshold: float
    unit: str = ""
    pairs: tuple[tuple[float, float], ...] = ()  # (base, head) of each round that has both

    @property
    def ratio(self) -> float | None:
        """The median of the rounds' ratios (each round's two runs were back to back, so a
        slow spell of the machine weighs on both); without pairs, of the medians."""
        ratios = [h / b for b, h in self.pairs if b > 0]
        if ratios:
            return float(statistics.median(ratios))
        if self.base is None or self.head is None or self.base <= 0:
            return None
        return self.head / self.base

    @property
    def difference(self) -> float | None:
        if self.pairs:
            return float(statistics.median(h - b for b, h in self.pairs))
        return None if self.base is None or self.head is None else self.head - self.base

    @property
    def flagged(self) -> bool:
        """Past the threshold and further apart than the figure's noise."""
        ratio, difference = self.ratio, self.difference
        if self.gate is None or difference is None:
            return False
        over = ratio > self.threshold if ratio is not None else difference > 0
        return over and difference > self.gate.slack


def rows(base: Side, head: Side, threshold: float) -> list[Row]:
    """Every figure either side measured, gated ones first."""
    names: dict[str, str] = {}
    for run in [*base.runs, *head.runs]:
        units = run.get("units", {})
        for name in run.get("metrics", {}):
            names.setdefault(name, units.get(name, ""))
    ordered = [n for n in GATES if n in names] + [n for n in names if n not in GATES]
    return [
        Row(
            n,
            base.median(n),
            head.median(n),
            GATES.get(n),
            threshold,
            names[n],
            _pairs(base, head, n),
        )
        for n in ordered
    ]


def _pairs(base: Side, head: Side, figure: str) -> tuple[tuple[float, float], ...]:
    """(base, head) of each round both measured ``figure`` in."""
    found = []
    for b, h in zip(base.runs, head.runs, strict=False):
        b_value, h_value = b.get("metrics", {}).get(figure), h.get("metrics", {}).get(figure)
        if b_value is not None and h_value is not None:
            found.append((float(b_value), float(h_value)))
    return tuple(found)


def _fmt(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"


def _spread(side: Side, figure: str) -> str:
    values = side.values(figure)
    return f"{_fmt(min(values))}–{_fmt(max(values))}" if len(values) > 1 else ""


def table(base: Side, head: Side, found: list[Row]) -> str:
    header = ("figure", f"base {base.label[:12]}", "range", "head", "range", "ratio", "gate")
    lines = [header]
    for row in found:
        gate = ""
        if row.gate is not None:
            gate = "FLAGGED" if row.flagged else f"ok (<= x{row.threshold:g})"
            if row.head is None:
                gate = "not measured"
        ratio = "" if row.ratio is None else f"x{row.ratio:.2f}"
        lines.append(
            (
                row.figure,
                _fmt(row.base),
                _spread(base, row.figure),
                _fmt(row.head),
                _spread(head, row.figure),
                ratio,
                gate,
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    text = []
    for n, line in enumerate(lines):
        pairs = enumerate(zip(line, widths, strict=True))
        cells = [c.rjust(w) if 0 < i < 6 else c.ljust(w) for i, (c, w) in pairs]
        text.append("  ".join(cells).rstrip())
        if n == 0:
            text.append("  ".join("-" * w for w in widths))
    return "\n".join(text)


def gated_metrics() -> list[str]:
    """The metrics that measure the gated figures, in the bench's order."""
    wanted = {gate.metric for gate in GATES.values()}
    return [name for name in METRICS if name in wanted]


@dataclass
class Comparison:
    """What ``--compare`` was asked: the sides' trees (or the base's commit) and how to run."""

    base: str | None  # a commit; None: ``base_tree``
    base_tree: Path | None = None
    head_tree: Path = REPO
    metrics: Sequence[str] = ()
    rounds: int = ROUNDS
    quick: bool = True
    threshold: float = THRESHOLD
    json_path: Path | None = None


def compare(options: Comparison, log: Any = None) -> int:
    """Run the comparison, print the table; 0, 1 (a gated figure past its threshold, or not
    measured on the head side) or 2 (a side could not be set up or ran other code)."""
    say = log or (lambda msg: print(msg, file=sys.stderr))
    metrics = list(options.metrics) or gated_metrics()
    with tempfile.TemporaryDirectory(prefix="resolve-bench-compare-") as tmp:
        folder = Path(tmp)
        try:
            with contextlib.ExitStack() as stack:
                if options.base_tree is not None:
                    base_tree, label = options.base_tree, str(options.base_tree)
                    build_runtime(base_tree)
                else:
                    commit = options.base or recorded_baseline()
                    label = _git("rev-parse", "--short=12", f"{commit}^{{commit}}")
                    say(f"compare: checking out {commit} ({label}) and building its agent-httpd")
                    base_tree = stack.enter_context(checked_out(commit, folder))
                build_runtime(options.head_tree)
                head_label = "working tree" if options.head_tree == REPO else str(options.head_tree)
                base = Side("base", base_tree, label)
                head = Side("head", options.head_tree, head_label)
                return _alternate(base, head, metrics, options, folder, say)
        except BenchError as exc:
            say(f"compare: {exc}")
            return 2


def _alternate(
    base: Side, head: Side, metrics: list[str], options: Comparison, folder: Path, say: Any
) -> int:
    for side in (base, head):
        side.root = side_root(side.tree, folder / side.name)
        compile_tree(side.tree)
    wrong: list[str] = []
    for round_ in range(options.rounds):
        for side in (base, head) if round_ % 2 == 0 else (head, base):
            say(f"compare: round {round_ + 1}/{options.rounds}, {side.name} ({side.label})")
            report = run_side(side, metrics, options.quick, folder / f"{side.name}.json")
            side.runs.append(report)
            wrong += [f"{side.name} ran {p}" for p in check_code(side, report)]
            for name, reason in (report.get("errors") or {}).items():
                say(f"compare: {side.name}: {name}: {_short(reason)}")
    found = rows(base, head, options.threshold)
    print(table(base, head, found))
    flagged = [r.figure for r in found if r.flagged]
    seen = {r.figure for r in found if r.head is not None}
    missing = [n for n in GATES if GATES[n].metric in metrics and n not in seen]
    print(
        f"\n{options.rounds} rounds alternated, {'quick' if options.quick else 'full'} runs; "
        f"a gated figure fails past x{options.threshold:g} of the base"
    )
    if options.json_path is not None:
        _write_json(options.json_path, base, head, found, options.threshold)
    if wrong:
        print("a side ran code that is not its own:\n  " + "\n  ".join(sorted(set(wrong))))
        return 2
    for name in flagged:
        print(f"FLAGGED: {name}")
    for name in dict.fromkeys(missing):
        print(f"not measured on the head side: {name}")
    return 1 if flagged or missing else 0


def _short(text: str, keep: int = 400) -> str:
    """A long error's start and end (a traceback's last lines, an HTML page's title)."""
    text = text.strip()
    return text if len(text) <= 2 * keep else f"{text[:keep]} … {text[-keep:]}"


def _write_json(path: Path, base: Side, head: Side, found: list[Row], threshold: float) -> None:
    report = {
        "threshold": threshold,
        "base": {"label": base.label, "tree": str(base.tree), "runs": base.runs},
        "head": {"label": head.label, "tree": str(head.tree), "runs": head.runs},
        "figures": {
            r.figure: {
                "base": r.base,
                "head": r.head,
                "ratio": r.ratio,
                "pairs": r.pairs,
                "gated": r.gate is not None,
                "flagged": r.flagged,
            }
            for r in found
        },
    }
    path.write_text(json.dumps(report, indent=2) + "\n")
