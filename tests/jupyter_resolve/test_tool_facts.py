"""One fact, one place (issue 45.1): a builtin tool's facts are its schema's
(``kernel_tools/builtin-tools.json``), and only the modules that implement a tool name it.

The scan reads every module of ``jupyter_resolve/`` with ``ast`` and fails on a string literal
equal to a builtin tool's name outside :data:`NAMED_IN`, the modules that implement, drive or
render a tool (or use the word for something else), each with the names it may use and why. A new
hand-kept list (``FILE_TOOLS = ("read_file", ...)`` in any module, an extra name in an allowed
one) fails it; so does an entry here that no longer matches anything.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import jupyter_resolve
from jupyter_resolve.artifacts.provenance import STATEFUL
from jupyter_resolve.contracts.permissions import RunPermissions, permitted
from jupyter_resolve.peer.grants import sandboxed_only
from jupyter_resolve.tools.catalog import default_allow, load_schemas, needs_table
from jupyter_resolve.tools.toolset import ToolSet

PACKAGE = Path(jupyter_resolve.__file__).parent
SCHEMA_FILE = PACKAGE.parent / "kernel_tools" / "builtin-tools.json"

PROMOTE, PROPOSE, READ_NB = "artifacts.promote", "notebook_propose", "notebook_read"
NOTEBOOK_TOOLS = {"notebook_variables", "inspect_variable", "snapshot_variable", PROPOSE}

# module (relative to jupyter_resolve/) -> (the builtin names it may use, why)
NAMED_IN: dict[str, tuple[frozenset[str], str]] = {
    # implementations
    "runs/builtin_tools.py": (
        frozenset({"python", "shell", "web_fetch", PROMOTE, "subagents.delegate"}),
        "runs the kernel builtins and implements the run's trusted tools",
    ),
    "notebook/tools.py": (
        frozenset({*NOTEBOOK_TOOLS, READ_NB}),
        "implements the user's-notebook tools (and notebook_read through the contents manager)",
    ),
    "notebook/binding.py": (
        frozenset({"snapshot_variable"}),
        "python's binding in a notebook chat: it calls snapshot_variable for the mentions",
    ),
    "scratch/remote.py": (frozenset({READ_NB}), "the builtins in a kernel on a Jupyter gateway"),
    "artifacts/service.py": (frozenset({PROMOTE}), "implements artifacts.promote's store side"),
    # runs the gateway drives itself through a tool's implementation
    "mcp/propose.py": (frozenset({PROPOSE}), "an MCP proposal is a notebook_propose call"),
    "acp/notebook_write.py": (frozenset({PROPOSE}), "an agent's notebook write becomes proposals"),
    "acp/terminal.py": (frozenset({"shell"}), "terminal/* runs as the shell tool does"),
    # a model that calls tools (the offline provider's script)
    "providers/scripted.py": (frozenset({"python"}), "the offline model calls python"),
    "providers/demo.py": (frozenset({"python", PROMOTE, PROPOSE}), "the offline demo's calls"),
    # renders the python tool's code as Python
    "magics/history.py": (frozenset({"python"}), "shows python's code as Python"),
    "magics/render.py": (frozenset({"python"}), "shows python's code as Python"),
    "magics/run_markdown.py": (frozenset({"python"}), "shows python's code as Python"),
    "magics/view_model.py": (frozenset({"python"}), "shows python's code as Python"),
    "tools/replay.py": (
        frozenset({"python", "shell"}),
        "runs a reproduction's recorded calls in a fresh kernel, as runs/builtin_tools.py does",
    ),
    # renders a recorded call of python or shell: its code, its command
    "artifacts/provenance.py": (frozenset({"python", "shell"}), "what a call ran, as text"),
    "artifacts/crate.py": (frozenset({"python", "shell"}), "a step's code as a .py or .sh file"),
    "artifacts/reproduce.py": (frozenset({"python"}), "looks for what varies in python code"),
    # the tools a run offers, as a soul's list
    "providers/entries/local.py": (
        frozenset({"python", "notebook_propose", "notebook_read"}),
        "c.Resolve.local_tools' default: what a small local model's run offers",
    ),
    # the same word, another thing
    "artifacts/crate_build.py": (frozenset({"python"}), "the kernel's Python version"),
    "mcp/tools.py": (frozenset({READ_NB, PROPOSE}), "the MCP server's own tools of those names"),
    "contracts/completion.py": (frozenset({"python"}), "a cell's language"),
    "scratch/kernelspec.py": (frozenset({"python"}), "a kernelspec's language"),
    "kernel_gateway.py": (frozenset({"shell"}), "a kernel's shell channel"),
}


def builtin_names() -> set[str]:
    return {tool["name"] for tool in json.loads(SCHEMA_FILE.read_text())["tools"]}


def literals(source: str, names: set[str]) -> Iterator[tuple[int, str]]:
    """``(line, name)`` per string literal of ``source`` equal to one of ``names``."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
            yield node.lineno, node.value


