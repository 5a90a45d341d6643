"""The package's layout, read from its source with ``ast`` (nothing is imported): no import
cycle among jupyter_resolve modules (``TYPE_CHECKING`` and function-local imports count), none
among its subpackages and top-level modules either, no module over 400 lines, no function over
80, no service importing a handler, and ``contracts/`` pure — no I/O library, nothing of the
package outside ``contracts/`` (issues 15, 32).

The layers, lowest first; a layer imports only the ones below it:

- ``contracts`` (pure), ``_version``;
- ``providers``, ``runtime``, ``scratch``, ``souls``; then ``config_models``, ``config``;
  ``artifacts``;
- ``tools``: the catalogue, the dispatcher and the executors (scratch kernel, web);
- ``runs``: a run and everything it owns — its start (one ``RunRequest``), its tool calls
  (gate, budget, approval, ``tool.*`` events), its rounds' fitting, its notes, tasks;
- ``notebook``, ``peer``, ``mcp``: the user's notebook and the protocol edges, each taking a
  narrow ``Protocol`` of what it needs (``NotebookHost``, ``JobHost``, ``WorkbenchHost``),
  never the gateway;
- ``catalogue`` (the server's tools) and ``launcher`` (starts runs for every edge), ``wiring``
  (the services built, each with its collaborators), then ``gateway`` (them, started and
  stopped);
- every service's handlers (``runs/handlers.py``, ``artifacts/handlers.py``... and
  ``gateway_handlers``) as one layer, whatever folder they sit in, on the shared plumbing of
  ``handlers/`` (which imports only ``contracts`` and ``config``); then ``extension``; ``cli``
  and ``magics`` (which reads the notebook's inspector) stand apart.
"""

from __future__ import annotations

import ast
from itertools import pairwise
from pathlib import Path

import jupyter_resolve
import kernel_tools

PACKAGE = Path(jupyter_resolve.__file__).parent
MAX_LINES = 400
MAX_FUNCTION_LINES = 80
IO_MODULES = {
    "tornado",
    "httpx",
    "jupyter_client",
    "jupyter_server",
    "jupyter_core",
    "asyncio",
    "subprocess",
    "socket",
    "sqlite3",
    "shutil",
    "os",
    "pathlib",
    "io",
    "tempfile",
}
IO_CALLS = {"open"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if "bin" not in p.parts[-2:-1]}


def imports(path: Path) -> set[str]:
    """Every module ``path`` imports, anywhere in it (absolute names)."""
    name = module_name(path)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def package_graph() -> dict[str, set[str]]:
    """Module → the package modules it imports (an imported name that is a module counts)."""
    known = modules()
    return {
        name: {m for m in imports(path) if m in known and m != name} for name, path in known.items()
    }


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of ``graph`` as a path that comes back to its start, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_no_import_cycle() -> None:
    graph = package_graph()
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


WEB = "jupyter_resolve.<web>"
"""The layer of every service's handlers: beside their service on disk (``runs/handlers.py``,
as jupyter_server keeps ``services/kernels/handlers.py``), above every service in the imports."""


def is_handler_module(module: str) -> bool:
    """A module of handlers: ``<service>/handlers.py``, or the gateway's own (the hub service,
    a process of its own, keeps its handlers in its own unit)."""
    if module.startswith("jupyter_resolve.hub"):
        return False
    return module.endswith(".handlers") or module == "jupyter_resolve.gateway_handlers"


def unit_of(module: str) -> str:
    """The subpackage or top-level module ``module`` belongs to (``jupyter_resolve.runs``,
    ``jupyter_resolve.gateway``), or :data:`WEB` for a handlers module; the package's own
    ``__init__`` is ``jupyter_resolve``."""
    if is_handler_module(module) and module != "jupyter_resolve.handlers":
        return WEB
    return ".".join(module.split(".")[:2])


