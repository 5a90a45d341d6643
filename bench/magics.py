"""The ``%resolve`` magics: their load time, and a side by side with jupyter-ai's ``%%ai``.

``magics_import_ms``: ``%load_ext jupyter_resolve`` in a fresh ipykernel (started with
jupyter_client, as a notebook would), timed inside the kernel around
``get_ipython().run_line_magic('load_ext', 'jupyter_resolve')``; the median over a few fresh
kernels. Baseline, in the same kernels just before: ``%load_ext`` of an extension that does
nothing (the cost of the mechanism itself).

``vs_jupyter_ai_magic_ratio`` (full run only): wall time to the full answer for the same prompt
from the same fake OpenAI-compatible server (scenario ``long``, 2,000 chunks), in a plain
IPython shell of each side: ours is ``%%resolve --new`` through the gateway, theirs is
jupyter-ai's ``%%ai openai-chat-custom:fake-model`` with ``openai_api_base`` at the fake and
``streaming`` on (the fake only streams). jupyter-ai is installed by the bench into a venv of
its own (``~/.cache/jupyter-resolve-bench/jupyter-ai-venv``, reused when present), never into
the project's. Ratio = ours / theirs; below 1 means ours is faster.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from queue import Empty
from typing import Any

from .chain import PROMPT
from .core import BenchError, Context, Figure, Goal, NotMeasured, median

MAGICS_GOAL_MS = 100.0
NOOP_EXT = "resolve_bench_noop_ext"
TIMING = """
import sys, time
sys.path.insert(0, {folder!r})
ip = get_ipython()
t0 = time.perf_counter()
ip.run_line_magic("load_ext", {noop!r})
t1 = time.perf_counter()
ip.run_line_magic("load_ext", "jupyter_resolve")
t2 = time.perf_counter()
assert "resolve" in ip.magics_manager.magics["cell"], "no %%resolve cell magic after load_ext"
print("BENCH", (t1 - t0) * 1e3, (t2 - t1) * 1e3)
"""


def _one_kernel(folder: Path, env: dict[str, str]) -> tuple[float, float]:
    from jupyter_client.manager import KernelManager

    manager = KernelManager(kernel_name="python3")
    manager.start_kernel(env=env, cwd=str(folder))
    client = manager.client()
    try:
        client.start_channels()
        client.wait_for_ready(timeout=60)
        out: list[str] = []
        errors: list[str] = []

        def hook(msg: dict[str, Any]) -> None:
            kind, content = msg["header"]["msg_type"], msg["content"]
            if kind == "stream":
                out.append(content["text"])
            elif kind == "error":
                errors.append(f"{content['ename']}: {content['evalue']}")

        code = TIMING.format(folder=str(folder), noop=NOOP_EXT)
        try:
            client.execute_interactive(code, timeout=60, output_hook=hook)
        except (TimeoutError, Empty) as exc:
            raise BenchError("the kernel did not run the timing cell within 60 s") from exc
        if errors:
            raise NotMeasured(f"%load_ext jupyter_resolve failed in a fresh kernel: {errors[0]}")
        for line in "".join(out).splitlines():
            if line.startswith("BENCH "):
                _, noop, ours = line.split()
                return float(noop), float(ours)
        raise BenchError(f"the timing cell printed no figures: {''.join(out)[:300]!r}")
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def magics_import(ctx: Context) -> list[Figure]:
    try:
        import jupyter_client  # noqa: F401
    except ImportError as exc:
        raise NotMeasured(f"jupyter_client is not installed: {exc}") from exc
    runs = ctx.repeats(2, 5)
    folder = ctx.tmp() / "magics"
    folder.mkdir(exist_ok=True)
    (folder / f"{NOOP_EXT}.py").write_text("def load_ipython_extension(ipython):\n    pass\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ctx.repo), env.get("PYTHONPATH", "")) if p)
    for name in ("JUPYTER_RESOLVE_URL", "JUPYTER_RESOLVE_TOKEN", "PYTHONSTARTUP"):
        env.pop(name, None)
    noops: list[float] = []
    ours: list[float] = []
    for _ in range(runs):
        noop, mine = _one_kernel(folder, env)
        noops.append(noop)
        ours.append(mine)
    ctx.log(f"magics: load_ext jupyter_resolve {', '.join(f'{t:.1f}' for t in ours)} ms")
    return [
        Figure(
            "magics_import_ms",
            median(ours),
            "ms",
            Goal(MAGICS_GOAL_MS),
            note=f"%load_ext jupyter_resolve in a fresh kernel, median of {runs}",
        ),
        Figure(
            "magics_noop_load_ext_ms",
            median(noops),
            "ms",
            note="baseline: %load_ext of an empty extension, same kernels",
        ),
    ]


# -- side by side with jupyter-ai ------------------------------------------------------------

JUPYTER_AI = ("jupyter-ai-magics==2.31.7", "langchain-openai>=0.3,<0.4")
VENV = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
VENV = VENV / "jupyter-resolve-bench" / "jupyter-ai-venv"
DRIVER = """
import json, sys, time
from IPython.core.interactiveshell import InteractiveShell
ext, magic, line, reset, runs, out = sys.argv[1:7]
prompt = sys.stdin.read()
ip = InteractiveShell.instance()
ip.run_line_magic("load_ext", ext)
times, text = [], ""
for i in range(int(runs) + 1):  # the first is a warm-up
    if reset:
        ip.run_line_magic(magic, reset)
    start = time.perf_counter()
    result = ip.run_cell_magic(magic, line, prompt)
    elapsed = time.perf_counter() - start
    text = getattr(result, "text", None) or getattr(result, "data", None) or str(result)
    if i:
        times.append(elapsed * 1e3)
