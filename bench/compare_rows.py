"""The comparison's figures: each side's runs, and per figure both sides' medians, the
rounds' pairs, the ratio and whether a gated figure is past its threshold (bench/compare.py)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .metrics import GATES, Gate


@dataclass
class Side:
    """One side of a comparison: a tree, the folder its bench runs in, what it measured."""

    name: str  # "base" or "head"
    tree: Path
    label: str  # the commit, or "working tree"
    root: Path = Path()
    runs: list[dict[str, Any]] = field(default_factory=list)
    loaded: dict[str, set[str]] = field(default_factory=dict)  # where its code came from

    @property
    def runtime(self) -> Path:
        return self.tree / "native" / "build" / "agent-httpd"

    def values(self, figure: str) -> list[float]:
        return [run["metrics"][figure] for run in self.runs if figure in run.get("metrics", {})]

    def median(self, figure: str) -> float | None:
        values = self.values(figure)
        return float(statistics.median(values)) if values else None


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
