"""Routes of the artifacts API (filled in by its feature)."""

from __future__ import annotations

from typing import Any

routes: list[tuple[str, Any]] = []
