"""Where promoted bytes come from, read and checked before anything is written: an output of a
saved notebook (read with nbformat), a file of a scratch session's ``work/``, a kernel value's
MIME bundle, a file under the server root, or a tool call's result as its run log records it.

Every refusal is a :class:`~jupyter_resolve.contracts.errors.BadRequest` or ``NotFound``
naming the problem.
"""

from __future__ import annotations

import base64
import binascii
import json
import mimetypes
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ..contracts.errors import BadMediaType, BadRequest, NotFound
from ..contracts.ids import is_id
from ..contracts.pathargs import check_path_text
from .media import normalize_media_type
from .records import Source

# Richest first: the one media type a promoted output keeps.
RICHNESS = ("image/png", "image/svg+xml", "text/html", "application/json", "text/plain")


@dataclass
class Picked:
    """Bytes ready to promote, with their media type and source."""

    data: bytes
    media_type: str
    source: Source


@dataclass
class NotebookOutput(Picked):
    notebook: Any  # the nbformat NotebookNode the output was read from
    path: str  # the notebook's path relative to the server root, with / separators


def inside(root: Path, rel: str, what: str, where: str) -> Path:
    """``root/rel`` resolved, refusing absolute paths, ``..`` and symlinks that leave ``root``."""
    if not rel or rel.startswith("~") or os.path.isabs(rel) or PurePosixPath(rel).is_absolute():
        raise BadRequest(f"{what}: '{rel}' must be a path relative to {where}", code="bad_path")
    try:
        check_path_text(rel)  # NUL, control characters, over-long names: never to the OS
    except ValueError as exc:
        raise BadRequest(f"{what}: {rel[:100]!r} {exc}", code="bad_path") from exc
    if ".." in PurePosixPath(rel.replace("\\", "/")).parts:
        raise BadRequest(f"{what}: '{rel}' leaves {where} ('..' is not allowed)", code="bad_path")
    try:
        base = root.resolve()
        path = (base / rel).resolve()
        if not path.is_relative_to(base):
            raise BadRequest(f"{what}: '{rel}' leaves {where} (through a symlink)", code="bad_path")
        is_file = path.is_file()
    except (OSError, RuntimeError) as exc:  # a symlink loop, a name too long once resolved
        raise BadRequest(
            f"{what}: '{rel}' cannot be read ({getattr(exc, 'strerror', None) or exc})",
            code="bad_path",
        ) from exc
    if not is_file:
        raise NotFound(f"{what}: no file '{rel}' in {where}", code="no_such_file")
    return path


def pick(bundle: Mapping[str, Any], where: str, wanted: str | None = None) -> tuple[str, bytes]:
    """The richest representation of a MIME bundle (or the ``wanted`` one), as bytes (images
    base64-decoded), with its media type normalized (``TEXT/HTML`` is ``text/html``)."""
    by_type: dict[str, Any] = {}
    for key, value in bundle.items():
        try:
            media_type = normalize_media_type(key)
        except BadMediaType as exc:
            if wanted is not None and key == wanted:
                raise BadRequest(f"media_type: {exc}", code="bad_media_type") from exc
            continue  # a key that is no media type is never picked, nor stored
        by_type.setdefault(media_type, value)
    found = ", ".join(sorted(repr(k) if _odd(k) else k for k in bundle)) or "nothing"
    if wanted is not None:
        try:
            media_type = normalize_media_type(wanted)
        except BadMediaType as exc:
            raise BadRequest(f"media_type: {exc}", code="bad_media_type") from exc
        if media_type not in by_type:
            raise BadRequest(
                f"media_type: {where} has no {media_type} (it has {found})",
                code="unsupported_output",
            )
        return media_type, _encode(media_type, by_type[media_type], where)
    for media_type in RICHNESS:
        if media_type in by_type:
            return media_type, _encode(media_type, by_type[media_type], where)
    raise BadRequest(
        f"{where} has none of {', '.join(RICHNESS)} (it has {found})", code="unsupported_output"
    )


