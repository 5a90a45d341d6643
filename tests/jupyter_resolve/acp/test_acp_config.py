"""The pure parts around external agents: their configuration, the path rule of the client
side, a chat body's ``agent``, and ``%resolve --agent``."""

from __future__ import annotations

from pathlib import Path

import pytest
from IPython.core.error import UsageError
from pydantic import ValidationError
from traitlets import TraitError

from jupyter_resolve.acp.client import FsRefused, is_notebook, lines_of, server_paths
from jupyter_resolve.config import Resolve
from jupyter_resolve.contracts.acp_agents import WITHHELD, parse_agents, redact
from jupyter_resolve.contracts.bodies import ChatRequest
from jupyter_resolve.magics.line import parse_options


def test_agents_are_checked_and_errors_never_show_a_value() -> None:
    agents = parse_agents({"oc": {"command": ["opencode", "acp"], "env": {"KEY": "s3cr3t-v"}}})
    assert agents["oc"].command == ["opencode", "acp"] and agents["oc"].description == ""
    for bad, where in [
        ({"no good": {"command": ["x"]}}, "not an agent name"),
        ({"a": {"env": {}}}, "needs 'command'"),
        ({"a": {"command": []}}, "acp_agents['a'].command"),
        ({"a": {"command": ["x"], "env": {"1X": "s3cr3t-v"}}}, "acp_agents['a'].env"),
        ({"a": {"command": ["x"], "shell": True}}, "acp_agents['a'].shell"),
    ]:
        with pytest.raises(ValueError, match="acp_agents") as caught:
            parse_agents(bad)
        assert where in str(caught.value) and "s3cr3t-v" not in str(caught.value)
    with pytest.raises((TraitError, ValueError), match="acp_agents"):  # the extension says why
        Resolve(acp_agents={"a": {"command": []}})
    assert Resolve().acp_terminal is False and Resolve().acp_agents == {}


def test_redaction_withholds_env_values() -> None:
    assert redact("key=s3cr3t-value!", ["s3cr3t-value"]) == f"key={WITHHELD}!"


ROOT = Path("/srv/root")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/srv/root/a.txt", "a.txt"),
        ("/srv/root/sub/./b.txt", "sub/b.txt"),
        ("/srv/root/sub/../c.txt", "c.txt"),
    ],
)
def test_paths_inside_the_root(path: str, expected: str) -> None:
    assert server_paths(ROOT, path) == (expected, expected)


@pytest.mark.parametrize(
    "path",
    ["/srv/root", "/srv/root/..", "/srv/root/../x", "/srv/rooty/x", "/etc/passwd", "rel.txt", ""],
)
def test_paths_outside_the_root_are_refused(path: str) -> None:
    with pytest.raises(FsRefused):
        server_paths(ROOT, path)


def test_links_are_followed_to_their_real_path(tmp_path: Path) -> None:
    """Issue 44.3: a link inside the root that leads outside is refused; one to a notebook
    names the notebook (whose file is then never written, whatever the link is called)."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    (root / "analysis.ipynb").write_text("{}")
    (root / "out").symlink_to(outside)
    (root / "leak.txt").symlink_to(outside / "secret.txt")
    (root / "dangling.txt").symlink_to(outside / "new.txt")
    (root / "notes.txt").symlink_to(root / "analysis.ipynb")
    (root / "sub" / "up").symlink_to(root)
    for path in ("out/secret.txt", "leak.txt", "dangling.txt", "out/new.txt"):
        with pytest.raises(FsRefused, match="leads outside the server root"):
            server_paths(root, f"{root}/{path}")
    assert server_paths(root, f"{root}/notes.txt") == ("notes.txt", "analysis.ipynb")
    assert server_paths(root, f"{root}/sub/up/a.txt") == ("sub/up/a.txt", "a.txt")


def test_a_notebook_is_named_in_any_case() -> None:
    assert is_notebook("a.ipynb") and is_notebook("b/A.IPYNB") and is_notebook("c.IpYnB")
    assert not is_notebook("a.ipynb.txt") and not is_notebook("ipynb")


def test_lines_of() -> None:
    text = "a\nb\nc\n"
    assert lines_of(text, None, None) == text
    assert lines_of(text, 2, None) == "b\nc\n"
    assert lines_of(text, 2, 1) == "b\n"
    assert lines_of(text, None, 1) == "a\n"
    assert lines_of(text, 9, 1) == ""


def test_a_chat_body_names_an_agent() -> None:
    body = {"messages": [{"role": "user", "content": "hi"}]}
    assert ChatRequest.model_validate({**body, "agent": "open-code_2"}).agent == "open-code_2"
    assert ChatRequest.model_validate(body).agent is None
    for bad in ("../x", "", "a" * 40, "two words"):
        with pytest.raises(ValidationError):
            ChatRequest.model_validate({**body, "agent": bad})


def test_the_magic_takes_agent() -> None:
    options, rest = parse_options("--agent opencode what is x?")
    assert options.agent == "opencode" and rest == "what is x?"
    assert parse_options("--agent=claude --new")[0].agent == "claude"
    with pytest.raises(UsageError, match="--agent"):
        parse_options("--agent a --soul planner")
    with pytest.raises(UsageError, match="--agent"):
        parse_options("--agent a --task")
    with pytest.raises(UsageError, match="needs a value"):
        parse_options("--agent")
