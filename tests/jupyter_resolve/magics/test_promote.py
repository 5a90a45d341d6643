"""``%resolve promote`` from a kernel: an Out[n], a variable, --last and a file, against a real
server; and the parser alone."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from IPython.core.error import UsageError

from jupyter_resolve.magics.promote import parse_promote
from tests.jupyter_resolve.magics.server import RunningServer, running_server
from tests.jupyter_resolve.magics.test_magics_live import ipython


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with running_server(tmp_path_factory.mktemp("promote")) as server:
        yield server


def test_parse_promote_forms() -> None:
    assert parse_promote("Out[3] --title 'My fit'") == ("out", "Out[3]", {"title": "My fit"})
    assert parse_promote("df --note n") == ("var", "df", {"note": "n"})
    assert parse_promote("--last") == ("last", None, {})
    assert parse_promote("--file data/a.csv --title T") == ("file", "data/a.csv", {"title": "T"})
    for bad in ("", "--title", "a b", "--bogus"):
        with pytest.raises(UsageError):
            parse_promote(bad)


def test_promote_out_var_last_and_file(live: RunningServer, tmp_path: Path) -> None:
    root = Path(live.root)
    (root / "notes.txt").write_text("a scratch note")
    script = """\
%load_ext jupyter_resolve
from IPython.display import SVG
x = {"answer": 42}
get_ipython().run_cell("6 * 7", store_history=True)
%resolve promote Out[1] --title "The answer"
print("OUT", _resolve_artifact["media_type"], _resolve_artifact["title"])
first = _resolve_artifact["id"]
%resolve promote Out[1] --title "The answer"
print("SAME", _resolve_artifact["id"] == first)
%resolve promote x
print("VAR", _resolve_artifact["media_type"], _resolve_artifact["source"]["label"])
%resolve promote --file notes.txt
print("FILE", _resolve_artifact["size"])
%resolve promote nothing_here
"""
    done = ipython(script, live.kernel_env(), tmp_path)
    out = done.stdout + done.stderr
    assert "OUT text/plain The answer" in out, out
    assert "SAME True" in out
    assert "VAR text/plain x" in out
    assert "FILE 14" in out
    assert "no variable 'nothing_here'" in out
    listing = httpx.get(
        f"{live.url}resolve/api/artifacts", headers={"Authorization": f"token {live.token}"}
    ).json()
    artifacts = listing.get("artifacts", listing)
    assert len(artifacts) == 3, json.dumps(artifacts)[:500]
