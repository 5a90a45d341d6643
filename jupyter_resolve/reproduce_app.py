"""``jupyter resolve artifacts reproduce ID``: run the calls that made an artifact again in a
fresh scratch kernel of this machine and compare (artifacts/reproduce.py). A command of its own,
like cli.py, since it needs the scratch kernels and the tools' executors (tools/replay.py),
which sit above the artifact store; ``artifacts/app.py`` names it by its import string.

Run in the server root (or with ``--Resolve.state_dir`` and ``--Resolve.artifacts_dir``). The
person running it is the server's user: the replay has every permission, within
``c.Resolve.sandbox`` as the server would apply it. Exit 0 when reproduced, 1 when not, 2 when it
could not be tried.
"""

from __future__ import annotations

import asyncio
import getpass
import json
from pathlib import Path

from .artifacts.app import StoreApp
from .artifacts.service import Artifacts
from .config import Resolve
from .contracts.errors import ResolveError
from .contracts.permissions import RunPermissions
from .scratch import sandbox as scratch_sandbox
from .scratch.pool import ScratchKernels
from .tools.replay import Replayer


class ReproduceApp(StoreApp):
    name = "jupyter-resolve-artifacts-reproduce"
    description = "Run the calls that made artifact ID again in a fresh scratch kernel and compare."

    def start(self) -> None:
        (art_id,) = self.args(("id",))
        config = Resolve(parent=self)
        state, root = self.state_dir(), Path.cwd()
        kernels = ScratchKernels(
            state / "sessions",
            root,
            self.log,
            sandbox=scratch_sandbox.effective_sandbox(config.sandbox, self.log),
            network=config.sandbox_network,
            kernel_name=config.scratch_kernel_name,
        )
        artifacts = Artifacts(
            self.store(),
            root_dir=root,
            sessions_dir=state / "sessions",
            config=config,
            runs_dir=state / "runs",
            replay=Replayer(kernels, config.tool_timeout, config.max_artifact_bytes),
        )
        try:
            who = getpass.getuser()
            result = asyncio.run(artifacts.reproduce(art_id, RunPermissions.full(), who))
        except ResolveError as exc:
            print(f"error: {exc.message}")
            self.exit(2)
        print(json.dumps(result, indent=2, sort_keys=True))
        print(result["summary"])
        self.exit(0 if result["reproduced"] else 1)
