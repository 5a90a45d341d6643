"""The permissions matrix (issue 44.1, DESIGN 10.1), the pure part: each builtin tool × each
subset of {contents read, contents write, kernels execute} × sandbox on and off — what a run is
offered, and what the sandbox of its scratch kernel mounts of the server root; and how each edge
that starts runs comes to its permissions. The real-server pass per edge is
``test_code_permissions.py``; two people on one server, ``test_two_people_code.py``.

The rule is written out here on purpose, from DESIGN 10.1, not read from the schemas the code
reads: a new builtin fails :func:`test_every_builtin_is_in_the_table` until someone says here
what it needs.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from jupyter_resolve.contracts.permissions import RunPermissions, permitted
from jupyter_resolve.scratch.sandbox import bwrap_prefix
from jupyter_resolve.tools.catalog import load_schemas, needs_table

CR, CW, KE = "contents_read", "contents_write", "kernels_execute"
ALL = {CR, CW, KE}
SUBSETS = [
    RunPermissions(contents_read=r, contents_write=w, kernels_execute=k)
    for r, w, k in itertools.product([False, True], repeat=3)
]


def subset_id(permissions: RunPermissions) -> str:
    return "+".join(n for n, v in permissions.model_dump().items() if v) or "none"


# DESIGN 10.1: what each builtin needs of its caller, sandboxed / unsandboxed.
NEEDS: dict[str, tuple[set[str], set[str]]] = {
    "python": (set(), ALL),  # unsandboxed its code runs as the server's user
    "shell": (set(), ALL),
    "read_file": (set(), set()),  # the session's own folders
    "write_file": (set(), set()),
    "edit_file": (set(), set()),
    "list_dir": (set(), set()),
    "search_files": (set(), set()),
    "notebook_read": ({CR}, {CR}),  # a notebook of the server root
    "web_fetch": (set(), set()),
    "subagents.delegate": (set(), set()),  # its child has its parent's permissions
    "artifacts.promote": (set(), set()),  # a person decides every promotion
    "notebook_variables": ({CR, KE}, {CR, KE}),  # the person's kernel
    "inspect_variable": ({CR, KE}, {CR, KE}),
    "snapshot_variable": ({CR, KE}, {CR, KE}),
    "notebook_propose": (ALL, ALL),
}


def offered(tool: str, permissions: RunPermissions, sandboxed: bool) -> bool:
    need = NEEDS[tool][0 if sandboxed else 1]
    return all(getattr(permissions, n) for n in need)


def test_every_builtin_is_in_the_table() -> None:
    assert sorted(s.name for s in load_schemas()) == sorted(NEEDS)


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandboxed", "unsandboxed"])
@pytest.mark.parametrize("permissions", SUBSETS, ids=subset_id)
@pytest.mark.parametrize("tool", sorted(NEEDS))
def test_a_run_is_offered_what_its_callers_permissions_allow(
    tool: str, permissions: RunPermissions, sandboxed: bool
) -> None:
    needs = needs_table(load_schemas(), sandboxed)
    assert (permitted([tool], permissions, needs) == [tool]) is offered(
        tool, permissions, sandboxed
    )


def layout(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "srv"
    session = root / ".resolve" / "sessions" / "s1"
    for folder in (session / "work", session / "context", root / "proj" / ".git", root / "a/b"):
        folder.mkdir(parents=True)
    (root / "secret.ipynb").write_text("{}")
    (root / ".env").write_text("TOKEN=x")
    (root / "a" / "b" / ".token").write_text("x")
    (root / "a" / ".cache").mkdir()
    (root / "a" / "link").symlink_to(root / "proj")
    return root, session


@pytest.mark.parametrize("permissions", SUBSETS, ids=subset_id)
def test_the_sandbox_mounts_the_root_only_for_a_caller_who_may_read_contents(
    tmp_path: Path, permissions: RunPermissions
) -> None:
    """What python and shell reach, sandboxed: with contents read the root, read-only, every
    hidden entry at any depth emptied; without it, no file of the root at all (an empty folder
    with only the session put back)."""
    root, session = layout(tmp_path)
    argv = bwrap_prefix(
        session,
        root,
        False,
        reads_root=permissions.contents_read,
        state_dir=root / ".resolve",
    )
    pairs = list(itertools.pairwise(argv))
    shown, emptied = ("--ro-bind", str(root)), ("--tmpfs", str(root))
    assert ("--bind", str(session)) in pairs
    if not permissions.contents_read:
        assert emptied in pairs and shown not in pairs
        assert pairs.index(emptied) < pairs.index(("--bind", str(session)))
        return
    assert shown in pairs
    for folder in (root / "proj" / ".git", root / "a" / ".cache", root / ".resolve"):
        assert ("--tmpfs", str(folder)) in pairs, folder
        assert pairs.index(shown) < pairs.index(("--tmpfs", str(folder)))
    for file in (root / ".env", root / "a" / "b" / ".token"):
        assert ("/dev/null", str(file)) in pairs, file
    assert not any(str(root / "a" / "link") in arg for arg in argv)  # never mounted over


def test_a_root_too_big_to_walk_is_not_mounted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the walk's bounds a hidden entry could be missed: the root stays out instead."""
    root, session = layout(tmp_path)
    monkeypatch.setattr("jupyter_resolve.scratch.sandbox.MAX_HIDDEN_ENTRIES", 2)
    argv = bwrap_prefix(session, root, False, reads_root=True, state_dir=root / ".resolve")
    pairs = list(itertools.pairwise(argv))
    assert ("--tmpfs", str(root)) in pairs and ("--ro-bind", str(root)) not in pairs


# How each edge that starts runs comes to its permissions (DESIGN 10.1); the real passes check
# the Authorizer's answers end up in run.started.permissions.
@pytest.mark.parametrize("permissions", SUBSETS, ids=subset_id)
def test_tasks_and_delegations_inherit_and_never_exceed(permissions: RunPermissions) -> None:
    for parent in SUBSETS:
        child = permissions.within(parent)
        assert all(
            not getattr(child, n) or (getattr(permissions, n) and getattr(parent, n)) for n in ALL
        )
    assert permissions.within(permissions) == permissions  # a delegation: its parent's


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandboxed", "unsandboxed"])
@pytest.mark.parametrize("tool", sorted(NEEDS))
def test_a_peers_grant_implies_no_more_than_its_tools_data_needs(
    tool: str, sandboxed: bool
) -> None:
    """A signed peer's run has what its grant implies: granted python is no contents read (its
    sandbox mounts no root), and unsandboxed an exec grant is refused before any run (jobs)."""
    schemas = load_schemas()
    implied = RunPermissions.for_tools([tool], needs_table(schemas))
    assert {n for n, v in implied.model_dump().items() if v} == NEEDS[tool][0]
    rules = {s.name: s.peer_use() for s in schemas}
    assert (rules[tool] == "sandboxed") is (tool in {"python", "shell", "subagents.delegate"})
    if sandboxed or rules[tool] == "yes":
        needs = needs_table(schemas, sandboxed)
        assert permitted([tool], implied, needs) == [tool]