def named(root: Path = PACKAGE) -> dict[str, set[tuple[int, str]]]:
    """Module (relative to ``root``) -> where it names a builtin tool."""
    names = builtin_names()
    found: dict[str, set[tuple[int, str]]] = {}
    for path in sorted(root.rglob("*.py")):
        hits = set(literals(path.read_text(encoding="utf-8"), names))
        if hits:
            found[path.relative_to(root).as_posix()] = hits
    return found


def unexpected(found: dict[str, set[tuple[int, str]]]) -> list[str]:
    allowed = {module: names for module, (names, _) in NAMED_IN.items()}
    return sorted(
        f"jupyter_resolve/{module}:{line}: {name!r}"
        for module, hits in found.items()
        for line, name in hits
        if name not in allowed.get(module, frozenset())
    )


def test_only_the_modules_that_implement_a_tool_name_it() -> None:
    problems = unexpected(named())
    assert problems == [], (
        "a builtin tool's name typed outside the modules that implement it: read the fact from "
        "its schema (tools/catalog.py: ToolSchema, ToolSet.having, needs_table) instead\n  "
        + "\n  ".join(problems)
    )


def test_every_allowance_is_still_used() -> None:
    found = {module: {name for _, name in hits} for module, hits in named().items()}
    stale = {
        module: sorted(names - found.get(module, set()))
        for module, (names, _) in NAMED_IN.items()
        if names - found.get(module, set())
    }
    assert stale == {}


def test_the_scan_catches_a_new_hand_kept_list(tmp_path: Path) -> None:
    (tmp_path / "contracts").mkdir()
    (tmp_path / "contracts" / "lists.py").write_text(
        'FILE_TOOLS = ("read_file", "write_file")\nNEEDS = {"notebook_read": ("x",)}\n'
    )
    (tmp_path / "notebook").mkdir()  # an implementing module growing a list of others' names
    (tmp_path / "notebook" / "tools.py").write_text('OTHERS = frozenset({"python", "shell"})\n')
    (tmp_path / "ok.py").write_text('"""python and shell in prose."""\nX = "python3"\n')
    assert unexpected(named(tmp_path)) == [
        "jupyter_resolve/contracts/lists.py:1: 'read_file'",
        "jupyter_resolve/contracts/lists.py:1: 'write_file'",
        "jupyter_resolve/contracts/lists.py:2: 'notebook_read'",
        "jupyter_resolve/notebook/tools.py:1: 'python'",
        "jupyter_resolve/notebook/tools.py:1: 'shell'",
    ]


def test_what_the_lists_were_is_what_the_schemas_say() -> None:
    """The facts that the hand-kept lists held before (same behaviour), now read off the
    schemas: the default allow list, the gateway's own tools, the permission table, the
    file-tool discipline, the always-asked tool, the peer's sandbox rule."""
    schemas = load_schemas()
    names = [s.name for s in schemas]
    assert default_allow(schemas) == names
    assert {s.name for s in schemas if s.runs_in == "gateway"} == {
        "web_fetch",
        "subagents.delegate",
        PROMOTE,
        *NOTEBOOK_TOOLS,
    }
    assert {n: v for n, v in needs_table(schemas).items() if v} == {
        READ_NB: ("contents_read",),
        "notebook_variables": ("contents_read", "kernels_execute"),
        "inspect_variable": ("contents_read", "kernels_execute"),
        "snapshot_variable": ("contents_read", "kernels_execute"),
        PROPOSE: ("contents_read", "contents_write", "kernels_execute"),
    }
    toolset = ToolSet(schemas, names, lambda _: [])
    assert toolset.having("file_tool", names) == [
        "read_file",
        "write_file",
        "edit_file",
        "list_dir",
        "search_files",
    ]
    assert toolset.having("always_ask", names) == [PROMOTE]
    assert toolset.having("notebook_folder", names) == ["python"]
    assert toolset.having("loads_mentions", names) == ["snapshot_variable"]
    rules = {s.name: s.peer_use() for s in schemas}
    assert sandboxed_only(names, rules) == ["python", "shell", "subagents.delegate"]
    assert STATEFUL == {"python", "shell", "write_file", "edit_file"}  # a provenance's steps
    assert sandboxed_only(["mcp.x.y"], rules) == ["mcp.x.y"]  # unknown: the worst


@pytest.mark.parametrize(
    ("permissions", "gated"),
    [
        (RunPermissions(), {READ_NB, *NOTEBOOK_TOOLS}),
        (RunPermissions(contents_read=True), NOTEBOOK_TOOLS),
        (RunPermissions(contents_read=True, kernels_execute=True), {PROPOSE}),
        (RunPermissions.full(), set()),
    ],
)
def test_permitted_reads_the_needs_off_the_schemas(
    permissions: RunPermissions, gated: set[str]
) -> None:
    schemas = load_schemas()
    names = [s.name for s in schemas]
    offered = permitted(names, permissions, needs_table(schemas))
    assert set(names) - set(offered) == gated
    peer = RunPermissions.for_tools([READ_NB, "python"], needs_table(schemas))
    assert peer == RunPermissions(contents_read=True)