with open(out, "w") as f:
    json.dump({"times": times, "text": str(text)}, f)
"""


def _run(argv: list[str], timeout: float, **kw: Any) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout, check=False, **kw
        )
    except subprocess.TimeoutExpired as exc:
        raise NotMeasured(f"{' '.join(argv[:4])} ... took over {timeout:g} s") from exc


def jupyter_ai_python(ctx: Context) -> Path:
    """The separate venv's python, with jupyter-ai's magics installed (created when absent)."""
    python = VENV / "bin" / "python"
    check = [str(python), "-c", "import jupyter_ai_magics, langchain_openai"]
    if python.exists() and _run(check, 120).returncode == 0:
        return python
    ctx.log(f"installing {' '.join(JUPYTER_AI)} into {VENV} (once; reused afterwards)")
    VENV.parent.mkdir(parents=True, exist_ok=True)
    made = _run([sys.executable, "-m", "venv", "--clear", str(VENV)], 300)
    if made.returncode != 0:
        raise NotMeasured(f"python -m venv {VENV} failed: {made.stderr.strip()[-300:]}")
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *JUPYTER_AI]
    installed = _run(pip, 1200)
    if installed.returncode != 0:
        tail = [line for line in installed.stderr.splitlines() if "WARNING" not in line][-3:]
        raise NotMeasured(
            f"pip install {' '.join(JUPYTER_AI)} failed (no network to PyPI?): {' | '.join(tail)}"
        )
    done = _run(check, 120)
    if done.returncode != 0:
        raise NotMeasured(f"jupyter-ai installed but not importable: {done.stderr[-300:]}")
    return python


def _side(
    python: Path, ext: str, magic: str, line: str, reset: str, runs: int, env: dict[str, str]
) -> tuple[list[float], str]:
    with tempfile.TemporaryDirectory(prefix="resolve-bench-ai-") as folder:
        out = Path(folder) / "out.json"
        argv = [str(python), "-c", DRIVER, ext, magic, line, reset, str(runs), str(out)]
        done = _run(argv, 600, input=PROMPT, env=env, cwd=folder)
        if done.returncode != 0 or not out.exists():
            raise BenchError(
                f"%%{magic} in {python}: exit status {done.returncode}:\n{done.stderr[-1500:]}"
            )
        result = json.loads(out.read_text())
    return [float(t) for t in result["times"]], str(result["text"])


def vs_jupyter_ai(ctx: Context) -> list[Figure]:
    if ctx.quick:
        raise NotMeasured("full run only (installs jupyter-ai into a separate venv)")
    fake = ctx.fake()
    server = ctx.server()
    theirs_python = jupyter_ai_python(ctx)
    runs = 5
    expected_end = f"tok{fake.chunks - 1}"

    env = dict(os.environ)
    for name in ("PYTHONPATH", "PYTHONSTARTUP", "VIRTUAL_ENV"):
        env.pop(name, None)
    theirs_env = dict(env, OPENAI_API_KEY="sk-bench-not-a-real-key")
    theirs_env.pop("OPENAI_API_BASE", None)
    params = json.dumps(
        {"openai_api_base": fake.base_url, "streaming": True}, separators=(",", ":")
    )
    started = time.perf_counter()
    theirs, their_text = _side(
        theirs_python,
        "jupyter_ai_magics",
        "ai",
        f"openai-chat-custom:{fake.model} -m {params}",
        "reset",
        runs,
        theirs_env,
    )
    ours_env = dict(env, JUPYTER_RESOLVE_URL=server.url + "/", JUPYTER_RESOLVE_TOKEN=server.token)
    ours_env["PYTHONPATH"] = str(ctx.repo)
    ours, our_text = _side(
        Path(sys.executable), "jupyter_resolve", "resolve", "--new", "", runs, ours_env
    )
    for who, text in (("jupyter-ai", their_text), ("%%resolve", our_text)):
        if expected_end not in text[-40:]:
            raise BenchError(f"{who}'s answer is not the fake's full reply: ends {text[-80:]!r}")
    ctx.log(
        f"vs jupyter-ai: ours {median(ours):.0f} ms, theirs {median(theirs):.0f} ms "
        f"({time.perf_counter() - started:.0f} s)"
    )
    return [
        Figure(
            "vs_jupyter_ai_magic_ratio",
            median(ours) / median(theirs),
            "x",
            note=f"%%resolve / %%ai wall time to the full answer, medians of {runs}",
        ),
        Figure("resolve_magic_ms", median(ours), "ms", note="%%resolve --new, 2,000 chunks"),
        Figure(
            "jupyter_ai_magic_ms",
            median(theirs),
            "ms",
            note="%%ai openai-chat-custom, jupyter-ai-magics 2.31.7, same fake",
        ),
    ]
