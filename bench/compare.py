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

Metrics measured through servers run with both sides in one process (bench/interleave.py:
both sides' servers up at once on one fake, each metric on one side then the other, round
after round); those that import the product into the bench's own process (``IN_PROCESS``) run
in a fresh ``python -m bench`` per side and round, base then head, then head then base (ABBA…).
Each side's figure is the median over the rounds and the ratio the median of the rounds'
ratios. A gated figure (``bench.metrics.GATES``) fails when that ratio is past the threshold
and the rounds' median difference is past the figure's noise (its ``slack``). With no BASE:
the commit ``bench/baseline`` names.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .compare_rows import Row, Side, rows, table
from .core import REPO, ROOT_ENV, RUNTIME_ENV, BenchError
from .metrics import GATES, IN_PROCESS, METRICS

BASELINE_FILE = REPO / "bench" / "baseline"
THRESHOLD = 1.5
ROUNDS = 3
# a side's own code: the rest (bench/, tests/) is this tree's, the same for both sides
PRODUCT = ("jupyter_resolve", "kernel_tools", "native")
HARNESS = ("bench", "tests")
PROFILE_ENV = "RESOLVE_BENCH_PROFILE_DIR"


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
    env.pop(PROFILE_ENV, None)
    with contextlib.suppress(FileNotFoundError):
        out.unlink()
    done = subprocess.run(argv, cwd=side.root, env=env, capture_output=True, text=True)
    if not out.is_file():
        tail = (done.stderr or done.stdout)[-3000:]
        return {"metrics": {}, "errors": {"bench": f"exit status {done.returncode}:\n{tail}"}}
    report: dict[str, Any] = json.loads(out.read_text())
    return report


def run_interleaved(
    base: Side, head: Side, metrics: Sequence[str], options: Comparison, folder: Path
) -> dict[str, Any]:
    """Both sides in one ``python -m bench --interleave`` (bench/interleave.py)."""
    out = folder / "interleaved.json"
    sides = {s.name: {"root": str(s.root), "runtime": str(s.runtime)} for s in (base, head)}
    argv = [sys.executable, "-m", "bench", "--interleave", json.dumps(sides), "--json", str(out)]
    argv += ["--rounds", str(options.rounds), *(["--quick"] if options.quick else [])]
    for name in metrics:
        argv += ["--only", name]
    env = {k: v for k, v in os.environ.items() if k not in (ROOT_ENV, RUNTIME_ENV, PROFILE_ENV)}
    done = subprocess.run(argv, cwd=REPO, env=env, stdout=subprocess.PIPE, text=True)
    if not out.is_file():
        why = f"exit status {done.returncode}"
        return {s: {"runs": [{"metrics": {}, "errors": {"interleaved": why}}]} for s in sides}
    found: dict[str, Any] = json.loads(out.read_text())
    return found


def _merge(into: dict[str, Any], report: dict[str, Any]) -> None:
    for key in ("metrics", "units", "errors"):
        into.setdefault(key, {}).update(report.get(key) or {})


def check_code(side: Side, report: dict[str, Any]) -> list[str]:
    """Where the side's bench and servers imported jupyter_resolve from, when not its tree."""
    expected = (side.tree / "jupyter_resolve").resolve()
    loaded = report.get("loaded_from") or {}
    side.loaded.setdefault("servers", set()).update(loaded.get("servers", []))
    if loaded.get("bench"):
        side.loaded.setdefault("bench", set()).add(loaded["bench"])
    paths = [*loaded.get("servers", []), *([loaded["bench"]] if loaded.get("bench") else [])]
    return [p for p in paths if Path(p).resolve() != expected]


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
    for side in (base, head):
        side.runs = [{"metrics": {}, "units": {}, "errors": {}} for _ in range(options.rounds)]
    apart = [m for m in metrics if m in IN_PROCESS]
    together = [m for m in metrics if m not in IN_PROCESS]
    wrong: list[str] = []
    for round_ in range(options.rounds if apart else 0):
        for side in (base, head) if round_ % 2 == 0 else (head, base):
            say(f"compare: round {round_ + 1}/{options.rounds}, {side.name} ({side.label})")
            report = run_side(side, apart, options.quick, folder / f"{side.name}.json")
            _merge(side.runs[round_], report)
            wrong += [f"{side.name} ran {p}" for p in check_code(side, report)]
    if together:
        say(f"compare: both sides in one run, {options.rounds} rounds: {', '.join(together)}")
        found_together = run_interleaved(base, head, together, options, folder)
        for side in (base, head):
            mine = found_together.get(side.name, {})
            for round_, report in enumerate(mine.get("runs", [])[: options.rounds]):
                _merge(side.runs[round_], report)
            wrong += [f"{side.name} ran {p}" for p in check_code(side, mine)]
    for side in (base, head):
        errors = {name: why for run in side.runs for name, why in run["errors"].items()}
        for name, reason in errors.items():
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
        **{
            side.name: {
                "label": side.label,
                "tree": str(side.tree),
                "runs": side.runs,
                "loaded_from": {k: sorted(v) for k, v in side.loaded.items()},
            }
            for side in (base, head)
        },
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
