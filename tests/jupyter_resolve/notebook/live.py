"""A user's notebook with a live kernel, started through the server's own API (sessions)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import Server

SETUP = """
import time
import numpy as np
import pandas as pd

df = pd.DataFrame({"height": [1.5, 1.7, 1.8], "species": ["a", "b", "a"]})
arr = np.arange(12, dtype="float64").reshape(3, 4)
x = 3
_private = 1


def helper():
    return 1


class Slow:
    def __repr__(self):
        time.sleep(10_000)
        return "never"


class Stubborn:
    # survives the inspector's own timer (an Exception): only the kernel interrupt stops it
    def __repr__(self):
        while True:
            try:
                time.sleep(10_000)
            except Exception:
                pass


slow = Slow()
stubborn = Stubborn()
"""


def make_notebook(root: Path, name: str = "analysis.ipynb") -> str:
    cell = {
        "cell_type": "code",
        "id": "cell-1",
        "metadata": {},
        "source": "x = 3",
        "outputs": [],
        "execution_count": None,
    }
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (root / name).write_text(json.dumps(notebook))
    return name


async def open_kernel(server: Server, path: str) -> str:
    """A session for ``path`` (as JupyterLab opens a notebook): its kernel id."""
    body = {"path": path, "type": "notebook", "name": path, "kernel": {"name": "python3"}}
    response = await server.post("/api/sessions", body)
    assert response.status_code == 201, response.text
    return str(response.json()["kernel"]["id"])


async def run_in_kernel(serverapp: Any, kernel_id: str, code: str) -> dict[str, Any]:
    """Run ``code`` in the user's kernel as a frontend would; its execute_reply content."""
    client = serverapp.kernel_manager.get_kernel(kernel_id).client()
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=60)
        reply = await client.execute_interactive(code, timeout=60, output_hook=lambda _m: None)
        content: dict[str, Any] = reply["content"]
        assert content["status"] == "ok", content
        return content
    finally:
        client.stop_channels()


async def user_notebook(server: Server, serverapp: Any, root: Path) -> tuple[str, str]:
    """``analysis.ipynb`` with a kernel holding the variables of :data:`SETUP`."""
    path = make_notebook(root)
    kernel_id = await open_kernel(server, path)
    await run_in_kernel(serverapp, kernel_id, SETUP)
    return path, kernel_id
