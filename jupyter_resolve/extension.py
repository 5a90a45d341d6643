"""The Jupyter server extension: wires the gateway into the server's lifecycle and routes.

Importing this module loads only the settings class: the gateway and the handlers load when
the server initializes the extension, so a server (or ``jupyter server --help``) that never
enables it pays nothing for them.

A guest in a server other extensions share: an invalid ``c.Resolve`` setting disables the
extension with one line in the log (health says why) and leaves the server serving; stopping
never raises, whatever state the setup reached; what a server owns (its runtime, the token its
kernels get) stays with that server, never in the process's ``os.environ``.
"""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jupyter_server.extension.application import ExtensionApp
from traitlets import TraitError

from .config import Resolve

if TYPE_CHECKING:
    from .gateway import Gateway


class ResolveExtension(ExtensionApp):
    """jupyter-resolve's server extension (settings live on the ``Resolve`` class)."""

    name = "jupyter_resolve"
    description = "A research workbench inside Jupyter."
    load_other_extensions = True
    classes = [Resolve]  # noqa: RUF012 (traitlets declares it an instance list)
    gateway: Gateway | None = None  # None: not set up (yet, or for good: see disabled)
    disabled: str = ""  # why the extension does not serve, when it does not
    kernel_token: str = ""
    stopped = False

    def initialize_settings(self) -> None:
        from .admin_policy import PolicyError

        try:
            self._make_gateway()
        except PolicyError as exc:  # an administrator's file that cannot be used: fail closed
            self._disable(str(exc))
            return
        except (TraitError, ValueError) as exc:  # traitlets' and pydantic's checks of c.Resolve
            self._disable(f"invalid setting: {' '.join(str(exc).split())}")
            return
        except Exception as exc:  # not a setting's fault: a bug, its traceback wanted
            self._disable(f"setup failed: {type(exc).__name__}: {exc}", exc_info=True)
            return
        from .kernel_env import give_kernels_the_connection

        # Kernels this server starts get both, in their own environment (kernel_env.py); the
        # token is accepted only by the /resolve/api handlers, never by the rest of Jupyter.
        self.kernel_token = secrets.token_urlsafe(32)
        self.settings["resolve_kernel_token"] = self.kernel_token
        assert self.serverapp is not None
        assert self.gateway is not None
        give_kernels_the_connection(
            self.serverapp, self.kernel_token, self.log, self.gateway.config.kernel_url
        )

    def _disable(self, reason: str, exc_info: bool = False) -> None:
        """Serve only the reason (handlers/disabled.py); the server goes on serving."""
        self.gateway = None
        self.disabled = f"jupyter-resolve is disabled: {reason}"
        self.settings["resolve_disabled"] = self.disabled
        self.log.error("%s", self.disabled, exc_info=exc_info)

    def _make_gateway(self) -> None:
        from .admin_policy import enforce_policy
        from .gateway import Gateway
        from .notebook.kernels import UserKernels
        from .runtime import handlers as runtime_handlers

        config = Resolve(parent=self)
        policy = enforce_policy(config, self.log)  # last: the administrator's locks win
        assert self.serverapp is not None
        root = Path(self.serverapp.root_dir).expanduser().resolve()
        self.gateway = Gateway(
            config,
            root_dir=root,
            log=self.log,
            user_kernels=UserKernels(self.serverapp, self.log),
            server_kernels=self.serverapp.kernel_manager,  # scratch kernels on a Jupyter gateway
            policy=policy,
        )
        self.gateway.route_internal(
            runtime_handlers.internal_routes(self.gateway), runtime_handlers.log_request
        )
        self.settings.update(self.gateway.web_settings())
        self._start_audit(config)

    def _start_audit(self, config: Resolve) -> None:
        """Audit events on the server's EventLogger (audit/): runs, approvals, promotions and
        proposals, sent to whatever ``c.EventLogger.handlers`` names."""
        from .audit import Audit, server_user

        event_logger = getattr(self.serverapp, "event_logger", None)
        if event_logger is None or self.gateway is None:
            return
        audit = Audit(
            event_logger,
            user=server_user(),
            content=lambda: config.audit_content,
            log=self.log,
        )
        self.gateway.runs.admitted = audit.watch
        self.gateway.on_promoted.append(audit.promoted)
        self.settings["resolve_audit"] = audit

    def initialize_handlers(self) -> None:
        if self.disabled:
            from .handlers import disabled

            self.handlers.extend(disabled.routes)
            return
        from .handlers.disabled import locked_routes
        from .peer import routes as peer_routes
        from .routes import public_routes

        handlers: list[tuple[Any, ...]] = []
        policy = self.gateway.policy if self.gateway is not None else None
        if policy is not None and policy.feature_off("peer"):  # before the routes they stand for
            peer = [pattern for pattern, _ in peer_routes.routes]
            handlers += locked_routes(peer, policy.off_reason("peer"))
        handlers += public_routes()
        self.handlers.extend(handlers)

    async def _start_jupyter_server_extension(self, serverapp: Any) -> None:
        gateway = self.gateway
        if gateway is None:
            return
        await gateway.start()
        from .startup_gc import freeze_startup_objects, is_real_start

        if self.stopped:
            return  # stopped while it started: not the process's for good
        if gateway.config.freeze_startup_objects and is_real_start(serverapp):
            # the next turn of the loop: after the other extensions' start hooks of this turn
            asyncio.get_running_loop().call_soon(freeze_startup_objects, self.log)

    async def stop_extension(self) -> None:
        """Stop what this server's extension started; never raises (jupyter_server's cleanup of
        kernels, sessions and its HTTP server comes after the extensions' stops)."""
        self.stopped = True
        gateway = self.gateway
        if gateway is None:
            return
        try:
            await gateway.stop()
        except Exception:
            self.log.exception("jupyter-resolve: stopping the gateway failed")