def unit_graph() -> dict[str, set[str]]:
    """The module graph collapsed to subpackages and top-level modules."""
    graph: dict[str, set[str]] = {}
    for name, deps in package_graph().items():
        unit = unit_of(name)
        graph.setdefault(unit, set()).update(unit_of(d) for d in deps if unit_of(d) != unit)
    return graph


def test_no_subpackage_cycle() -> None:
    """A subpackage is one layer (see the docstring above): no loop through two of them."""
    cycle = find_cycle(unit_graph())
    edges = package_graph()
    behind = [  # the module imports behind each edge of the loop
        f"\n  {a} -> {b}: "
        + ", ".join(
            sorted(
                f"{m} -> {d}"
                for m, deps in edges.items()
                if unit_of(m) == a
                for d in deps
                if unit_of(d) == b
            )
        )
        for a, b in pairwise(cycle or [])
    ]
    assert cycle is None, "subpackage cycle: " + " -> ".join(cycle or []) + "".join(behind)


def test_no_function_over_80_lines() -> None:
    """In ``jupyter_resolve/`` and ``kernel_tools/``: a function's lines, from ``def`` to its
    last line (decorators not counted)."""
    long = {}
    for root in (PACKAGE, Path(kernel_tools.__file__).parent):
        for path in sorted(root.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    n = (node.end_lineno or node.lineno) - node.lineno + 1
                    if n > MAX_FUNCTION_LINES:
                        long[f"{path.relative_to(root.parent)}:{node.name}"] = n
    assert long == {}


def test_services_import_no_handler() -> None:
    """Only the extension (which wires routes) and handlers import a handlers module or the
    handlers' shared plumbing (``handlers/``)."""
    plumbing = "jupyter_resolve.handlers"
    wrong = sorted(
        f"{name} imports {dep}"
        for name, deps in package_graph().items()
        if unit_of(name) not in (WEB, plumbing)
        and name not in ("jupyter_resolve.extension", "jupyter_resolve.routes")
        for dep in deps
        if unit_of(dep) in (WEB, plumbing)
    )
    assert wrong == []


def test_handlers_live_beside_their_services() -> None:
    """``handlers/`` holds only what every handler shares (issue 45.3): no route of a service
    is declared there (the disabled extension's answers aside)."""
    declared = sorted(
        name
        for name, path in modules().items()
        if name.startswith("jupyter_resolve.handlers.")
        and name != "jupyter_resolve.handlers.disabled"
        and "\nroutes" in "\n" + path.read_text(encoding="utf-8")
    )
    assert declared == []


def test_no_module_over_400_lines() -> None:
    long = {
        name: n
        for name, path in modules().items()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def test_contracts_are_pure() -> None:
    """``contracts/`` imports the standard library (no I/O) and pydantic, and of the package
    only ``contracts/``; it calls no ``open``."""
    problems = []
    for name, path in modules().items():
        if not name.startswith("jupyter_resolve.contracts"):
            continue
        for module in imports(path):
            top = module.split(".")[0]
            if top in IO_MODULES:
                problems.append(f"{name} imports {module}")
            elif top == "jupyter_resolve" and not module.startswith("jupyter_resolve.contracts"):
                problems.append(f"{name} imports {module}")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in IO_CALLS:
                problems.append(f"{name} calls {node.func.id}()")  # type: ignore[attr-defined]
            if isinstance(node, ast.Attribute) and node.attr in ("read_text", "read_bytes"):
                problems.append(f"{name} reads a file (.{node.attr})")
    assert problems == []


def test_contracts_import_only_what_is_allowed() -> None:
    """Beyond the package's own contracts: the standard library and pydantic."""
    import sys

    allowed = set(sys.stdlib_module_names) | {"pydantic", "__future__"}
    problems = [
        f"{name} imports {module}"
        for name, path in modules().items()
        if name.startswith("jupyter_resolve.contracts")
        for module in imports(path)
        if module.split(".")[0] not in allowed | {"jupyter_resolve"}
    ]
    assert problems == []
