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

Kernels on a Jupyter gateway (``GatewayClient.url``) get them as ``KERNEL_RESOLVE_URL`` and
``KERNEL_RESOLVE_TOKEN``: a gateway forwards only ``KERNEL_*`` variables of a start request to
the kernel (and those in its allow-list). The URL is ``c.Resolve.kernel_url`` when set (one the
gateway's kernels can reach), else the server's own. Such a kernel is given only the two
(and whatever its starter passed): the gateway manager adds the server's environment itself and
forwards only what it allows. jupyter_server's gateway kernel manager logs a started kernel's
keyword arguments, environment included, at INFO: the environment it gets is an
:class:`EnvShownByName`, whose ``repr`` (what that log line prints) shows the variables' names,
never a value (the server's environment may hold the hub's API token, a provider key...).
"""

from __future__ import annotations

import logging
import os
from typing import Any

from jupyter_core.utils import ensure_async

from .magics.client import GATEWAY_TOKEN_ENV, GATEWAY_URL_ENV, TOKEN_ENV, URL_ENV


class EnvShownByName(dict[str, str]):
    """A kernel's environment whose ``repr`` and ``str`` show its variables' names only."""

    def __repr__(self) -> str:
        return f"<environment: {', '.join(sorted(self))}>"

    __str__ = __repr__


def kernel_url(serverapp: Any, configured: str = "") -> str:
    """``configured`` (``c.Resolve.kernel_url``) when set, else the server's URL with base_url,
    as a kernel on this machine reaches it."""
    if configured:
        return configured
    ip = serverapp.ip or ""
    host = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "*": "127.0.0.1", "::": "::1"}.get(ip, ip)
    if ":" in host:
        host = f"[{host}]"
    scheme = "https" if serverapp.certfile else "http"
    base_url = "/" + str(serverapp.base_url or "/").strip("/")
    return f"{scheme}://{host}:{serverapp.port}{base_url.rstrip('/')}/"


def connection_env(serverapp: Any, token: str, configured_url: str = "") -> dict[str, str]:
    """The two variables for a kernel of ``serverapp`` (its port is read when a kernel starts:
    final by then, whatever port_retries chose)."""
    return {URL_ENV: kernel_url(serverapp, configured_url), TOKEN_ENV: token}


def gateway_connection_env(serverapp: Any, token: str, configured_url: str = "") -> dict[str, str]:
    """The two variables for a kernel on a Jupyter gateway, named as gateways forward them."""
    return {GATEWAY_URL_ENV: kernel_url(serverapp, configured_url), GATEWAY_TOKEN_ENV: token}


def give_kernels_the_connection(
    serverapp: Any, token: str, log: logging.Logger, configured_url: str = ""
) -> bool:
    """Make the kernels ``serverapp``'s kernel manager starts get the connection (on a Jupyter
    gateway: by the names it forwards); whether they run on a gateway."""
    gateway = getattr(serverapp, "gateway_config", None)
    on_gateway = gateway is not None and bool(gateway.gateway_enabled)
    connection = gateway_connection_env if on_gateway else connection_env
    if on_gateway and not configured_url:
        log.info(
            "jupyter-resolve: kernels run on a Jupyter gateway: %%resolve there reaches this "
            "server at its own address; set c.Resolve.kernel_url to one they can reach"
        )
    manager = serverapp.kernel_manager
    start_kernel = manager.start_kernel

    async def start_kernel_with_connection(*args: Any, **kwargs: Any) -> Any:
        env = kwargs.get("env")
        # env= replaces a local kernel's inherited environment, so it starts from the server's;
        # a gateway's manager adds the server's environment itself (and filters it)
        given = {} if on_gateway else os.environ
        kwargs["env"] = EnvShownByName(
            {**(given if env is None else env), **connection(serverapp, token, configured_url)}
        )
        return await ensure_async(start_kernel(*args, **kwargs))

    manager.start_kernel = start_kernel_with_connection
    return on_gateway
