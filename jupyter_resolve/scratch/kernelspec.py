"""The kernelspec scratch kernels start from (``c.Resolve.scratch_kernel_name``) and whether the
gateway can start it: the kernelspec exists, runs Python, names a provisioner that is installed,
and the sandbox can apply to it.

The sandbox rule: bubblewrap wraps the command of a kernel the gateway launches as a local
process, which a provisioner does when it is jupyter_client's ``LocalProvisioner`` or a subclass
(it builds the command through the kernel manager's ``format_kernel_cmd``). Any other provisioner
starts the kernel elsewhere (a pod, a container, another host) where no prefix of ours can reach:
such a kernelspec is refused while scratch kernels are sandboxed, rather than run unsandboxed
against what the admin asked for, and starts once ``c.Resolve.sandbox = 'none'`` says the
kernel's isolation is its provisioner's.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
from jupyter_client.manager import AsyncKernelManager
from jupyter_client.provisioning.factory import KernelProvisionerFactory
from jupyter_client.provisioning.local_provisioner import LocalProvisioner

from ..contracts.errors import Unavailable

LIST_HINT = "`jupyter kernelspec list` shows the installed ones"


class ScratchKernelUnavailable(Unavailable):
    """The scratch kernel cannot start; the message is for the model and the admin alike."""

    code = "scratch_kernel_unavailable"


@dataclass(frozen=True)
class KernelChoice:
    """What the gateway found for the configured kernelspec."""

    name: str
    provisioner: str = ""
    # launched as a local process from the kernelspec's argv, which bubblewrap can wrap
    local: bool = True
    problem: str | None = None

    def refusal(self, sandbox: str) -> str | None:
        """Why a scratch kernel cannot start from this kernelspec under ``sandbox`` (the
        effective value, ``"bwrap"`` or ``""``), or None."""
        if self.problem is not None:
            return self.problem
        if sandbox == "bwrap" and not self.local:
            return (
                f"scratch kernels: kernelspec {self.name!r} (c.Resolve.scratch_kernel_name) "
                f"starts its kernel through the provisioner {self.provisioner!r}, outside this "
                "machine's sandbox: bubblewrap wraps only kernels launched here. Set "
                "c.Resolve.sandbox = 'none' to run it with its provisioner's isolation, or "
                "choose a kernelspec with the local provisioner."
            )
        return None

    def describe(self, sandbox: str) -> dict[str, Any]:
        """The ``scratch_kernel`` entry of ``/resolve/api/health``."""
        return {
            "kernelspec": self.name,
            "provisioner": self.provisioner or None,
            "local": self.local,
            "problem": self.refusal(sandbox),
        }


def inspect_kernelspec(name: str, specs: KernelSpecManager, log: logging.Logger) -> KernelChoice:
    """Look ``name`` up; a problem is described, never raised."""
    setting = f"kernelspec {name!r} (c.Resolve.scratch_kernel_name)"
    try:
        spec = specs.get_kernel_spec(name)
    except NoSuchKernel:
        return _missing(name, setting, specs)
    except Exception as exc:  # a kernel.json that is not valid JSON, unreadable, ...
        return KernelChoice(
            name, problem=f"scratch kernels: {setting} cannot be read: {type(exc).__name__}: {exc}"
        )
    language = str(spec.language or "")
    if not language.lower().startswith("python"):
        return KernelChoice(
            name,
            problem=f"scratch kernels: {setting} runs {language or 'an unknown language'}; "
            f"scratch kernels need Python with ipykernel; {LIST_HINT}",
        )
    factory = KernelProvisionerFactory.instance()
    provisioner = _provisioner_name(spec, factory)
    try:
        provisioner_class = factory.provisioners[provisioner].load()
    except Exception as exc:
        return KernelChoice(
            name,
            provisioner,
            problem=f"scratch kernels: the provisioner {provisioner!r} of {setting} does not "
            f"load: {type(exc).__name__}: {exc}",
        )
    local = isinstance(provisioner_class, type) and issubclass(provisioner_class, LocalProvisioner)
    log.info(
        "jupyter-resolve: scratch kernels start from kernelspec %r (provisioner %r%s)",
        name,
        provisioner,
        "" if local else ", not local",
    )
    return KernelChoice(name, provisioner, local)


def _provisioner_name(spec: Any, factory: Any) -> str:
    stanza = (spec.metadata or {}).get("kernel_provisioner") or {}
    return str(stanza.get("provisioner_name") or factory.default_provisioner_name)


def _missing(name: str, setting: str, specs: KernelSpecManager) -> KernelChoice:
    """No such kernelspec, or (jupyter_client hides those) one whose provisioner is missing."""
    folder = specs.find_kernel_specs().get(name.lower())
    if folder is not None:
        try:
            spec = specs.kernel_spec_class.from_resource_dir(folder)
        except Exception:  # unreadable: described as missing below
            pass
        else:
            provisioner = _provisioner_name(spec, KernelProvisionerFactory.instance())
            return KernelChoice(
                name,
                provisioner,
                problem=f"scratch kernels: {setting} names the kernel provisioner "
                f"{provisioner!r}, which is not installed in the server's Python environment",
            )
    return KernelChoice(name, problem=f"scratch kernels: there is no {setting}; {LIST_HINT}")


class SandboxedKernelManager(AsyncKernelManager):
    """A kernel manager whose kernel command runs under bubblewrap.

    Interrupts go as ``interrupt_request`` messages: a signal to the process group reaches only
    bwrap outside the sandbox (the kernel is in its own session and PID namespace), and bwrap
    dies of it, taking the kernel and its state along.
    """

    sandbox_prefix: list[str] = []  # noqa: RUF012 (set per instance before start)

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        return [*self.sandbox_prefix, *super().format_kernel_cmd(extra_arguments)]

    async def _async_launch_kernel(self, kernel_cmd: list[str], **kw: Any) -> None:
        # A provisioner that builds its own command (a LocalProvisioner subclass that does not
        # ask format_kernel_cmd) would launch the kernel unsandboxed: refuse that here too.
        if kernel_cmd[: len(self.sandbox_prefix)] != self.sandbox_prefix:
            raise ScratchKernelUnavailable(
                f"scratch kernels: the provisioner of kernelspec {self.kernel_name!r} built the "
                "kernel's command without the bubblewrap prefix; it was not started unsandboxed"
            )
        await super()._async_launch_kernel(kernel_cmd, **kw)
