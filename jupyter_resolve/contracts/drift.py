"""The drift check (pure): the four tool lists must be equal (DESIGN 3.4).

1. schemas (``kernel_tools/builtin-tools.json``), 2. allow (the gateway's allow list),
3. bridge (the tools list the runtime is given: what the agent can see), 4. implementations
(the kernel_tools registry plus the gateway's trusted tools). Every pairwise difference is drift;
a capability implemented but not exposed is drift too, because then the agent cannot tell
"not exposed" from "does not exist".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import combinations

LIST_NAMES = ("schemas", "allow", "bridge", "implementations")


def compute_drift(lists: Mapping[str, Iterable[str]]) -> list[str]:
    """One sentence per tool that is in one list and missing from another, sorted."""
    sets = {name: set(lists[name]) for name in LIST_NAMES}
    problems: set[str] = set()
    for left, right in combinations(LIST_NAMES, 2):
        for tool in sorted(sets[left] - sets[right]):
            problems.add(f"'{tool}' is in {left} but not in {right}")
        for tool in sorted(sets[right] - sets[left]):
            problems.add(f"'{tool}' is in {right} but not in {left}")
    return sorted(problems)


def soul_drift(souls: Mapping[str, Iterable[str]], allowed: Iterable[str]) -> list[str]:
    """A soul may only name allowed tools."""
    allow = set(allowed)
    return sorted(
        f"soul '{soul}' names '{tool}', which is not an allowed tool"
        for soul, tools in souls.items()
        for tool in set(tools) - allow
    )
