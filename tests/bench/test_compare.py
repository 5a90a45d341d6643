"""``python -m bench --compare``: each side runs its own code, and a slowed one is flagged.

Two copies of this tree's product (jupyter_resolve, kernel_tools, native) in a temporary folder;
the head's gets a sleep planted at the start of every run. The comparison must fail (exit 1)
on the chain's first token, and every server and in-process bench of each side must have
imported jupyter_resolve from that side's copy — not from this checkout, which the editable
install puts on ``sys.path`` too.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.compare import check_code
from bench.compare_rows import Row, Side
from bench.metrics import GATES, Gate

REPO = Path(__file__).resolve().parents[2]
START = "jupyter_resolve/runs/start.py"
FIRST_LINE = "    plan = _plan(host, request)\n"
PLANTED = '    __import__("time").sleep(0.05)  # planted by tests/bench/test_compare.py\n'

pytestmark = pytest.mark.timeout(600)


def product_copy(into: Path) -> Path:
    """This tree's product, its agent-httpd build included (so ``make`` has nothing to do)."""
    skip = shutil.ignore_patterns("__pycache__", "labextension", "bin", "*.o", "fuzz-*")
    for name in ("jupyter_resolve", "kernel_tools", "native"):
        shutil.copytree(REPO / name, into / name, ignore=skip, symlinks=True)
    return into


def test_a_sleep_planted_in_the_head_is_flagged_and_each_side_runs_its_own_code(
    tmp_path: Path,
) -> None:
    base = product_copy(tmp_path / "base")
    head = product_copy(tmp_path / "head")
    start = head / START
    source = start.read_text()
    assert FIRST_LINE in source, f"{START} no longer starts a run with {FIRST_LINE.strip()!r}"
    start.write_text(source.replace(FIRST_LINE, PLANTED + FIRST_LINE, 1))
    out = tmp_path / "compare.json"
    argv = [sys.executable, "-m", "bench", "--compare", "--base-tree", str(base)]
    argv += ["--head-tree", str(head), "--quick", "--rounds", "1", "--json", str(out)]
    argv += ["--only", "chain", "--only", "run_start"]
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=540)
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    assert "FLAGGED: chain_first_token_overhead_ms" in done.stdout, done.stdout
    report = json.loads(out.read_text())
    first_token = report["figures"]["chain_first_token_overhead_ms"]
    assert first_token["flagged"] is True and first_token["head"] > first_token["base"] + 25
    for side, tree in (("base", base), ("head", head)):
        mine = [str((tree / "jupyter_resolve").resolve())]
        loaded = report[side]["loaded_from"]  # the servers of the chain, run_start's in-process
        assert loaded == {"servers": mine, "bench": mine}, loaded


def test_a_side_that_ran_other_code_is_named(tmp_path: Path) -> None:
    side = Side("base", tmp_path / "base", "abc")
    mine = str((tmp_path / "base" / "jupyter_resolve").resolve())
    report = {"loaded_from": {"servers": [mine, str(REPO / "jupyter_resolve")], "bench": mine}}
    assert check_code(side, report) == [str(REPO / "jupyter_resolve")]


@pytest.mark.parametrize(
    ("base", "head", "slack", "flagged"),
    [
        (8.0, 11.9, 1.0, False),  # under x1.5
        (8.0, 12.5, 1.0, True),
        (0.2, 0.45, 0.05, True),
        (0.2, 0.4, 1.0, False),  # x2, but within the figure's noise
        (None, 5.0, 1.0, False),  # the base could not measure it
        (5.0, None, 1.0, False),  # reported as not measured, not as flagged
    ],
)
def test_a_gated_figure_fails_past_the_ratio_and_its_noise(
    base: float | None, head: float | None, slack: float, flagged: bool
) -> None:
    assert Row("figure", base, head, Gate("chain", slack), 1.5).flagged is flagged


def test_the_issues_figures_are_gated() -> None:
    assert {
        "chain_first_token_overhead_ms",
        "gateway_cpu_per_run_start_ms",
        "tool_roundtrip_p50_ms",
        "concurrent_100_first_token_p50_ms",
        "completion_overhead_ms",
        "extension_load_ms",
    } <= set(GATES)


def test_the_ratio_is_the_median_of_the_rounds_ratios() -> None:
    """A round's two runs are back to back: one slow spell of the machine in one round does
    not make a regression, though the medians of each side drift apart."""
    pairs = ((8.0, 8.5), (12.0, 13.0), (8.0, 30.0))
    row = Row("figure", 8.0, 13.0, Gate("chain", 1.0), 1.5, pairs=pairs)
    assert row.ratio == pytest.approx(13.0 / 12.0) and not row.flagged
    slowed = Row("figure", 8.0, 20.0, Gate("chain", 1.0), 1.5, pairs=((8.0, 20.0), (9.0, 21.0)))
    assert slowed.flagged
