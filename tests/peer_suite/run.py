"""jupyter_server's own tests, run twice: without jupyter_resolve, and with it loaded in every
server they make (resolve_everywhere.py). A good guest changes no result: the run fails when the
two passes fail different tests, or collect different ones.

    .venv/bin/python tests/peer_suite/run.py      (`make test-peer-suite`; sources: `make setup`)

jupyter_server's failures that do not depend on us (running as root, a newer tornado's
deprecations, ...) show in both passes and cancel out. Logs and JUnit files go to
.venv/peer-suite/logs/.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import jupyter_server

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent

# At least the kernels' service, the server app (its setup aborted by bad config, its stop),
# and the extension machinery that loads and stops us.
SELECTION = ("tests/services/kernels", "tests/test_serverapp.py", "tests/extension")

# Tests whose result depends on which extensions are loaded, by design.
EXPECTED_TO_DIFFER = {
    # asserts the exact set of loaded extension apps and of their stop log lines
    "tests.extension.test_app::test_stop_extension",
}


def failing(junit: Path) -> tuple[set[str], set[str]]:
    """The ids of the tests run, and of those that failed or errored, from a JUnit file."""
    ran: set[str] = set()
    failed: set[str] = set()
    for case in ET.parse(junit).getroot().iter("testcase"):
        test_id = f"{case.get('classname')}::{case.get('name')}"
        ran.add(test_id)
        if case.find("failure") is not None or case.find("error") is not None:
            failed.add(test_id)
    return ran, failed


def run_pass(name: str, tree: Path, venv: Path, logs: Path) -> tuple[set[str], set[str]]:
    """One pytest run of the selection; ``with`` loads jupyter_resolve in every server."""
    junit = logs / f"{name}.xml"
    junit.unlink(missing_ok=True)
    env = {
        **os.environ,
        "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": os.pathsep.join([str(venv / "peer-suite" / "plugins"), str(HERE)]),
    }
    env.pop("JUPYTER_RESOLVE_URL", None)
    env.pop("JUPYTER_RESOLVE_TOKEN", None)
    plugin = ["-p", "resolve_everywhere"] if name == "with" else []
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *plugin]
    argv += [f"--junitxml={junit}", *SELECTION]
    began = time.monotonic()
    with open(logs / f"{name}.log", "wb") as log:
        code = subprocess.run(
            argv, cwd=tree, env=env, stdout=log, stderr=subprocess.STDOUT
        ).returncode
    if code not in (0, 1) or not junit.exists():  # 1: some tests failed; more: the run broke
        raise SystemExit(
            f"peer suite: the '{name}' pass broke (pytest exit {code}); see {log.name}"
        )
    ran, failed = failing(junit)
    print(
        f"peer suite, {name} jupyter_resolve: {len(ran)} tests, {len(failed)} failing "
        f"({time.monotonic() - began:.0f} s)",
        flush=True,
    )
    return ran, failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", type=Path, default=REPO / ".venv")
    venv = parser.parse_args().venv.resolve()
    tree = venv / "peer-suite" / f"jupyter_server-{jupyter_server.__version__}"
    if not (tree / ".complete").exists():
        print(f"peer suite: no {tree}; run `make setup`", file=sys.stderr)
        return 2
    logs = venv / "peer-suite" / "logs"
    logs.mkdir(exist_ok=True)
    ran_without, without = run_pass("without", tree, venv, logs)
    ran_with, with_ = run_pass("with", tree, venv, logs)
    problems = []
    for label, ids in (
        ("fail only with jupyter_resolve", with_ - without),
        ("fail only without it", without - with_),
        ("ran in one pass only", ran_with ^ ran_without),
    ):
        ids -= EXPECTED_TO_DIFFER
        problems += [f"  {label}: {test_id}" for test_id in sorted(ids)]
    if problems:
        print("peer suite: the results differ (logs in " + str(logs) + ")", *problems, sep="\n")
        return 1
    print(f"peer suite: the same {len(without - EXPECTED_TO_DIFFER)} failures with and without")
    return 0


if __name__ == "__main__":
    sys.exit(main())
