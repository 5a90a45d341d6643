"""Kernel provisioners for the kernelspec tests, registered under the
``jupyter_client.kernel_provisioners`` entry-point group by a ``*.dist-info`` the tests write
(``register``). Each leaves evidence in the kernel: ``RESOLVE_TEST_PROVISIONER`` in its
environment, set from the kernelspec's provisioner config."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jupyter_client.connect import KernelConnectionInfo
from jupyter_client.provisioning.local_provisioner import LocalProvisioner
from jupyter_client.provisioning.provisioner_base import KernelProvisionerBase
from traitlets import Unicode

EVIDENCE = "RESOLVE_TEST_PROVISIONER"
GROUP = "jupyter_client.kernel_provisioners"


class MarkingProvisioner(LocalProvisioner):
    """The local provisioner, plus a mark in the kernel's environment."""

    marker = Unicode("", config=True)

    async def pre_launch(self, **kwargs: Any) -> dict[str, Any]:
        kwargs = await super().pre_launch(**kwargs)
        kwargs["env"][EVIDENCE] = f"marking:{self.marker}"
        return kwargs


class OwnCommandProvisioner(LocalProvisioner):
    """A local provisioner that builds the kernel's command itself, from the kernelspec's argv,
    not through the kernel manager's ``format_kernel_cmd`` (where the sandbox's prefix goes)."""

    async def pre_launch(self, **kwargs: Any) -> dict[str, Any]:
        kwargs = await super().pre_launch(**kwargs)
        connection_file = str(getattr(self.parent, "connection_file", ""))
        kwargs["cmd"] = [
            a.replace("{connection_file}", connection_file) for a in self.kernel_spec.argv
        ]
        return kwargs


class ForeignProvisioner(KernelProvisionerBase):
    """Not a LocalProvisioner, as gateway_provisioners' are not: it launches the kernel through
    one it holds, the way a remote one launches it through a launcher of its own."""

    marker = Unicode("", config=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.inner = LocalProvisioner(
            kernel_id=self.kernel_id, kernel_spec=self.kernel_spec, parent=self.parent
        )

    @property
    def has_process(self) -> bool:
        return bool(self.inner.has_process)

    async def pre_launch(self, **kwargs: Any) -> dict[str, Any]:
        kwargs = await self.inner.pre_launch(**kwargs)
        kwargs["env"][EVIDENCE] = f"foreign:{self.marker}"
        return kwargs

    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> KernelConnectionInfo:
        info = await self.inner.launch_kernel(cmd, **kwargs)
        self.connection_info = info
        return info

    async def poll(self) -> int | None:
        return await self.inner.poll()

    async def wait(self) -> int | None:
        return await self.inner.wait()

    async def send_signal(self, signum: int) -> None:
        await self.inner.send_signal(signum)

    async def kill(self, restart: bool = False) -> None:
        await self.inner.kill(restart)

    async def terminate(self, restart: bool = False) -> None:
        await self.inner.terminate(restart)

    async def cleanup(self, restart: bool = False) -> None:
        await self.inner.cleanup(restart)


PROVISIONERS = {
    "resolve-test-marking": MarkingProvisioner,
    "resolve-test-foreign": ForeignProvisioner,
    "resolve-test-own-command": OwnCommandProvisioner,
}


def register(folder: Path) -> Path:
    """Write a distribution's metadata declaring the provisioners into ``folder``; put it on
    the import path and importlib.metadata finds their entry points there."""
    info = folder / "resolve_test_provisioners-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: resolve-test-provisioners\nVersion: 0.1\n"
    )
    lines = [f"{name} = {cls.__module__}:{cls.__qualname__}" for name, cls in PROVISIONERS.items()]
    (info / "entry_points.txt").write_text(f"[{GROUP}]\n" + "\n".join(lines) + "\n")
    return folder
