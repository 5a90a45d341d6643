"""The hand-written reference pages name what the code serves: every public route, every event
type, every built-in tool. A route, event or tool added without its documentation fails here."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from jupyter_resolve.contracts.bodies import EVENT_TYPES
from jupyter_resolve.facade import handlers as facade_handlers
from jupyter_resolve.routes import public_routes as served_routes

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def template(pattern: str) -> str:
    """A tornado route pattern as the docs write it, every argument as ``{}``."""
    path = re.sub(r"\(\?P<\w+>[^)]*\)", "{}", pattern)
    return path.replace("\\.", ".")


def documented_paths(text: str) -> set[str]:
    """Every ``/resolve/...`` path in ``text``, arguments as ``{}``, queries left off."""
    paths = re.findall(r"(?:<base_url>|\s|`)(/?resolve/[A-Za-z0-9_./{}<>-]*)", text)
    found = set()
    for path in paths:
        path = "/" + path.lstrip("/")
        found.add(re.sub(r"\{[^}]*\}", "{}", path).rstrip("."))
    return found


def public_routes() -> list[str]:
    catch_all = {pattern for pattern, _ in facade_handlers.catch_all}
    patterns = [p for p, _ in served_routes() if p not in catch_all]
    return sorted({template(p) for p in patterns})


@pytest.mark.parametrize("route", public_routes())
def test_every_public_route_is_in_the_api_reference(route: str) -> None:
    text = (DOCS / "reference/api.md").read_text()
    assert route in documented_paths(text), f"{route} is not in docs/reference/api.md"


@pytest.mark.parametrize("event_type", [*EVENT_TYPES, "task.started", "task.completed"])
def test_every_event_type_is_in_the_events_reference(event_type: str) -> None:
    text = (DOCS / "reference/events.md").read_text()
    assert f"`{event_type}`" in text


def test_every_builtin_tool_is_in_the_tools_page() -> None:
    schemas = json.loads((ROOT / "kernel_tools/builtin-tools.json").read_text())
    tools = schemas if isinstance(schemas, list) else schemas["tools"]
    text = (DOCS / "user-guide/tools.md").read_text()
    missing = [tool["name"] for tool in tools if f"`{tool['name']}`" not in text]
    assert not missing, f"docs/user-guide/tools.md does not name {missing}"


def test_the_route_reader_sees_arguments_and_prefixes() -> None:
    assert template(r"/resolve/api/runs/(?P<run_id>[^/]+)/events") == "/resolve/api/runs/{}/events"
    text = "`GET /resolve/api/runs/{id}/events` and `<base_url>resolve/peer/a2a`."
    assert documented_paths(text) == {"/resolve/api/runs/{}/events", "/resolve/peer/a2a"}


# where the architecture page's short paths (`runs/start.py`, `sse.ts`) live
SHORT_PATH_ROOTS = (ROOT / "jupyter_resolve", ROOT / "labextension/src")
REPO_PREFIXES = (
    "jupyter_resolve/",
    "kernel_tools/",
    "native/",
    "labextension/",
    "tests/",
    "bench/",
    "docs/",
)


def code_paths(text: str) -> list[str]:
    """Paths written as code in a page: ``foo/bar.py``, ``tests/hub/``; placeholders left out."""
    tokens = re.findall(r"`([^`\s]+)`", text)
    return [t for t in tokens if re.fullmatch(r"[\w./-]+", t) and ("/" in t or "." in t)]


# made by a build, not kept in the repository (a clean clone has none before `make docs`)
BUILT_PREFIXES = ("docs/_build",)


def exists(path: str, short: bool) -> bool:
    if path.startswith(BUILT_PREFIXES):
        return True
    if path.startswith(REPO_PREFIXES):
        return (ROOT / path).exists()
    if not short or not re.search(r"\.(py|ts|tsx)$", path):
        return True  # not a path of this repository (a file of the user's, a URL path)
    if "/" in path:
        return any((root / path).exists() for root in SHORT_PATH_ROOTS)
    return any(any(root.rglob(path)) for root in SHORT_PATH_ROOTS)


@pytest.mark.parametrize(
    "page", sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md") if "_build" not in p.parts)
)
def test_the_files_a_page_names_exist(page: str) -> None:
    short = page in ("architecture.md", "contributing.md")
    text = (DOCS / page).read_text()
    missing = [p for p in code_paths(text) if not exists(p, short)]
    assert not missing, f"docs/{page} names files that are not in the repository: {missing}"


def test_the_readme_links_to_files_that_exist() -> None:
    text = (ROOT / "README.md").read_text()
    links = [link.split("#")[0] for link in re.findall(r"\]\(([^)\s]+)\)", text)]
    local = [link for link in links if link and not re.match(r"[a-z]+:", link)]
    assert local, "the README links into docs/"
    missing = [link for link in local if not (ROOT / link).exists()]
    assert not missing, f"README.md links to files that are not there: {missing}"


def test_every_field_of_run_started_is_in_the_events_reference() -> None:
    """The keys ``runs/start.py`` puts into ``run.started`` (and its ``context``), each named in
    the events page's entry for it."""
    import ast

    source = (ROOT / "jupyter_resolve/runs/start.py").read_text()
    keys: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.name in ("_started", "_record"):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Dict):
                    keys |= {k.value for k in inner.keys if isinstance(k, ast.Constant)}
                if isinstance(inner, ast.Subscript) and isinstance(inner.slice, ast.Constant):
                    keys.add(str(inner.slice.value))
    text = (DOCS / "reference/events.md").read_text()
    entry = text[text.index("`run.started`") : text.index("`text.delta`")]
    assert {"context", "ratio", "owner", "permissions"} <= keys

    def named(key: str) -> bool:  # in a field list ``{a, b?}`` or as `key`, not in a sentence
        return re.search(rf"(?<![\w.`]){re.escape(key)}\??[,}}`]", entry) is not None

    missing = sorted(k for k in keys if not named(k))
    assert not missing, f"docs/reference/events.md's run.started does not name {missing}"
