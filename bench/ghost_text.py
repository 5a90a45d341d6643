"""Keystroke to ghost text (issue 47.4), the browser's completion path: ``bench/ghost_text.mjs``
runs a real JupyterLab (the browser tests' launcher, ``tests/browser/lab.mjs``) and chromium,
types in a notebook cell and times, inside the page, the keystroke to the ghost text of the
completion it asked for (the scripted model: no provider time in it).

- ``ghost_text_ms``: the median of 5 (quick) / 15 (full) keystrokes, after a warm-up;
- its floor ``ghost_text_floor_ms``: what the path costs with none of ours: the keystroke's echo
  in the editor (``ghost_text_echo_ms``), the panel's debounce before it asks
  (``ghost_text_debounce_ms``, its setting) and one authenticated GET from the page to the same
  server (``ghost_text_request_ms``);
- ``ghost_text_over_floor_ms``: the difference;
- ``ghost_text_completion_request_ms``: the completion request's own duration in the page
  (resource timing), beside the GET's.

Needs Node.js, the panel's node_modules (``make setup``) and ``/usr/bin/chromium``; without
them the figure is not measured, nor in a quick run unless ``--only ghost_text`` names it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .core import REPO, BenchError, Context, Figure, NotMeasured, median

SCRIPT = REPO / "bench" / "ghost_text.mjs"
TIMEOUT_S = 600


def ghost_text(ctx: Context) -> list[Figure]:
    if ctx.quick and "ghost_text" not in ctx.named:
        raise NotMeasured("a full run's figure (a JupyterLab and chromium); --only ghost_text")
    node = shutil.which("node")
    if node is None or not Path("/usr/bin/chromium").exists():
        raise NotMeasured("needs Node.js and /usr/bin/chromium (make setup)")
    if not (REPO / "labextension" / "node_modules" / "playwright-core").is_dir():
        raise NotMeasured("needs the panel's node_modules (make setup)")
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    if ctx.repo != REPO:  # a compared side: its jupyter_resolve first (the panel stays this one)
        env["PYTHONPATH"] = str(ctx.repo)
    samples = ctx.repeats(5, 15)
    done = subprocess.run(
        [node, str(SCRIPT), "--samples", str(samples)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        tail = done.stderr[-2000:]
        raise BenchError(f"bench/ghost_text.mjs: exit status {done.returncode}:\n{tail}")
    found = json.loads(lines[-1])
    ghost, echo, request = (median(found[k]) for k in ("ghost_text_ms", "echo_ms", "request_ms"))
    debounce = float(found["debounce_ms"])
    floor = echo + debounce + request
    completion = median(found["completion_ms"]) if found.get("completion_ms") else None
    return [
        Figure(
            "ghost_text_ms",
            ghost,
            "ms",
            note=f"keystroke to ghost text in the page, median of {samples}",
            floor="ghost_text_floor_ms",
        ),
        Figure("ghost_text_floor_ms", floor, "ms", note="echo + debounce + one GET"),
        Figure("ghost_text_over_floor_ms", ghost - floor, "ms"),
        Figure("ghost_text_echo_ms", echo, "ms", note="the keystroke in the editor"),
        Figure("ghost_text_debounce_ms", debounce, "ms", note="the panel's setting"),
        Figure("ghost_text_request_ms", request, "ms", note="GET api/status from the page"),
        *_completion(completion),
    ]


def _completion(completion: float | None) -> list[Figure]:
    if completion is None:  # the browser reported no timing for it
        return []
    return [
        Figure(
            "ghost_text_completion_request_ms",
            completion,
            "ms",
            note="POST resolve/api/completion in the page (resource timing)",
            floor="ghost_text_request_ms",
        )
    ]
