"""The connection a server gives the kernels it starts: ``JUPYTER_RESOLVE_URL`` and
``JUPYTER_RESOLVE_TOKEN`` (DESIGN 2, 5, 8), for ``%resolve``.

They go into each kernel's launch environment through the server's kernel manager, never into
the server's ``os.environ``: a process may host several servers (each with its own URL and
token), and what is in ``os.environ`` any code of the process can read, and log. jupyter_server
has no hook for a kernel's environment other than ``start_kernel(env=...)`` (the sessions
service passes one, the kernels API does not), so the manager's ``start_kernel`` is wrapped on
this server's instance: it adds the two to the environment it was given, or to the server's
own when none was (``env=`` replaces the inherited environment). A restart reuses the launch
environment. Scratch kernels have kernel managers of their own and never get them (DESIGN 5).

Kernels on a Jupyter gateway (``GatewayClient.url``) do not get them: the URL is this
machine's loopback, and the gateway's kernel manager logs a kernel's whole environment.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from jupyter_core.utils import ensure_async

from .magics.client import TOKEN_ENV, URL_ENV


def kernel_url(serverapp: Any) -> str:
    """The server's URL with base_url, as a kernel on this machine reaches it."""
    ip = serverapp.ip or ""
    host = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "*": "127.0.0.1", "::": "::1"}.get(ip, ip)
    if ":" in host:
        host = f"[{host}]"
    scheme = "https" if serverapp.certfile else "http"
    base_url = "/" + str(serverapp.base_url or "/").strip("/")
    return f"{scheme}://{host}:{serverapp.port}{base_url.rstrip('/')}/"


def connection_env(serverapp: Any, token: str) -> dict[str, str]:
    """The two variables for a kernel of ``serverapp`` (its port is read when a kernel starts:
    final by then, whatever port_retries chose)."""
    return {URL_ENV: kernel_url(serverapp), TOKEN_ENV: token}


def give_kernels_the_connection(serverapp: Any, token: str, log: logging.Logger) -> bool:
    """Make the kernels ``serverapp``'s kernel manager starts get the connection; whether it
    did (not for kernels on a Jupyter gateway)."""
    gateway = getattr(serverapp, "gateway_config", None)
    if gateway is not None and gateway.gateway_enabled:
        log.info(
            "jupyter-resolve: kernels run on a Jupyter gateway: they do not get %s and %s "
            "(set them in a kernel to use %%resolve)",
            URL_ENV,
            TOKEN_ENV,
        )
        return False
    manager = serverapp.kernel_manager
    start_kernel = manager.start_kernel

    async def start_kernel_with_connection(*args: Any, **kwargs: Any) -> Any:
        env = kwargs.get("env")
        kwargs["env"] = {
            **(os.environ if env is None else env),
            **connection_env(serverapp, token),
        }
        return await ensure_async(start_kernel(*args, **kwargs))

    manager.start_kernel = start_kernel_with_connection
    return True
