"""``python -m jupyter_resolve.hub [--config=FILE] [--ResolveHub.NAME=VALUE ...]``."""

from __future__ import annotations

from .app import main

if __name__ == "__main__":
    main()
