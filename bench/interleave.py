"""Both sides of a comparison in one run: their servers up side by side on one fake provider,
each metric measured on one side then the other, round after round (bench/compare.py).

Separate runs of each side (``python -m bench`` twice) met different spells of a shared
machine: at load 7–9, four rounds of the chain alternated that way put eea4af7's first token
1.54x behind f3465fc's, while the same two commits interleaved, 60 pairs each, came out within
1 %. So
every metric that measures through servers is compared here: both sides' servers are started
first (their start's own work is over before anything is timed), a first round warms each side
up and is dropped, then each round measures every metric on both sides back to back, the side
that goes first alternating. A side is its product's root (its ``jupyter_resolve``,
``kernel_tools`` and ``native``: bench/compare.py's ``side_root``) and its agent-httpd; the
servers run there, so each side's code is what they import (their floor extension says which,
and the comparison checks it).

``python -m bench --interleave SIDES_JSON --json OUT`` (internal: the comparison starts it).
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from .core import RUNTIMES, BenchError, Context, Figure, NotMeasured
from .metrics import METRICS, SPAWNS

# A metric that starts its servers afresh each time needs no warm-up round.
NO_WARM_UP = frozenset({"server_start", "tool_roundtrip", "extension_import"})


def contexts(sides: dict[str, dict[str, str]], quick: bool, stack: ExitStack) -> dict[str, Context]:
    """A context per side, rooted in its folder, on one shared fake provider."""
    found: dict[str, Context] = {}
    for name, side in sides.items():
        root = Path(side["root"])
        RUNTIMES[root] = Path(side["runtime"])
        ctx = Context(quick=quick, stack=stack, repo=root)
        if found:
            ctx.share_fake(next(iter(found.values())))
        found[name] = ctx
    return found


def interleaved(
    sides: dict[str, dict[str, str]],
    metrics: list[str],
    rounds: int,
    quick: bool,
    log: Callable[[str], None],
) -> dict[str, Any]:
    """Per side: a report per round (``metrics``, ``units``, ``errors``), and where its servers
    imported jupyter_resolve from."""
    from .servers import LOADED_FROM

    selected = [name for name in METRICS if name in metrics]
    reports: dict[str, list[dict[str, Any]]] = {name: [] for name in sides}
    with ExitStack() as stack:
        ctxs = contexts(sides, quick, stack)
        for ctx in ctxs.values():  # every side's servers start side by side, before any timing
            wanted = (spawn for name in selected for spawn in SPAWNS.get(name, ()))
            for spawn in dict.fromkeys(wanted):
                try:
                    spawn(ctx)
                except BenchError as exc:
                    log(f"interleave: could not start a server early: {exc}")
        names = list(ctxs)
        for round_ in range(rounds + 1):
            order = names if round_ % 2 == 0 else names[::-1]
            for side in names:
                reports[side].append({"metrics": {}, "units": {}, "errors": {}})
            for metric in selected:
                if round_ == 0 and metric in NO_WARM_UP:
                    continue
                for side in order:
                    log(f"interleave: round {round_}/{rounds}, {metric}, {side}")
                    _measure(metric, ctxs[side], reports[side][round_], log)
    roots = {name: str(Path(side["root"])) for name, side in sides.items()}
    return {
        name: {
            "runs": reports[name][1:],  # round 0 warmed up
            "loaded_from": {"servers": sorted(LOADED_FROM.get(roots[name], set()))},
        }
        for name in sides
    }


def _measure(metric: str, ctx: Context, report: dict[str, Any], log: Callable[[str], None]) -> None:
    try:
        figures: list[Figure] = METRICS[metric](ctx)
    except NotMeasured as exc:
        report["errors"][metric] = f"not measured: {exc}"
        return
    except BenchError as exc:
        report["errors"][metric] = str(exc)
        log(f"interleave: {metric}: {exc}")
        return
    except Exception as exc:  # one side without what a metric needs (an older commit)
        report["errors"][metric] = f"{type(exc).__name__}: {exc}"
        log(f"interleave: {metric} failed:\n{traceback.format_exc()}")
        return
    for figure in figures:
        report["metrics"][figure.name] = figure.value
        report["units"][figure.name] = figure.unit


def main(sides_json: str, metrics: list[str], rounds: int, quick: bool, out: Path) -> int:
    import sys

    sides = json.loads(sides_json)
    found = interleaved(sides, metrics, rounds, quick, lambda m: print(m, file=sys.stderr))
    out.write_text(json.dumps(found, indent=2) + "\n")
    return 0
