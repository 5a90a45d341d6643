"""Notebooks with a live room under real-time collaboration (DESIGN 9.2).

With jupyter-collaboration installed, an open notebook is one shared Yjs document in a room of
the server (``jupyter_server_ydoc``); the room saves it to disk and takes any other write of the
file as out-of-band, overwriting the room with it (what people were typing is lost). So while a
room is live the gateway reads the notebook from the room's document and changes it only there,
in one Yjs transaction: every person sees the change, the room saves it, and their typing stays.
Without jupyter-collaboration, or with no room open for the notebook, nothing here applies and
the saved file is the notebook (nobody else is editing it).
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import PurePosixPath
from typing import Any

from .contracts.errors import BadRequest

YDOC_EXTENSION = "jupyter_server_ydoc"
log = logging.getLogger(__name__)


def _ydoc_extension(serverapp: Any) -> Any | None:
    """jupyter_server_ydoc's extension app when it is loaded, else None."""
    manager = getattr(serverapp, "extension_manager", None)
    if manager is None:
        return None
    try:
        apps = manager.extension_apps.get(YDOC_EXTENSION) or set()
    except Exception:  # a manager from another jupyter_server line: no rooms then
        return None
    return next((app for app in apps if hasattr(app, "get_document")), None)


async def live_notebook(serverapp: Any, path: str) -> Any | None:
    """The live shared document (a ``jupyter_ydoc.YNotebook``) of the notebook at ``path``
    (relative to the server root) when a room for it is open now; None otherwise. A room is
    never opened here: without one, no one is editing the notebook live."""
    extension = _ydoc_extension(serverapp)
    if extension is None:
        return None
    api_path = PurePosixPath(path.replace("\\", "/")).as_posix().lstrip("/")
    try:
        return await extension.get_document(
            path=api_path, content_type="notebook", file_format="json", copy=False
        )
    except Exception as exc:  # the room machinery failing must not hide the saved file
        log.warning("no live room for %s: %s", api_path, exc)
        return None


def plain(value: Any) -> Any:
    """A Yjs value as plain Python (a Map or Array of the shared document, else as it is)."""
    to_py = getattr(value, "to_py", None)
    return to_py() if callable(to_py) else value


def _ycell(document: Any, cell_id: str) -> Any:
    for ycell in document.ycells:
        if ycell.get("id") == cell_id:
            return ycell
    raise BadRequest(f"cell_id: no cell '{cell_id}' in the shared notebook", code="unknown_cell")


def cell_source(document: Any, cell_id: str) -> str | None:
    """The current source of cell ``cell_id`` in the shared document; None without that cell."""
    for ycell in document.ycells:
        if ycell.get("id") == cell_id:
            return str(ycell.get("source", ""))
    return None


def record_artifact_in_room(document: Any, cell_id: str, output_index: int, art_id: str) -> bool:
    """Put ``art_id`` where :func:`~jupyter_resolve.artifacts.sources.record_artifact_id` puts it
    in a file (the output's ``metadata.resolve.artifact_id``, or for a stream the cell's
    ``metadata.resolve.outputs[index]``), in one transaction of the shared document; only those
    keys change, so concurrent edits of any cell's source are kept. False when already there."""
    with document.ydoc.transaction():
        ycell = _ycell(document, cell_id)
        youtputs = ycell.get("outputs")
        if youtputs is None or output_index >= len(youtputs):
            raise BadRequest(f"output_index: cell '{cell_id}' has no output {output_index}")
        youtput = youtputs[output_index]
        output = plain(youtput)
        if output.get("output_type") == "stream":
            ymeta = ycell["metadata"]
            resolve = dict(plain(ymeta.get("resolve")) or {})
            table = dict(resolve.get("outputs") or {})
            if table.get(str(output_index)) == art_id:
                return False
            table[str(output_index)] = art_id
            ymeta["resolve"] = {**resolve, "outputs": table}
            return True
        metadata = dict(output.get("metadata") or {})
        resolve = dict(metadata.get("resolve") or {})
        if resolve.get("artifact_id") == art_id:
            return False
        metadata["resolve"] = {**resolve, "artifact_id": art_id}
        if hasattr(youtput, "to_py"):  # a Y map per output (jupyter_ydoc and JupyterLab 4)
            youtput["metadata"] = metadata
        else:  # an output kept as a plain JSON value: replace it whole
            del youtputs[output_index]
            youtputs.insert(output_index, {**output, "metadata": metadata})
        return True


def source_digest(source: str) -> str:
    """The sha256 of a cell's source (UTF-8), as a client sends it in ``seen.sha256``."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()