def _odd(key: str) -> bool:
    """A key to show quoted in a message (it holds control characters)."""
    return not key.isprintable()


def _encode(media_type: str, value: Any, where: str) -> bytes:
    if media_type == "application/json" or media_type.endswith("+json"):
        return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False).encode()
    text = "".join(value) if isinstance(value, list) else value
    if not isinstance(text, str):
        raise BadRequest(f"{where}: its {media_type} is not text", code="unsupported_output")
    if media_type.startswith("image/") and media_type != "image/svg+xml":
        try:
            return base64.b64decode("".join(text.split()), validate=True)
        except (binascii.Error, ValueError) as exc:
            raise BadRequest(
                f"{where}: its {media_type} is not valid base64", code="unsupported_output"
            ) from exc
    return text.encode()


def check_size(size: int, max_bytes: int, where: str) -> None:
    if size > max_bytes:
        raise BadRequest(
            f"{where} is {size} bytes, over the limit of {max_bytes} "
            "(c.Resolve.max_artifact_bytes)",
            code="too_large",
        )


def read_notebook(path: Path, rel: str) -> Any:
    """A valid nbformat v4 notebook, or a BadRequest saying why not."""
    import nbformat  # here, not at the top: its import is slow and the CLI does not need it

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            notebook = nbformat.read(path, as_version=4)  # type: ignore[no-untyped-call]
            nbformat.validate(notebook)
    except Exception as exc:  # nbformat raises many kinds: all mean "not a notebook"
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise BadRequest(
            f"notebook: '{rel}' is not a valid notebook ({reason[:200]})", code="bad_notebook"
        ) from exc
    return notebook


def notebook_output(
    root: Path, rel: str, cell_id: str, output_index: int, max_bytes: int, live: Any = None
) -> NotebookOutput:
    """Output ``output_index`` of cell ``cell_id`` of the notebook ``rel``: of ``live`` (its
    shared document's content, a dict, while a collaboration room is open) else the saved file."""
    path = inside(root, rel, "notebook", "the server root")
    rel_path = path.relative_to(root.resolve()).as_posix()
    if live is not None:
        import nbformat

        notebook = nbformat.from_dict(live)  # type: ignore[no-untyped-call]
    else:
        notebook = read_notebook(path, rel)
    cells = [c for c in notebook.cells if c.get("id") == cell_id]
    if not cells:
        raise BadRequest(f"cell_id: no cell '{cell_id}' in '{rel_path}'", code="unknown_cell")
    cell = cells[0]
    outputs = cell.get("outputs", []) if cell.cell_type == "code" else []
    if output_index >= len(outputs):
        raise BadRequest(
            f"output_index: cell '{cell_id}' has {len(outputs)} output(s); there is no output "
            f"{output_index}",
            code="unknown_output",
        )
    output = outputs[output_index]
    where = f"output {output_index} of cell '{cell_id}'"
    kind = output.get("output_type")
    if kind == "error":
        raise BadRequest(f"{where} is an error ({output.get('ename')}), not a result")
    bundle = {"text/plain": output.get("text", "")} if kind == "stream" else output.get("data", {})
    media_type, data = pick(bundle, where)
    check_size(len(data), max_bytes, where)
    source = Source(
        kind="notebook",
        notebook=rel_path,
        cell_id=cell_id,
        output_index=output_index,
        execution_count=cell.get("execution_count"),
    )
    return NotebookOutput(data, media_type, source, notebook=notebook, path=rel_path)


def record_artifact_id(notebook: Any, cell_id: str, output_index: int, art_id: str) -> bool:
    """Put ``art_id`` in the output's ``metadata.resolve.artifact_id`` (a stream output has no
    metadata: then the cell's ``metadata.resolve.outputs[index]``). False when already there."""
    cell = next(c for c in notebook.cells if c.get("id") == cell_id)
    output = cell.outputs[output_index]
    if output.get("output_type") == "stream":
        table = cell.metadata.setdefault("resolve", {}).setdefault("outputs", {})
        key = str(output_index)
        if table.get(key) == art_id:
            return False
        table[key] = art_id
        return True
    meta = output.setdefault("metadata", {}).setdefault("resolve", {})
    if meta.get("artifact_id") == art_id:
        return False
    meta["artifact_id"] = art_id
    return True


