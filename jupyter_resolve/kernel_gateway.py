"""A client of a kernel on a Jupyter gateway (``GatewayClient.url``) that inspection and
accepted cells can use.

jupyter_server's ``GatewayKernelClient`` (2.x) falls short in three ways, worked around here:
its websocket is opened without the gateway's auth header (a gateway with a token answers 401);
its message router stops at the first message of a channel that was not started (the gateway
sends every channel over one socket, so without iopub a shell reply never arrives); and its
queues wait by spinning the event loop (``asyncio.sleep(0)``). Its socket also keeps the launch
timeout for reads, so a quiet minute would end the router.
"""

from __future__ import annotations

import asyncio
import ssl
import threading
import time
from queue import Empty
from typing import Any

import websocket
from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_server.gateway.gateway_client import GatewayClient
from jupyter_server.gateway.managers import (
    ChannelQueue,
    GatewayKernelClient,
    GatewayKernelManager,
)
from jupyter_server.utils import url_path_join
from tornado.escape import url_escape

QUEUE_POLL_SECONDS = 0.005
# every channel a gateway may send on gets a queue, so the router never meets one without
ROUTED_CHANNELS = ("shell", "iopub", "stdin", "control")


class QuietChannelQueue(ChannelQueue):
    """A channel's messages; waiting sleeps between looks, and stopping drops what is left
    (the callers here read only the replies to their own requests)."""

    async def _async_get(self, timeout: float | None = None) -> Any:
        deadline = time.monotonic() + (float("inf") if timeout is None else max(timeout, 0.0))
        while True:
            try:
                return self.get(block=False)
            except Empty:
                if self.response_router_finished:
                    raise RuntimeError("the gateway's websocket closed") from None
                if time.monotonic() >= deadline:
                    raise
            await asyncio.sleep(QUEUE_POLL_SECONDS)

    def stop(self) -> None:
        while not self.empty():
            self.get_nowait()


class AuthorizedGatewayKernelClient(GatewayKernelClient):
    """``GatewayKernelClient`` with the gateway's headers on its websocket, a queue for every
    channel, and no read timeout on the socket."""

    async def start_channels(  # type: ignore[override]  # a coroutine, as upstream's
        self,
        shell: bool = True,
        iopub: bool = True,
        stdin: bool = True,
        hb: bool = True,
        control: bool = True,
    ) -> None:
        gateway = GatewayClient.instance()
        url = url_path_join(
            gateway.ws_url or "", gateway.kernels_endpoint, url_escape(self.kernel_id), "channels"
        )
        # load_connection_args: the configured headers, the auth header (renewed token), cookies
        arguments = gateway.load_connection_args()  # type: ignore[no-untyped-call]
        headers = dict(arguments.get("headers") or {})
        sslopt: dict[str, Any] = {
            "ca_certs": gateway.ca_certs,
            "certfile": gateway.client_cert,
            "keyfile": gateway.client_key,
        }
        if not gateway.validate_cert:
            sslopt["cert_reqs"] = ssl.CERT_NONE
        socket = await asyncio.to_thread(
            websocket.create_connection,
            url,
            header=headers,
            timeout=gateway.KERNEL_LAUNCH_TIMEOUT,
            enable_multithread=True,
            sslopt=sslopt,
        )
        socket.settimeout(None)  # the router waits for as long as the channels are open
        self.channel_socket = socket
        for name in ROUTED_CHANNELS:
            queue = QuietChannelQueue(name, socket, self.log)
            setattr(self, f"_{name}_channel", queue)
            assert self._channel_queues is not None
            self._channel_queues[name] = queue
        AsyncKernelClient.start_channels(
            self, shell=shell, iopub=iopub, stdin=stdin, hb=hb, control=control
        )
        self.response_router = threading.Thread(
            target=self._route_responses, name="resolve-gateway-router", daemon=True
        )
        self.response_router.start()


def is_gateway_kernel(kernel: Any) -> bool:
    return isinstance(kernel, GatewayKernelManager)


def gateway_client(kernel: GatewayKernelManager) -> AuthorizedGatewayKernelClient:
    """A client of ``kernel``, made as ``GatewayKernelManager.client`` makes its own."""
    settings: dict[str, Any] = dict(kernel.get_connection_info(session=True))
    settings.update(connection_file=kernel.connection_file, parent=kernel)
    return AuthorizedGatewayKernelClient(  # type: ignore[no-untyped-call]
        kernel_id=kernel.kernel_id, **settings
    )


async def refreshed_state(kernel: GatewayKernelManager) -> str:
    """The kernel's execution state as the gateway reports it now (the manager's own copy is
    refreshed only when the kernels are listed)."""
    try:
        await kernel.refresh_model()  # type: ignore[no-untyped-call]
    except Exception:  # unreachable for a moment: the last known state
        pass
    return str(getattr(kernel, "execution_state", "idle"))
