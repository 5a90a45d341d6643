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


MCP_PREFIX = "mcp."


def without_mcp(names: Iterable[str]) -> list[str]:
    """The names that are not MCP tools (those are checked by :func:`mcp_drift`)."""
    return [n for n in names if not n.startswith(MCP_PREFIX)]


def mcp_drift(
    allowed: Iterable[str],
    souls: Mapping[str, Iterable[str]],
    discovered: Iterable[str],
    unlisted: Iterable[str] = (),
) -> list[str]:
    """The fifth list (DESIGN 9.3): the tools the configured MCP servers offer. An allowed or
    soul-named ``mcp.<server>.<tool>`` that no server offers is drift, unless its server is
    in ``unlisted`` (configured, tools not known yet: a health problem, not drift)."""
    offered, waiting, allow = set(discovered), set(unlisted), set(allowed)

    def missing(tool: str) -> bool:
        server = tool[len(MCP_PREFIX) :].partition(".")[0]
        return tool.startswith(MCP_PREFIX) and tool not in offered and server not in waiting

    problems = {
        f"'{tool}' is allowed but no configured MCP server offers it"
        for tool in allow
        if missing(tool)
    }
    for soul, tools in souls.items():
        for tool in set(tools):
            if missing(tool):
                problems.add(f"soul '{soul}' names '{tool}', which no configured MCP server offers")
            elif tool in offered and tool not in allow:
                problems.add(f"soul '{soul}' names '{tool}', which is not an allowed tool")
    return sorted(problems)
