"""``%resolve status`` against a server whose provider does not answer (issue 30.6): not ok,
and the provider's line says why and which setting to change. A real server process on an
OpenAI-compatible provider at a loopback port nothing listens on, a terminal IPython."""

from __future__ import annotations

from pathlib import Path

from tests.jupyter_resolve.magics.server import running_server
from tests.jupyter_resolve.magics.test_magics_live import ipython
from tests.launcher import free_port


def test_status_says_the_provider_does_not_answer(tmp_path: Path) -> None:
    base_url = f"http://127.0.0.1:{free_port()}/v1"
    args = ("--Resolve.provider=openai", f"--Resolve.base_url={base_url}", "--Resolve.model=m")
    with running_server(tmp_path / "server", *args) as server:
        done = ipython(
            "%load_ext jupyter_resolve\n%resolve status\n", server.kernel_env(), tmp_path
        )
    out = done.stdout
    assert done.returncode == 0, done.stderr + out
    assert f"**jupyter-resolve** 0.1.0 at {server.url} — **not ok**" in out
    said = f"- provider: openai (m) — nothing answers at {base_url}: connection refused"
    assert f"{said} (c.Resolve.base_url)" in out
