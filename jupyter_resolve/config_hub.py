"""The settings of ``c.Resolve.provider = "hub"``: where the organization's hub service is.

Kept apart from config.py as the model settings are (config_models.py). The user's server
sends the user's own hub API token (``$JUPYTERHUB_API_TOKEN``, which JupyterHub gives every
single-user server) to the service, which holds the provider keys (``jupyter_resolve.hub``).
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from traitlets import Float, Unicode
from traitlets.config import Configurable

DEFAULT_PUBLIC_ORIGIN = "http://127.0.0.1:8000"  # JupyterHub's own default bind_url


class HubSettings(Configurable):
    """Where the hub service is (part of ``c.Resolve``)."""

    hub_service_url = Unicode(
        "",
        config=True,
        help="URL of the organization's hub service (python -m jupyter_resolve.hub) for "
        "c.Resolve.provider = 'hub', ending in '/', e.g. "
        "http://proxy-public/services/resolve/. Empty: the hub's public URL "
        "($JUPYTERHUB_PUBLIC_HUB_URL, set when c.JupyterHub.public_url is; else "
        "http://127.0.0.1:8000) + $JUPYTERHUB_BASE_URL + services/<hub_service_name>/.",
    )
    hub_service_name = Unicode(
        "resolve",
        config=True,
        help="Name of the hub service in c.JupyterHub.services, used to derive "
        "c.Resolve.hub_service_url when that is empty.",
    )

    hub_stream_timeout = Float(
        45.0,
        config=True,
        help="Seconds an answer from the hub service may be silent once it has begun, before "
        "the run ends with an error. The service sends a comment every 15 s of a quiet answer "
        "(c.ResolveHub.keepalive_interval; keep this about three times that), and JupyterHub's "
        "proxy may keep a dead replica's connection open. The wait for the answer's start is "
        "c.Resolve.provider_timeout. 0: no limit but that.",
    )

    def resolved_hub_service_url(self) -> str:
        """The service's URL, ending in '/'."""
        if self.hub_service_url:
            return self.hub_service_url.rstrip("/") + "/"
        public = os.environ.get("JUPYTERHUB_PUBLIC_HUB_URL") or os.environ.get(
            "JUPYTERHUB_PUBLIC_URL", ""
        )
        parts = urlsplit(public)
        origin = f"{parts.scheme}://{parts.netloc}" if parts.netloc else DEFAULT_PUBLIC_ORIGIN
        base = "/" + os.environ.get("JUPYTERHUB_BASE_URL", "/").strip("/")
        return f"{origin}{base.rstrip('/')}/services/{self.hub_service_name}/"

    def hub_api_token(self) -> str | None:
        """This server's own hub API token: the user's, not the organization's key. Left in
        the environment (jupyterhub-singleuser keeps using it)."""
        return os.environ.get("JUPYTERHUB_API_TOKEN") or None
