"""``python -m bench [--quick] [--json PATH] [--only NAME ...]``: measure, print a table."""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import sys
import time
import traceback
from contextlib import ExitStack
from pathlib import Path
from types import FrameType
from typing import Any

from .core import REPO, BenchError, Context, Figure, NotMeasured
from .metrics import METRICS, SPAWNS
from .profiled_server import CLOCK_ENV
from .profiling import PROFILE_DIR_ENV, in_process
from .profiling import report as profiles_report


def machine() -> dict[str, Any]:
    info: dict[str, Any] = {
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
    }
    if hasattr(os, "sched_getaffinity"):
        info["cpus_available"] = len(os.sched_getaffinity(0))
    if hasattr(os, "getloadavg"):
        info["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu_model"] = line.partition(":")[2].strip()
                break
    except OSError:
        pass
    return info


def fmt(value: float) -> str:
    if value == int(value):
        return str(int(value))
    return f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"


def _floor(f: Figure, values: dict[str, float]) -> str:
    """``value (name)`` of the figure's floor, when it was measured in this run."""
    if not f.floor or f.floor not in values:
        return ""
    return f"{fmt(values[f.floor])} ({f.floor})"


def table(figures: list[Figure], errors: dict[str, str], skipped: dict[str, str]) -> str:
    values = {f.name: f.value for f in figures}
    rows = [("metric", "value", "unit", "goal", "met?", "floor")]
    for f in figures:
        met = "" if f.met is None else ("yes" if f.met else "NO")
        rows.append((f.name, fmt(f.value), f.unit, str(f.goal or ""), met, _floor(f, values)))
    for name in skipped:
        rows.append((name, "n/a", "", "", "not measured", ""))
    for name in errors:
        rows.append((name, "n/a", "", "", "error", ""))
    if not any(row[5] for row in rows[1:]):
        rows = [row[:5] for row in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for n, row in enumerate(rows):
        cells = [
            c.rjust(w) if i == 1 else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def loaded_from() -> dict[str, Any]:
    """Where this run's servers and the bench itself imported jupyter_resolve from."""
    from .floor_extension import loaded
    from .servers import LOADED_FROM

    return {"servers": sorted(set().union(*LOADED_FROM.values())), "bench": loaded()}


def _compare_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "comparison", "this tree beside another commit, alternately (bench/compare.py)"
    )
    group.add_argument(
        "--compare",
        nargs="?",
        const="",
        metavar="BASE",
        help="compare with the commit BASE (default: the one bench/baseline names), run in a "
        "temporary git worktree; with --quick each side's runs are quick; --only picks the "
        "metrics (default: those of the gated figures); exit status 1 past the threshold",
    )
    group.add_argument("--rounds", type=int, default=3, help="runs of each side (default 3)")
    group.add_argument(
        "--threshold",
        type=float,
        default=1.5,
        help="a gated figure fails past this ratio of the base's (default 1.5)",
    )
    group.add_argument("--base-tree", type=Path, help=argparse.SUPPRESS)  # a prepared tree
    group.add_argument("--head-tree", type=Path, help=argparse.SUPPRESS)
    group.add_argument("--interleave", metavar="SIDES_JSON", help=argparse.SUPPRESS)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="few repeats (under 60 s)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures here")
    parser.add_argument(
        "--only",
        action="append",
        choices=list(METRICS),
        metavar="NAME",
        help=f"run only these metrics (repeatable): {', '.join(METRICS)}",
    )
    parser.add_argument(
        "--profile",
        choices=list(METRICS),
        metavar="METRIC",
        help="run only METRIC with the gateway (and the bench's own work) under cProfile; "
        "print the top functions and keep the .prof files in --profile-dir",
    )
    parser.add_argument(
        "--profile-dir",
        type=Path,
        default=Path("bench-profiles"),
        metavar="DIR",
        help="where --profile writes its .prof files (default: ./bench-profiles)",
    )
    parser.add_argument(
        "--profile-clock",
        choices=("wall", "cpu"),
        default="wall",
        help="what --profile counts: wall time (default) or each thread's CPU time, which a "
        "busy shared machine does not inflate",
    )
    _compare_options(parser)
    args = parser.parse_args(argv)
    if args.interleave is not None:  # one comparison run holding both sides (bench/interleave.py)
        from .interleave import main as interleave

        if args.json is None:
            parser.error("--interleave needs --json")
        return interleave(args.interleave, args.only or [], args.rounds, args.quick, args.json)
    if args.compare is not None:
        from .compare import Comparison, compare

        return compare(
            Comparison(
                base=args.compare or None,
                base_tree=args.base_tree,
                head_tree=args.head_tree or REPO,
                metrics=args.only or (),
                rounds=args.rounds,
                quick=args.quick,
                threshold=args.threshold,
                json_path=args.json,
            )
        )
    selected = args.only or list(METRICS)
    if args.profile:
        selected = [args.profile]
        args.profile_dir.mkdir(parents=True, exist_ok=True)
        for old in args.profile_dir.glob("*.prof"):
            old.unlink()
        os.environ[PROFILE_DIR_ENV] = str(args.profile_dir.resolve())
        os.environ[CLOCK_ENV] = args.profile_clock

    signal.signal(signal.SIGTERM, _interrupt)  # clean up on SIGTERM/SIGHUP as on Ctrl-C
    signal.signal(signal.SIGHUP, _interrupt)
    started = time.perf_counter()
    info = machine()
    figures: list[Figure] = []
    errors: dict[str, str] = {}
    skipped: dict[str, str] = {}
    stack = ExitStack()
    try:
        ctx = Context(quick=args.quick, stack=stack, named=frozenset(args.only or ()))
        spawned = False
        for name in METRICS:
            if name not in selected:
                continue
            if name in SPAWNS and not spawned:
                spawned = True
                ctx.log(f"[{time.perf_counter() - started:5.1f} s] starting the servers")
                wanted = (f for n, fs in SPAWNS.items() if n in selected for f in fs)
                for spawn in dict.fromkeys(wanted):
                    try:
                        spawn(ctx)
                    except BenchError as exc:  # the metric meets it again and reports it
                        ctx.log(f"could not start a server early: {exc}")
            ctx.log(f"[{time.perf_counter() - started:5.1f} s] {name}")
            try:
                figures += in_process(name, METRICS[name], ctx)
            except NotMeasured as exc:
                skipped[name] = str(exc)
                ctx.log(f"{name}: not measured: {exc}")
            except BenchError as exc:
                errors[name] = str(exc)
                ctx.log(f"{name}: error: {exc}")
            except Exception as exc:  # a bug, or a compared commit without what it needs
                errors[name] = f"{type(exc).__name__}: {exc}"
                ctx.log(f"{name}: failed:\n{traceback.format_exc()}")
    except KeyboardInterrupt:
        print("interrupted; stopping the servers", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not skip cleanup
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        stack.close()
        signal.signal(signal.SIGINT, signal.default_int_handler)
    wall = time.perf_counter() - started
    if hasattr(os, "getloadavg"):
        info["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]

    if args.profile:
        print(profiles_report(args.profile_dir.resolve()) + "\n")
    print(table(figures, errors, skipped))
    print(
        f"\n{'quick' if args.quick else 'full'} run, {wall:.1f} s wall, "
        f"{info.get('cpus_available', info['cpu_count'])} CPUs "
        f"({info.get('cpu_model', 'unknown model')}), Python {info['python']}, "
        f"load average {info.get('loadavg', ['?'])[0]} at start, "
        f"{info.get('loadavg_end', ['?'])[0]} at end"
    )
    for name, reason in {**skipped, **errors}.items():
        what = "not measured" if name in skipped else "error"
        print(f"{name}: {what}: {reason}")
    if args.json is not None:
        report = {
            "metrics": {f.name: f.value for f in figures},
            "machine": info,
            "units": {f.name: f.unit for f in figures},
            "goals": {f.name: str(f.goal) for f in figures if f.goal is not None},
            "met": {f.name: f.met for f in figures if f.met is not None},
            "notes": {f.name: f.note for f in figures if f.note},
            "errors": errors,
            "not_measured": skipped,
            "mode": "quick" if args.quick else "full",
            "wall_s": round(wall, 2),
            "floors": {f.name: f.floor for f in figures if f.floor},
            "loaded_from": loaded_from(),
        }
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