def scratch_file(sessions: Path, session_id: str, rel: str, max_bytes: int) -> Picked:
    """File ``rel`` of session ``session_id``'s ``work/`` folder."""
    if not is_id(session_id):
        raise BadRequest(f"session_id: '{session_id}' is not a session id", code="bad_session")
    work = sessions / session_id / "work"
    if not work.is_dir():
        raise NotFound(f"session_id: no scratch session '{session_id}'", code="unknown_session")
    where = f"the workspace of session '{session_id}'"
    path = inside(work, rel, "path", where)
    rel_path = path.relative_to(work.resolve()).as_posix()
    check_size(path.stat().st_size, max_bytes, f"'{rel_path}'")
    data = path.read_bytes()
    check_size(len(data), max_bytes, f"'{rel_path}'")
    media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    source = Source(kind="scratch", session_id=session_id, path=rel_path)
    return Picked(data, media_type, source)


def kernel_value(
    bundle: Mapping[str, Any],
    *,
    wanted: str | None,
    label: str | None,
    notebook: str | None,
    cell_id: str | None,
    execution_count: int | None,
    max_bytes: int,
) -> Picked:
    """A kernel value as its MIME bundle (sent by ``%resolve promote``)."""
    where = f"the bundle of {label}" if label else "the bundle"
    media_type, data = pick(bundle, where, wanted)
    check_size(len(data), max_bytes, where)
    source = Source(
        kind="kernel",
        notebook=notebook,
        cell_id=cell_id,
        execution_count=execution_count,
        label=label,
    )
    return Picked(data, media_type, source)


def _tool_results(path: Path, call_id: str) -> list[dict[str, Any]]:
    """The ``tool.completed`` data of ``call_id`` in a run log (one ``{seq, type, data}`` a line,
    DESIGN 3.6), read here rather than through ``runs``, which builds on this package; a torn
    line (a crash mid-write) is skipped."""
    found: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            data = record.get("data") if isinstance(record, dict) else None
            if record.get("type") == "tool.completed" and isinstance(data, dict):
                if data.get("call_id") == call_id:
                    found.append(data)
    return found


def tool_result(
    runs_dir: Path, run_id: str, call_id: str, wanted: str | None, max_bytes: int
) -> Picked:
    """The result of call ``call_id`` of run ``run_id`` as the run log (the record) holds it:
    its display (``mime``: an image, a table) when it has one, else its text output."""
    if not is_id(run_id):
        raise BadRequest(f"run_id: '{run_id}' is not a run id", code="bad_id")
    path = runs_dir / f"{run_id}.jsonl"
    if not path.is_file():
        raise NotFound(f"run_id: no run '{run_id}'", code="unknown_run")
    results = _tool_results(path, call_id)
    if not results:
        raise BadRequest(
            f"call_id: run '{run_id}' has no finished call '{call_id}'", code="unknown_call"
        )
    result = results[-1]
    where = f"the result of call '{call_id}'"
    mime = result.get("mime")
    bundle = mime if isinstance(mime, dict) and mime else {"text/plain": result.get("output", "")}
    media_type, data = pick(bundle, where, wanted)
    check_size(len(data), max_bytes, where)
    return Picked(data, media_type, Source(kind="tool", run_id=run_id, call_id=call_id))


def project_file(root: Path, rel: str, max_bytes: int) -> Picked:
    """A file under the server root."""
    path = inside(root, rel, "file", "the server root")
    rel_path = path.relative_to(root.resolve()).as_posix()
    check_size(path.stat().st_size, max_bytes, f"'{rel_path}'")
    data = path.read_bytes()
    check_size(len(data), max_bytes, f"'{rel_path}'")
    media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return Picked(data, media_type, Source(kind="file", path=rel_path))
